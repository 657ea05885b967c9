package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions across brokers: markers reach partitions other brokers lead through the volume
 * (the controller stream as doorbell), within a latency bound, so this class runs alone
 * ({@code serial-its.txt}). A coordinator killed mid-transaction is {@link TransactionsAcrossBrokersIT}'s.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TransactionsClusterIT {
    /**
     * EndTxn response to marker durable on a partition another broker leads, p99, loopback.
     * Observed as a read_committed consumer would (a Fetch parked at the leader until the marker
     * is stable), after a warm-up. The target is 50 ms, met when this class runs alone on
     * this 2-core VM (p99 26–41 ms over seven runs, 2026-12-01) but not always inside the full
     * suite (57 ms once, on a day the whole suite ran a third slower): the default bound is 100
     * ms, still far below what a polling loop would give; the target itself is
     * {@code -Dkaas.it.marker-p99-bound-ms=50} (src/docs/transactions.md).
     */
    static final long MARKER_P99_BOUND_MS = Long.getLong("kaas.it.marker-p99-bound-ms", 100);
    /** Transactions before the measured ones: the brokers' JIT compilers are still at work on the first few dozen. */
    static final int WARM_UP = 40;
    /** The p99 of 150 is the second slowest. */
    static final int MEASURED = 150;

    @TempDir
    Path tmp;

    static KafkaProducer<String, String> transactional(KaasMultiCluster cluster, String id) {
        Properties p = cluster.clientProps();
        p.put("transactional.id", id);
        p.put("transaction.timeout.ms", "5000");
        p.put("max.block.ms", "30000");
        p.put("delivery.timeout.ms", "30000");
        p.put("request.timeout.ms", "5000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    static List<ConsumerRecord<String, String>> readCommitted(KaasMultiCluster cluster, String topic, int partitions, int atLeast) {
        Properties p = cluster.clientProps();
        p.put("isolation.level", IsolationLevel.READ_COMMITTED.toString().toLowerCase(Locale.ROOT));
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int empty = 0;
            while (System.nanoTime() < deadline && (out.size() < atLeast || empty < 3)) {
                var got = c.poll(Duration.ofMillis(300));
                empty = got.isEmpty() ? empty + 1 : 0;
                got.forEach(out::add);
            }
        }
        return out;
    }

    /**
     * Waits, as a read_committed consumer does, for the record at {@code offset} (the marker) to
     * be readable: a Fetch parked at the leader until the last stable offset passes it. Returns
     * when (System.nanoTime) the answer arrived, or -1 when the leader answered without it.
     */
    static long awaitStable(RawClient leader, TopicPartition tp, long offset) throws Exception {
        FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(5_000).setMinBytes(1).setMaxBytes(1 << 20)
                .setIsolationLevel(IsolationLevel.READ_COMMITTED.id()).setSessionId(0).setSessionEpoch(-1)
                .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(tp.topic()).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(tp.partition()).setFetchOffset(offset)
                                .setPartitionMaxBytes(1 << 20).setLogStartOffset(-1).setCurrentLeaderEpoch(-1)))));
        FetchResponse response = (FetchResponse) leader.send(ApiKeys.FETCH, (short) 11, request);
        long arrived = System.nanoTime();
        var answer = response.data().responses().get(0).partitions().get(0);
        assertThat(Errors.forCode(answer.errorCode())).isEqualTo(Errors.NONE);
        return answer.lastStableOffset() > offset && lso(leader, tp) > offset ? arrived : -1;
    }

    /** The partition's last stable offset, asked of its leader directly. */
    static long lso(RawClient leader, TopicPartition tp) throws Exception {
        ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(-1).setIsolationLevel(IsolationLevel.READ_COMMITTED.id())
                .setTopics(List.of(new ListOffsetsTopic().setName(tp.topic()).setPartitions(List.of(
                        new ListOffsetsPartition().setPartitionIndex(tp.partition()).setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))));
        ListOffsetsResponse response = (ListOffsetsResponse) leader.send(ApiKeys.LIST_OFFSETS, (short) 7, request);
        ListOffsetsPartitionResponse answer = response.data().topics().get(0).partitions().get(0);
        assertThat(Errors.forCode(answer.errorCode())).isEqualTo(Errors.NONE);
        return answer.offset();
    }

    static long lso(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(tp).get(10, TimeUnit.SECONDS).offset();
    }

    @Test
    void markersReachPartitionsOtherBrokersLeadWithinTheLatencyBound() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            String topic = "txn-across";
            admin.createTopics(List.of(new NewTopic(topic, 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Map<Integer, Integer> leaders = ClusterIT.awaitLeaders(admin, topic, l -> l.size() == 6 && !l.containsValue(-1));
            String id = "tx-across";
            try (KafkaProducer<String, String> producer = transactional(cluster, id)) {
                producer.initTransactions();
                int coordinator = admin.describeTransactions(List.of(id)).description(id).get(10, TimeUnit.SECONDS).coordinatorId();
                int remote = leaders.entrySet().stream().filter(e -> e.getValue() != coordinator).mapToInt(Map.Entry::getKey)
                        .findFirst().orElseThrow();
                TopicPartition far = new TopicPartition(topic, remote);
                // Watched over one connection to its leader: a look is one round trip (Admin.listOffsets
                // adds a metadata lookup and its own thread's scheduling to each, tens of ms on this VM).
                RawClient toLeader = new RawClient(cluster.kafkaPort(leaders.get(remote)));

                List<Long> latencies = new ArrayList<>();
                int commits = 0;
                for (int t = 0; t < WARM_UP + MEASURED; t++) {
                    producer.beginTransaction();
                    for (int p = 0; p < 6; p++) {
                        producer.send(new ProducerRecord<>(topic, p, "k", "t" + t + "-p" + p));
                    }
                    producer.flush();
                    // Everything sent is durable now; the marker will be the next offset there.
                    long end = admin.listOffsets(Map.of(far, OffsetSpec.latest())).partitionResult(far).get(10, TimeUnit.SECONDS).offset();
                    boolean commit = t % 3 != 2;
                    if (commit) {
                        commits++;
                        producer.commitTransaction();
                    } else {
                        producer.abortTransaction();
                    }
                    long answered = System.nanoTime();
                    long deadline = answered + TimeUnit.SECONDS.toNanos(10);
                    long seen = -1;
                    while (seen < 0 && System.nanoTime() < deadline) {
                        seen = awaitStable(toLeader, far, end);
                    }
                    assertThat(seen).as("marker of transaction %d stable at offset %d", t, end).isPositive();
                    if (t >= WARM_UP) {
                        latencies.add(TimeUnit.NANOSECONDS.toMillis(seen - answered));
                    }
                }
                toLeader.close();
                List<Long> sorted = latencies.stream().sorted().toList();
                long p50 = sorted.get(sorted.size() / 2);
                long p99 = sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
                System.out.printf("EndTxn answered -> marker durable on partition %s (leader %d, coordinator %d): p50 %d ms, p99 %d ms, max %d ms%n",
                        far, leaders.get(remote), coordinator, p50, p99, sorted.get(sorted.size() - 1));
                assertThat(p99).as("p99 marker latency across brokers").isLessThanOrEqualTo(MARKER_P99_BOUND_MS);

                List<ConsumerRecord<String, String>> seen = readCommitted(cluster, topic, 6, 6 * commits);
                assertThat(seen).hasSize(6 * commits);
                assertThat(seen).allSatisfy(r -> {
                    int t = Integer.parseInt(r.value().substring(1, r.value().indexOf('-')));
                    assertThat(t % 3).as("aborted transaction %d seen", t).isNotEqualTo(2);
                });
            }
        }
    }
}
