package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * librdkafka's transactional producer and read_committed consumer, through confluent-kafka-python
 * (Debian's python3-confluent-kafka, not reachable from Maven). Skips when the system Python has
 * no confluent_kafka module, unless KAAS_REQUIRE_NATIVE_CLIENTS is set (.ci/run sets it).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ConfluentKafkaPythonIT {
    static final Path PYTHON = Path.of("/usr/bin/python3");
    static final int COMMITTED = 10;
    static final int ABORTED = 6;

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;

    @TempDir
    Path tmp;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static boolean confluentKafkaPresent() throws Exception {
        if (!Files.isExecutable(PYTHON)) {
            return false;
        }
        Process p = new ProcessBuilder(PYTHON.toString(), "-c", "import confluent_kafka").redirectErrorStream(true).start();
        try {
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * {@code produce}: one committed transaction of {@code committed} records and one aborted one of
     * {@code aborted}, alternating partitions 0 and 1, every record written before the abort.
     * {@code consume}: a read_committed consumer from the beginning of both partitions until it is at
     * the end of each. Every librdkafka call and loop is bounded.
     */
    static final String SCRIPT = """
            import sys, time
            from confluent_kafka import Consumer, KafkaError, OFFSET_BEGINNING, Producer, TopicPartition

            def fail(why):
                print('FAIL ' + why, flush=True)
                sys.exit(2)

            def produce(bootstrap, topic, committed, aborted):
                delivered, errors = [], []
                def on_delivery(err, msg):
                    if err is not None:
                        errors.append(str(err))
                    else:
                        delivered.append((msg.partition(), msg.offset(), msg.value().decode()))
                p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'py-txn',
                              'transaction.timeout.ms': 60000, 'message.timeout.ms': 30000, 'socket.timeout.ms': 10000})
                p.init_transactions(60)
                p.begin_transaction()
                for i in range(committed):
                    p.produce(topic, key='k%d' % i, value='committed-%d' % i, partition=i % 2, on_delivery=on_delivery)
                p.commit_transaction(60)
                p.poll(0)
                print('committed', flush=True)
                p.begin_transaction()
                for i in range(aborted):
                    p.produce(topic, key='k%d' % i, value='aborted-%d' % i, partition=i % 2, on_delivery=on_delivery)
                if p.flush(60) != 0:
                    fail('aborted records not delivered in time')
                p.abort_transaction(60)
                p.poll(0)
                print('aborted', flush=True)
                if errors:
                    fail('delivery errors: %s' % errors)
                for partition, offset, value in sorted(delivered):
                    print('delivered %d %d %s' % (partition, offset, value))
                print('produce ok', flush=True)

            def consume(bootstrap, topic):
                c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'py-read-committed', 'isolation.level': 'read_committed',
                              'enable.auto.commit': False, 'enable.partition.eof': True, 'auto.offset.reset': 'earliest'})
                try:
                    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING), TopicPartition(topic, 1, OFFSET_BEGINNING)])
                    at_end = set()
                    deadline = time.monotonic() + 60
                    while len(at_end) < 2 and time.monotonic() < deadline:
                        m = c.poll(1.0)
                        if m is None:
                            continue
                        if m.error():
                            if m.error().code() == KafkaError._PARTITION_EOF:
                                at_end.add(m.partition())
                                continue
                            fail('consumer error: %s' % m.error())
                        at_end.discard(m.partition())
                        print('record %d %d %s' % (m.partition(), m.offset(), m.value().decode()), flush=True)
                    if len(at_end) < 2:
                        fail('not at the end of both partitions within 60 s (at the end of %s)' % sorted(at_end))
                finally:
                    c.close()
                print('consume ok', flush=True)

            if sys.argv[1] == 'produce':
                produce(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
            else:
                consume(sys.argv[2], sys.argv[3])
            """;

    String python(Path script, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(PYTHON.toString(), script.toString()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(tmp, "python", ".out");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            p.getOutputStream().close();
            if (!p.waitFor(150, TimeUnit.SECONDS)) {
                throw new AssertionError("python " + args[0] + " did not finish in 150 s: " + Files.readString(out));
            }
            assertThat(p.exitValue()).as(Files.readString(out)).isZero();
            return Files.readString(out);
        } finally {
            p.destroyForcibly();
        }
    }

    static List<ConsumerRecord<String, String>> readJava(String topic, IsolationLevel isolation, int atLeast) {
        Properties p = cluster.clientProps();
        p.put("isolation.level", isolation.toString().toLowerCase(java.util.Locale.ROOT));
        p.put("enable.auto.commit", "false");
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
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

    static List<String> valuesOf(List<ConsumerRecord<String, String>> records, int partition) {
        return records.stream().filter(r -> r.partition() == partition).map(ConsumerRecord::value).toList();
    }

    /** {@code prefix-i} for the i below {@code count} that land on {@code partition} (i % 2), in order. */
    static List<String> expected(String prefix, int count, int partition) {
        List<String> out = new ArrayList<>();
        for (int i = partition; i < count; i += 2) {
            out.add(prefix + "-" + i);
        }
        return out;
    }

    @Test
    void librdkafkaTransactionalProducerCommitsAndAbortsAndReadCommittedSeesOnlyTheCommitted() throws Exception {
        NativeClients.requirePresent(confluentKafkaPresent(), "confluent-kafka-python (python3-confluent-kafka)");
        String topic = "py-txn";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Path script = tmp.resolve("confluent_kafka_txn.py");
        Files.writeString(script, SCRIPT);

        String produced = python(script, "produce", cluster.bootstrap(), topic, Integer.toString(COMMITTED), Integer.toString(ABORTED));
        assertThat(produced).contains("committed", "aborted", "produce ok");
        assertThat(produced.lines().filter(l -> l.startsWith("delivered "))).as(produced).hasSize(COMMITTED + ABORTED);

        try (Admin admin = Admin.create(cluster.clientProps())) {
            // Markers follow EndTxn asynchronously (as in Apache): across brokers the abort completes a moment later.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                TransactionDescription d = admin.describeTransactions(List.of("py-txn")).description("py-txn").get(30, TimeUnit.SECONDS);
                assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_ABORT);
            });
            for (int p = 0; p < 2; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
                long lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
                // Half of each transaction's records, and a commit and an abort marker.
                assertThat(hw).as("partition %d end", p).isEqualTo(COMMITTED / 2 + ABORTED / 2 + 2);
                assertThat(lso).as("partition %d: both transactions ended", p).isEqualTo(hw);
            }
        }

        String consumed = python(script, "consume", cluster.bootstrap(), topic);
        assertThat(consumed).contains("consume ok");
        for (int p = 0; p < 2; p++) {
            String prefix = "record " + p + " ";
            List<String> seen = consumed.lines().filter(l -> l.startsWith(prefix)).map(l -> l.split(" ", 4)[3]).toList();
            assertThat(seen).as("librdkafka read_committed, partition %d: %s", p, consumed).containsExactlyElementsOf(expected("committed", COMMITTED, p));
        }
        assertThat(consumed.lines().filter(l -> l.startsWith("record "))).hasSize(COMMITTED);

        var uncommitted = readJava(topic, IsolationLevel.READ_UNCOMMITTED, COMMITTED + ABORTED);
        var committed = readJava(topic, IsolationLevel.READ_COMMITTED, COMMITTED);
        for (int p = 0; p < 2; p++) {
            List<String> all = new ArrayList<>(expected("committed", COMMITTED, p));
            all.addAll(expected("aborted", ABORTED, p));
            assertThat(valuesOf(uncommitted, p)).as("Java read_uncommitted, partition %d", p).containsExactlyElementsOf(all);
            assertThat(valuesOf(committed, p)).as("Java read_committed, partition %d", p)
                    .containsExactlyElementsOf(expected("committed", COMMITTED, p));
        }
    }
}
