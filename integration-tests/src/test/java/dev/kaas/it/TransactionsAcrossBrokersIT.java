package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions whose coordinator is not the partitions' leader: a leader verifies a write with the
 * coordinator on another broker (KIP-890, through the volume), and a coordinator killed
 * mid-transaction never leaves a transaction half committed. No assertion here bounds how long
 * anything takes, so these run beside other classes; the marker latency bound is
 * {@link TransactionsClusterIT}'s.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TransactionsAcrossBrokersIT {
    @TempDir
    Path tmp;

    /**
     * KIP-890 across brokers: the partition's leader is not the transaction's coordinator, so it
     * asks through the volume queue. A write outside the transaction is refused, one inside it
     * goes through, and a write that arrives after its transaction was aborted opens nothing
     * (the coordinator refuses it; the race with the marker itself is TransactionalLogTest's).
     */
    @Test
    void aLeaderVerifiesWithTheCoordinatorOnAnotherBroker() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            String topic = "txn-verify-across";
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Map<Integer, Integer> leaders = ClusterIT.awaitLeaders(admin, topic, l -> l.size() == 3 && !l.containsValue(-1));
            String id = "tx-verify-across";
            int coordinator;
            try (RawClient any = new RawClient(cluster.kafkaPort(1))) {
                var found = (FindCoordinatorResponse) any.send(
                        ApiKeys.FIND_COORDINATOR, (short) 4,
                        new org.apache.kafka.common.message.FindCoordinatorRequestData().setKeyType((byte) 1).setCoordinatorKeys(List.of(id)));
                coordinator = found.data().coordinators().get(0).nodeId();
            }
            int partition = leaders.entrySet().stream().filter(e -> e.getValue() != coordinator).mapToInt(Map.Entry::getKey)
                    .findFirst().orElseThrow();
            TopicPartition tp = new TopicPartition(topic, partition);
            try (RawClient coord = new RawClient(cluster.kafkaPort(coordinator));
                 RawClient leader = new RawClient(cluster.kafkaPort(leaders.get(partition)))) {
                TxnWire tx = TxnWire.init(coord, id);
                assertThat(tx.produce(leader, tp, "before-add")).isEqualTo(Errors.INVALID_TXN_STATE);
                assertThat(tx.addPartition(coord, tp)).isEqualTo(Errors.NONE);
                assertThat(tx.produce(leader, tp, "in")).isEqualTo(Errors.NONE);
                assertThat(tx.endTxn(coord, false)).isEqualTo(Errors.NONE);
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.describeTransactions(List.of(id))
                        .description(id).get(10, TimeUnit.SECONDS).state() == TransactionState.COMPLETE_ABORT);

                assertThat(tx.produce(leader, tp, "late")).isEqualTo(Errors.INVALID_TXN_STATE);
                long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS).offset();
                assertThat(hw).as("the aborted write and its marker").isEqualTo(2);
                assertThat(TransactionsClusterIT.lso(admin, tp)).as("no hanging transaction").isEqualTo(hw);

                // What the verification costs a transaction's first write there (it includes the write's own fsync).
                List<Long> firstWrites = new ArrayList<>();
                for (int t = 0; t < 20; t++) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    Errors added;
                    while ((added = tx.addPartition(coord, tp)) == Errors.CONCURRENT_TRANSACTIONS && System.nanoTime() < deadline) {
                        Thread.sleep(5);
                    }
                    assertThat(added).isEqualTo(Errors.NONE);
                    long started = System.nanoTime();
                    assertThat(tx.produce(leader, tp, "t" + t)).isEqualTo(Errors.NONE);
                    firstWrites.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                    assertThat(tx.endTxn(coord, true)).isEqualTo(Errors.NONE);
                }
                List<Long> sorted = firstWrites.stream().sorted().toList();
                System.out.printf("first transactional write on %s (leader %d, coordinator %d), verified through the volume: p50 %d ms, max %d ms%n",
                        tp, leaders.get(partition), coordinator, sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
            }
        }
    }

    /**
     * Kill -9 of the broker holding the transaction's coordinator slot, once before EndTxn and once
     * right after it: the slot's next owner aborts the first on its timeout and finishes the
     * second's markers, so read_committed consumers see each transaction whole or not at all.
     */
    @Test
    void killingTheCoordinatorMidTransactionNeverExposesPartOfIt() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            String topic = "txn-coordinator-kill";
            admin.createTopics(List.of(new NewTopic(topic, 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
            ClusterIT.awaitLeaders(admin, topic, l -> l.size() == 6 && !l.containsValue(-1));

            for (String phase : List.of("before-commit", "after-commit")) {
                String id = "tx-kill-" + phase;
                KafkaProducer<String, String> producer = TransactionsClusterIT.transactional(cluster, id);
                try {
                    producer.initTransactions();
                    int coordinator = admin.describeTransactions(List.of(id)).description(id).get(10, TimeUnit.SECONDS).coordinatorId();
                    producer.beginTransaction();
                    for (int i = 0; i < 60; i++) {
                        producer.send(new ProducerRecord<>(topic, i % 6, phase, phase + "-" + i));
                    }
                    producer.flush();
                    if (phase.equals("after-commit")) {
                        producer.commitTransaction();
                    }
                    cluster.killBroker(coordinator);
                    System.out.printf("killed broker %d, the coordinator of %s (%s)%n", coordinator, id, phase);
                    cluster.startBroker(coordinator);
                    cluster.awaitBrokerReady(coordinator);
                } finally {
                    producer.close(Duration.ZERO);
                }
            }
            // Both transactions end (one by timeout, one by the resent markers): every partition becomes stable.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            for (int p = 0; p < 6; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                while (true) {
                    long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS).offset();
                    if (TransactionsClusterIT.lso(admin, tp) == end) {
                        break;
                    }
                    assertThat(System.nanoTime()).as("partition %s never became stable", tp).isLessThan(deadline);
                    Thread.sleep(100);
                }
            }
            List<ConsumerRecord<String, String>> seen = TransactionsClusterIT.readCommitted(cluster, topic, 6, 60);
            Map<String, Long> perPhase = new HashMap<>();
            seen.forEach(r -> perPhase.merge(r.key(), 1L, Long::sum));
            System.out.printf("read_committed after the kills: %s%n", perPhase);
            assertThat(perPhase.getOrDefault("before-commit", 0L)).as("never committed: all or nothing").isIn(0L, 60L);
            assertThat(perPhase.getOrDefault("after-commit", 0L)).as("committed before the kill: whole").isEqualTo(60L);
        }
    }
}
