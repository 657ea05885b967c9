package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Transactions with the Java 3.7.2 clients against a real standalone kaas (KIP-98, KIP-447). */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TransactionsIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.transaction.abort-timed-out-interval", "500ms"));

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static KafkaProducer<String, String> transactional(String id, Map<String, Object> extra) {
        Properties p = cluster.clientProps();
        p.put("transactional.id", id);
        p.putAll(extra);
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> consumer(IsolationLevel isolation, String group) {
        Properties p = cluster.clientProps();
        p.put("isolation.level", isolation.toString().toLowerCase(java.util.Locale.ROOT));
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (group != null) {
            p.put("group.id", group);
        }
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Everything readable under {@code isolation}, waiting until no new record arrives for a while (bounded). */
    static List<ConsumerRecord<String, String>> readAll(String topic, int partitions, IsolationLevel isolation, int atLeast) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = consumer(isolation, null)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int emptyPolls = 0;
            while (System.nanoTime() < deadline && (out.size() < atLeast || emptyPolls < 3)) {
                var got = c.poll(Duration.ofMillis(300));
                emptyPolls = got.isEmpty() ? emptyPolls + 1 : 0;
                got.forEach(out::add);
            }
        }
        return out;
    }

    static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).toList();
    }

    @Test
    void readCommittedSeesExactlyTheCommittedTransactionsAcrossPartitions() throws Exception {
        String topic = "txn-commit-abort";
        createTopic(topic, 3);
        try (KafkaProducer<String, String> producer = transactional("tx-commit-abort", Map.of())) {
            producer.initTransactions();
            for (int t = 0; t < 6; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 30; i++) {
                    producer.send(new ProducerRecord<>(topic, i % 3, "k" + i, "t" + t + "-" + i));
                }
                // Written before the abort: an abort drops what the producer has not sent yet.
                producer.flush();
                if (t % 2 == 0) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
        List<ConsumerRecord<String, String>> committed = readAll(topic, 3, IsolationLevel.READ_COMMITTED, 90);
        List<ConsumerRecord<String, String>> all = readAll(topic, 3, IsolationLevel.READ_UNCOMMITTED, 180);

        assertThat(values(committed)).hasSize(90).allMatch(v -> v.startsWith("t0-") || v.startsWith("t2-") || v.startsWith("t4-"));
        assertThat(values(all)).hasSize(180);
        for (int p = 0; p < 3; p++) {
            int partition = p;
            List<String> inOrder = committed.stream().filter(r -> r.partition() == partition).map(ConsumerRecord::value).toList();
            List<String> expected = new ArrayList<>();
            for (int t = 0; t < 6; t += 2) {
                for (int i = partition; i < 30; i += 3) {
                    expected.add("t" + t + "-" + i);
                }
            }
            assertThat(inOrder).as("partition %d in order", p).containsExactlyElementsOf(expected);
        }
    }

    static long offset(Admin admin, TopicPartition tp, IsolationLevel isolation) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(tp)
                .get(10, TimeUnit.SECONDS).offset();
    }

    /**
     * KIP-890 part 1, as Apache 3.7 with {@code transaction.partition.verification.enable=true}: a
     * transactional write opens a transaction on a partition only when the coordinator has the
     * partition in the producer's ongoing transaction. Everything refused writes nothing and holds
     * no LSO. Fails if the produce or offset path stops asking the coordinator. (The race where
     * the abort marker lands while a verification is in flight is TransactionalLogTest's and
     * GroupOffsetsTest's: over the wire, the late write here is refused by the coordinator.)
     */
    @Test
    void transactionalWritesOutsideTheirTransactionAreRefusedAndHoldNoLso() throws Exception {
        String topic = "txn-verify";
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (RawClient raw = new RawClient(cluster.kafkaPort()); Admin admin = Admin.create(cluster.clientProps())) {
            TxnWire tx = TxnWire.init(raw, "tx-verify");
            assertThat(tx.produce(raw, tp, "before-add")).as("not added to the transaction").isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(tx.produce(raw, tp, null, tx.epoch, "no-id")).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            assertThat(tx.produce(raw, tp, "tx-never-initialised", tx.epoch, "other-id")).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
            assertThat(tx.produce(raw, tp, tx.transactionalId, (short) (tx.epoch + 1), "forged-epoch")).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
            assertThat(offset(admin, tp, IsolationLevel.READ_UNCOMMITTED)).as("nothing written").isZero();

            // Added: the write opens the transaction here.
            assertThat(tx.addPartition(raw, tp)).isEqualTo(Errors.NONE);
            assertThat(tx.produce(raw, tp, "in")).isEqualTo(Errors.NONE);
            assertThat(offset(admin, tp, IsolationLevel.READ_COMMITTED)).isZero();
            assertThat(tx.endTxn(raw, false)).isEqualTo(Errors.NONE);
            // The abort is complete once its marker is durable (a write while it is still finishing would be told to retry).
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.describeTransactions(List.of(tx.transactionalId))
                    .description(tx.transactionalId).get(10, TimeUnit.SECONDS).state() == TransactionState.COMPLETE_ABORT);
            assertThat(offset(admin, tp, IsolationLevel.READ_COMMITTED)).isEqualTo(2);

            // KAFKA-14402's outcome: a write of the aborted transaction that arrives after its abort opens nothing.
            assertThat(tx.produce(raw, tp, "late")).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(offset(admin, tp, IsolationLevel.READ_UNCOMMITTED)).isEqualTo(2);
            assertThat(offset(admin, tp, IsolationLevel.READ_COMMITTED)).as("no hanging transaction").isEqualTo(2);
            assertThat(admin.describeProducers(List.of(tp)).partitionResult(tp).get(10, TimeUnit.SECONDS).activeProducers())
                    .allSatisfy(p -> assertThat(p.currentTransactionStartOffset()).isEmpty());

            // Offsets too: TxnOffsetCommit needs AddOffsetsToTxn first.
            String group = "verify-group";
            assertThat(tx.addPartition(raw, tp)).isEqualTo(Errors.NONE);
            assertThat(tx.commitOffset(raw, group, tp, 1)).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(tx.addOffsets(raw, group)).isEqualTo(Errors.NONE);
            assertThat(tx.commitOffset(raw, group, tp, 1)).isEqualTo(Errors.NONE);
            assertThat(tx.produce(raw, tp, "committed")).isEqualTo(Errors.NONE);
            assertThat(tx.endTxn(raw, true)).isEqualTo(Errors.NONE);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.describeTransactions(List.of(tx.transactionalId))
                    .description(tx.transactionalId).get(10, TimeUnit.SECONDS).state() == TransactionState.COMPLETE_COMMIT);
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS).get(tp).offset())
                    .isEqualTo(1);
            assertThat(tx.commitOffset(raw, group, tp, 2)).as("after the commit").isEqualTo(Errors.INVALID_TXN_STATE);
        }
        assertThat(values(readAll(topic, 1, IsolationLevel.READ_COMMITTED, 1))).containsExactly("committed");
    }

    @Test
    void theLastStableOffsetStopsAtAnOpenTransaction() throws Exception {
        String topic = "txn-lso";
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer());
             KafkaProducer<String, String> producer = transactional("tx-lso", Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            plain.send(new ProducerRecord<>(topic, 0, "a", "before")).get(30, TimeUnit.SECONDS);
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "b", "open-1")).get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(topic, 0, "c", "open-2")).get(30, TimeUnit.SECONDS);
            plain.send(new ProducerRecord<>(topic, 0, "d", "after")).get(30, TimeUnit.SECONDS);

            long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
            long lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .partitionResult(tp).get().offset();
            assertThat(hw).isEqualTo(4);
            assertThat(lso).as("LSO = first offset of the open transaction").isEqualTo(1);
            assertThat(values(readAll(topic, 1, IsolationLevel.READ_COMMITTED, 1))).containsExactly("before");

            producer.commitTransaction();
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp).get().offset()).isEqualTo(5));
            assertThat(values(readAll(topic, 1, IsolationLevel.READ_COMMITTED, 4))).containsExactly("before", "open-1", "open-2", "after");
        }
    }

    @Test
    void aSecondProducerWithTheSameIdFencesTheFirstOnEveryPartitionItWrote() throws Exception {
        String topic = "txn-zombie";
        createTopic(topic, 2);
        KafkaProducer<String, String> zombie = transactional("tx-zombie", Map.of());
        try {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, "z", "zombie-0")).get(30, TimeUnit.SECONDS);
            zombie.send(new ProducerRecord<>(topic, 1, "z", "zombie-1")).get(30, TimeUnit.SECONDS);
            try (KafkaProducer<String, String> successor = transactional("tx-zombie", Map.of())) {
                // Aborts the zombie's open transaction under a bumped epoch, then takes the id.
                successor.initTransactions();
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(topic, 0, "s", "successor-0")).get(30, TimeUnit.SECONDS);
                successor.commitTransaction();

                for (int p = 0; p < 2; p++) {
                    int partition = p;
                    assertThatThrownBy(() -> zombie.send(new ProducerRecord<>(topic, partition, "z", "late")).get(30, TimeUnit.SECONDS))
                            .as("partition %d refuses the fenced epoch", p).isInstanceOf(ExecutionException.class)
                            .cause().isInstanceOfAny(InvalidProducerEpochException.class, ProducerFencedException.class);
                }
                assertThatThrownBy(zombie::commitTransaction).isInstanceOf(KafkaException.class);
            }
        } finally {
            zombie.close(Duration.ZERO);
        }
        assertThat(values(readAll(topic, 2, IsolationLevel.READ_COMMITTED, 1))).containsExactly("successor-0");
    }

    @Test
    void aTransactionOpenPastItsTimeoutIsAbortedByTheCoordinator() throws Exception {
        String topic = "txn-timeout";
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactional("tx-timeout", Map.of("transaction.timeout.ms", "1500"));
             Admin admin = Admin.create(cluster.clientProps())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "never-committed")).get(30, TimeUnit.SECONDS);
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                TransactionDescription d = admin.describeTransactions(List.of("tx-timeout")).description("tx-timeout").get();
                assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_ABORT);
            });
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .partitionResult(tp).get().offset()).as("the abort marker made the log stable").isEqualTo(2);
            assertThatThrownBy(producer::commitTransaction).isInstanceOf(KafkaException.class);
        }
        assertThat(readAll(topic, 1, IsolationLevel.READ_COMMITTED, 0)).isEmpty();
    }

    @Test
    void consumeTransformProduceCommitsOffsetsOnlyWithTheTransaction() throws Exception {
        String in = "ctp-in";
        String out = "ctp-out";
        createTopic(in, 2);
        createTopic(out, 2);
        try (KafkaProducer<String, String> seed = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 20; i++) {
                seed.send(new ProducerRecord<>(in, i % 2, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
        String group = "ctp-group";
        try (KafkaConsumer<String, String> consumer = consumer(IsolationLevel.READ_COMMITTED, group);
             KafkaProducer<String, String> producer = transactional("tx-ctp", Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            consumer.subscribe(List.of(in));
            producer.initTransactions();
            List<ConsumerRecord<String, String>> batch = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (batch.size() < 20 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(300)).forEach(batch::add);
            }
            assertThat(batch).hasSize(20);
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (ConsumerRecord<String, String> r : batch) {
                offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
            }
            ConsumerGroupMetadata meta = consumer.groupMetadata();

            // Aborted: neither the output nor the offsets count.
            producer.beginTransaction();
            batch.forEach(r -> producer.send(new ProducerRecord<>(out, r.partition(), r.key(), r.value().toUpperCase())));
            producer.sendOffsetsToTransaction(offsets, meta);
            producer.flush();
            producer.abortTransaction();
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)).isEmpty();

            producer.beginTransaction();
            batch.forEach(r -> producer.send(new ProducerRecord<>(out, r.partition(), r.key(), r.value().toUpperCase())));
            producer.sendOffsetsToTransaction(offsets, meta);
            producer.commitTransaction();
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
                            .isEqualTo(offsets));
        }
        assertThat(values(readAll(out, 2, IsolationLevel.READ_COMMITTED, 20))).hasSize(20).allMatch(v -> v.startsWith("V"));
    }

    @Test
    void adminListsAndDescribesTransactionsAndProducers() throws Exception {
        String topic = "txn-admin";
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactional("tx-admin", Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "v")).get(30, TimeUnit.SECONDS);

            TransactionDescription d = admin.describeTransactions(List.of("tx-admin")).description("tx-admin").get(30, TimeUnit.SECONDS);
            assertThat(d.state()).isEqualTo(TransactionState.ONGOING);
            assertThat(d.topicPartitions()).containsExactly(tp);
            var listed = admin.listTransactions().all().get(30, TimeUnit.SECONDS);
            assertThat(listed).extracting(TransactionListing::transactionalId).contains("tx-admin");
            var producers = admin.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS).activeProducers();
            assertThat(producers).hasSize(1);
            assertThat(producers.get(0).producerId()).isEqualTo(d.producerId());
            assertThat(producers.get(0).currentTransactionStartOffset()).hasValue(0L);
            producer.commitTransaction();
        }
        assertThat(values(readAll(topic, 1, IsolationLevel.READ_COMMITTED, 1))).containsExactly("v");
    }

    @Test
    void hostileTransactionalIdsWorkAndStayInsideTheDataDirectory() throws Exception {
        String topic = "txn-hostile-ids";
        createTopic(topic, 1);
        List<String> ids = List.of("../../escape", "a/b/c", "/etc/passwd", "nul\u0000id", "..", "x".repeat(32767));
        for (String id : ids) {
            // The Java client's default client.id ("producer-" + transactional.id) would not fit a request header with the longest id.
            try (KafkaProducer<String, String> producer = transactional(id, Map.of("client.id", "hostile-" + id.length()))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", "v" + id.length())).get(30, TimeUnit.SECONDS);
                producer.commitTransaction();
            }
        }
        try (Admin admin = Admin.create(cluster.clientProps())) {
            // Markers follow EndTxn asynchronously: the last commit completes a moment later.
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                var described = admin.describeTransactions(ids).all().get(30, TimeUnit.SECONDS);
                assertThat(described.keySet()).containsExactlyInAnyOrderElementsOf(ids);
                assertThat(described.values()).allSatisfy(d -> assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_COMMIT));
            });
        }
        assertThat(readAll(topic, 1, IsolationLevel.READ_COMMITTED, ids.size())).hasSize(ids.size());
        assertThat(ConsumerGroupsIT.outsideTheLayout(cluster.dataDir())).as("files outside the data directory's layout").isEmpty();
    }
}
