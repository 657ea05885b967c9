package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Apache Kafka 3.7.2's {@code kafka-transactions.sh} ({@code TransactionsCommand}, in a child JVM as
 * {@link ShellTools} runs every Apache tool) against a real standalone kaas: list, describe,
 * describe-producers, find-hanging and abort, the last two on a genuinely hanging transaction.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TransactionsToolIT {
    static final int BROKER_ID = 1;

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.transaction.partition-verification-enable", "false"));

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static ShellTools.Result txns(String... args) throws Exception {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = cluster.bootstrap();
        System.arraycopy(args, 0, all, 2, args.length);
        return ShellTools.run("org.apache.kafka.tools.TransactionsCommand", null, all);
    }

    /** A successful run's table: the header row first, every cell trimmed (the tool pads cells and ends each with a tab). */
    static List<List<String>> table(ShellTools.Result r) {
        assertThat(r.exitCode()).as("exit code; stdout: %s; stderr: %s", r.stdout(), r.stderr()).isZero();
        return r.stdout().lines().filter(l -> !l.isBlank())
                .map(l -> Arrays.stream(l.split("\t")).map(String::trim).toList()).toList();
    }

    /** The rows after the header whose first column is {@code key}. */
    static List<List<String>> rows(List<List<String>> table, String key) {
        return table.stream().skip(1).filter(row -> row.get(0).equals(key)).toList();
    }

    static void createTopic(String topic) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    static KafkaProducer<String, String> producer(String transactionalId) {
        Properties p = cluster.clientProps();
        p.put("acks", "all");
        if (transactionalId != null) {
            p.put("transactional.id", transactionalId);
        }
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    static long lastStableOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
    }

    static long highWatermark(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
    }

    /** The values readable under {@code isolation} from the beginning, until nothing new arrives for a while (bounded). */
    static List<String> read(TopicPartition tp, IsolationLevel isolation, int atLeast) {
        Properties p = cluster.clientProps();
        p.put("isolation.level", isolation.toString().toLowerCase(java.util.Locale.ROOT));
        p.put("enable.auto.commit", "false");
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int emptyPolls = 0;
            while (System.nanoTime() < deadline && (out.size() < atLeast || emptyPolls < 3)) {
                var got = c.poll(Duration.ofMillis(300));
                emptyPolls = got.isEmpty() ? emptyPolls + 1 : 0;
                for (ConsumerRecord<String, String> r : got) {
                    out.add(r.value());
                }
            }
        }
        return out;
    }

    @Test
    void listAndDescribeFollowAJavaProducersTransaction() throws Exception {
        String topic = "tool-txn";
        createTopic(topic);
        try (KafkaProducer<String, String> producer = producer("tool-tx")) {
            producer.initTransactions();
            List<String> empty = table(txns("describe", "--transactional-id", "tool-tx")).get(1);
            assertThat(empty.get(4)).isEqualTo("Empty");
            assertThat(empty.get(6)).as("no transaction started yet").isEqualTo("None");
            assertThat(empty.get(7)).isEqualTo("None");
            assertThat(empty.get(8)).isEmpty();

            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "v")).get(30, TimeUnit.SECONDS);

            var list = table(txns("list"));
            assertThat(list.get(0)).containsExactly("TransactionalId", "Coordinator", "ProducerId", "TransactionState");
            List<List<String>> listed = rows(list, "tool-tx");
            assertThat(listed).hasSize(1);
            assertThat(listed.get(0).get(1)).isEqualTo(Integer.toString(BROKER_ID));
            assertThat(listed.get(0).get(3)).isEqualTo("Ongoing");
            String producerId = listed.get(0).get(2);
            assertThat(Long.parseLong(producerId)).isNotNegative();

            var describe = table(txns("describe", "--transactional-id", "tool-tx"));
            assertThat(describe.get(0)).containsExactly("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                    "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions");
            assertThat(describe).hasSize(2);
            List<String> d = describe.get(1);
            assertThat(d.get(0)).isEqualTo(Integer.toString(BROKER_ID));
            assertThat(d.get(1)).isEqualTo("tool-tx");
            assertThat(d.get(2)).isEqualTo(producerId);
            assertThat(Short.parseShort(d.get(3))).isNotNegative();
            assertThat(d.get(4)).isEqualTo("Ongoing");
            assertThat(d.get(5)).isEqualTo("60000");
            assertThat(Long.parseLong(d.get(6))).isPositive().isLessThanOrEqualTo(System.currentTimeMillis());
            assertThat(Long.parseLong(d.get(7))).isNotNegative();
            assertThat(d.get(8)).isEqualTo(topic + "-0");

            var producers = table(txns("describe-producers", "--topic", topic, "--partition", "0"));
            assertThat(producers.get(0)).containsExactly("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                    "LastTimestamp", "CurrentTransactionStartOffset");
            List<List<String>> mine = rows(producers, producerId);
            assertThat(mine).hasSize(1);
            assertThat(mine.get(0).get(1)).isEqualTo(d.get(3));
            assertThat(mine.get(0).get(3)).isEqualTo("0");
            assertThat(mine.get(0).get(5)).isEqualTo("0");

            // Open, and older than a zero timeout, but its coordinator lists the partition: not hanging.
            var none = table(txns("find-hanging", "--topic", topic, "--max-transaction-timeout", "0"));
            assertThat(none).hasSize(1);
            assertThat(none.get(0)).startsWith("Topic", "Partition", "ProducerId");

            producer.commitTransaction();
            // Markers follow EndTxn asynchronously (as in Apache): wait for the commit to complete before the tools look.
            try (Admin admin = Admin.create(cluster.clientProps())) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin.describeTransactions(List.of("tool-tx"))
                        .description("tool-tx").get(30, TimeUnit.SECONDS).state())
                        .isEqualTo(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT));
            }

            var after = table(txns("describe", "--transactional-id", "tool-tx"));
            assertThat(after.get(1).get(4)).isEqualTo("CompleteCommit");
            assertThat(after.get(1).get(6)).as("as Apache, the last transaction's start time stays").isEqualTo(d.get(6));
            assertThat(after.get(1).get(8)).as("no partitions left").isEmpty();
            assertThat(rows(table(txns("list")), "tool-tx").get(0).get(3)).isEqualTo("CompleteCommit");
            List<String> closed = rows(table(txns("describe-producers", "--topic", topic, "--partition", "0")), producerId).get(0);
            assertThat(closed.get(5)).isEqualTo("None");
            assertThat(Integer.parseInt(closed.get(2))).as("a marker was written").isNotNegative();
        }

        var unknown = txns("describe", "--transactional-id", "no-such-tx");
        assertThat(unknown.exitCode()).isNotZero();
        assertThat(unknown.stderr()).contains("Failed to describe transaction state of transactional-id `no-such-tx`");
    }

    @Test
    void findHangingReportsATransactionNoCoordinatorOwnsAndAbortEndsIt() throws Exception {
        String topic = "hanging";
        createTopic(topic);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> plain = producer(null)) {
            plain.send(new ProducerRecord<>(topic, 0, "k", "before")).get(30, TimeUnit.SECONDS);
        }

        // A fresh idempotent producer id (InitProducerId without a transactional id) writes a
        // transactional batch. With KIP-890 verification off (this class's broker runs with
        // partition-verification-enable=false, as Apache with transaction.partition.verification.enable=false;
        // TransactionsIT shows the same write refused with it on), it opens a transaction on the
        // partition that no coordinator knows, so none will ever end it.
        long hangingTimestamp = System.currentTimeMillis() - TimeUnit.MINUTES.toMillis(30);
        long pid;
        short epoch;
        try (RawClient raw = new RawClient(cluster.kafkaPort())) {
            var init = (InitProducerIdResponse) raw.send(ApiKeys.INIT_PRODUCER_ID, (short) 4, new InitProducerIdRequestData()
                    .setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short) -1));
            assertThat(init.error()).isEqualTo(Errors.NONE);
            pid = init.data().producerId();
            epoch = init.data().producerEpoch();
            MemoryRecords records = MemoryRecords.withTransactionalRecords(CompressionType.NONE, pid, epoch, 0,
                    new SimpleRecord(hangingTimestamp, "k".getBytes(), "hanging-1".getBytes()),
                    new SimpleRecord(hangingTimestamp, "k".getBytes(), "hanging-2".getBytes()));
            var topicData = new ProduceRequestData.TopicProduceDataCollection();
            topicData.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
            var produced = (ProduceResponse) raw.send(ApiKeys.PRODUCE, (short) 9, new ProduceRequestData()
                    .setTransactionalId("never-initialised").setAcks((short) -1).setTimeoutMs(30_000).setTopicData(topicData));
            var partition = produced.data().responses().find(topic).partitionResponses().get(0);
            assertThat(Errors.forCode(partition.errorCode())).isEqualTo(Errors.NONE);
            assertThat(partition.baseOffset()).isEqualTo(1);
        }
        String hangingPid = Long.toString(pid);

        try (Admin admin = Admin.create(cluster.clientProps());
             KafkaProducer<String, String> later = producer("after-hang")) {
            later.initTransactions();
            later.beginTransaction();
            later.send(new ProducerRecord<>(topic, 0, "k", "later")).get(30, TimeUnit.SECONDS);
            long laterPid = Long.parseLong(rows(table(txns("list")), "after-hang").get(0).get(2));

            var producers = table(txns("describe-producers", "--topic", topic, "--partition", "0"));
            List<List<String>> hanging = rows(producers, hangingPid);
            assertThat(hanging).as(producers.toString()).hasSize(1);
            assertThat(hanging.get(0)).containsExactly(hangingPid, Short.toString(epoch), "-1", "1", Long.toString(hangingTimestamp), "1");
            assertThat(rows(producers, Long.toString(laterPid)).get(0).get(5)).isEqualTo("3");

            // Both transactions are older than a zero timeout; the coordinator vouches for the Java producer's only.
            var candidates = table(txns("find-hanging", "--topic", topic, "--max-transaction-timeout", "0"));
            assertThat(candidates.get(0)).containsExactly("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                    "StartOffset", "LastTimestamp", "Duration(min)");
            assertThat(candidates).hasSize(2);
            assertThat(candidates.get(1).subList(0, 7))
                    .containsExactly(topic, "0", hangingPid, Short.toString(epoch), "-1", "1", Long.toString(hangingTimestamp));
            later.commitTransaction();
        }

        // By broker, with the default 15-minute bound: the 30-minute-old transaction is reported.
        var byBroker = table(txns("find-hanging", "--broker-id", Integer.toString(BROKER_ID)));
        assertThat(byBroker).as(byBroker.toString()).hasSize(2);
        List<String> found = byBroker.get(1);
        assertThat(found.subList(0, 7)).containsExactly(topic, "0", hangingPid, Short.toString(epoch), "-1", "1", Long.toString(hangingTimestamp));
        assertThat(Long.parseLong(found.get(7))).isBetween(30L, 40L);

        try (Admin admin = Admin.create(cluster.clientProps())) {
            assertThat(highWatermark(admin, tp)).isEqualTo(5);
            assertThat(lastStableOffset(admin, tp)).as("read_committed is held below the hanging transaction").isEqualTo(1);
            assertThat(read(tp, IsolationLevel.READ_COMMITTED, 1)).containsExactly("before");
            assertThat(read(tp, IsolationLevel.READ_UNCOMMITTED, 4)).containsExactly("before", "hanging-1", "hanging-2", "later");

            var wrongOffset = txns("abort", "--topic", topic, "--partition", "0", "--start-offset", "2");
            assertThat(wrongOffset.exitCode()).isNotZero();
            assertThat(wrongOffset.stderr()).contains("Could not find any open transactions starting at offset 2 on partition " + topic + "-0");
            assertThat(lastStableOffset(admin, tp)).isEqualTo(1);

            var abort = txns("abort", "--topic", topic, "--partition", "0", "--start-offset", "1");
            assertThat(abort.exitCode()).as("stdout: %s; stderr: %s", abort.stdout(), abort.stderr()).isZero();

            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(lastStableOffset(admin, tp)).isEqualTo(6));
            assertThat(highWatermark(admin, tp)).as("the abort marker").isEqualTo(6);
            assertThat(read(tp, IsolationLevel.READ_COMMITTED, 2)).containsExactly("before", "later");
        }

        List<String> ended = rows(table(txns("describe-producers", "--topic", topic, "--partition", "0")), hangingPid).get(0);
        assertThat(ended.get(5)).isEqualTo("None");
        assertThat(ended.get(2)).as("the tool aborts with coordinator epoch 0 for a producer no marker has reached").isEqualTo("0");
        assertThat(table(txns("find-hanging", "--broker-id", Integer.toString(BROKER_ID), "--max-transaction-timeout", "0"))).hasSize(1);
        var again = txns("abort", "--topic", topic, "--partition", "0", "--start-offset", "1");
        assertThat(again.exitCode()).isNotZero();
        assertThat(again.stderr()).contains("Could not find any open transactions starting at offset 1");
    }
}
