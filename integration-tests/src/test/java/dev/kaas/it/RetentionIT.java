package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention and DeleteRecords against a real broker with the Apache 3.7.2 clients and tools:
 * segments go, the log start offset advances, consumers from earliest start there, disk usage
 * falls, and nothing newer than the limits goes.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RetentionIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.broker.log-retention-check-interval", "300ms"));

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static void createTopic(String topic, Map<String, String> configs) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** {@code n} records of about 200 bytes, acknowledged one by one so each lands in order. */
    static void produce(String topic, int from, int n) throws Exception {
        produce(topic, from, n, System.currentTimeMillis());
    }

    static void produce(String topic, int from, int n, long timestamp) throws Exception {
        Properties p = cluster.clientProps();
        p.put("linger.ms", "0");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + n; i++) {
                producer.send(new ProducerRecord<>(topic, 0, timestamp, "k" + i, i + "-" + "x".repeat(190))).get(30, TimeUnit.SECONDS);
            }
        }
    }

    static List<ConsumerRecord<String, String>> readFromEarliest(String topic, int expected) {
        Properties p = cluster.clientProps();
        p.put("auto.offset.reset", "earliest");
        p.put("group.id", "retention-" + topic + "-" + System.nanoTime());
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (out.size() < expected && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    static long earliest(TopicPartition tp) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get(10, TimeUnit.SECONDS).offset();
        }
    }

    @Test
    void byTimeEverythingOlderThanRetentionMsGoesAndConsumersStartAtTheLogStart() throws Exception {
        String topic = "by-time";
        createTopic(topic, Map.of("segment.bytes", "2048", "retention.ms", "600000", "file.delete.delay.ms", "100"));
        TopicPartition tp = new TopicPartition(topic, 0);
        // Record timestamps decide (CreateTime): 100 written an hour ago, 20 now.
        produce(topic, 0, 100, System.currentTimeMillis() - 3_600_000);
        produce(topic, 100, 20);

        // Checks run while the old records are still being written: wait until they have all been
        // judged, that is until the log start has stopped moving over several checks (one check
        // may remove the segments up to 90 and the next those up to 97).
        long[] last = {-1};
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1000)).until(() -> {
            long now = earliest(tp);
            boolean settled = now >= 90 && now == last[0];
            last[0] = now;
            return settled;
        });
        long start = earliest(tp);
        // The segment that holds the last old records and the first new ones is as new as its newest.
        assertThat(start).as("only records older than retention.ms went").isBetween(90L, 100L);
        List<ConsumerRecord<String, String>> seen = readFromEarliest(topic, (int) (120 - start));
        assertThat(seen.get(0).offset()).as("a consumer from earliest starts at the log start").isEqualTo(start);
        assertThat(seen).hasSize((int) (120 - start));
        assertThat(seen.get(seen.size() - 1).value()).startsWith("119-");
        // Retention ran while the old records were written, so there is no "before" to compare with:
        // what is on disk is what was kept (about 30 records), not the 120 x 200+ bytes written.
        assertThat(cluster.segmentBytes(topic)).as("disk usage is what was kept").isLessThan(120L * 200 / 2);
    }

    /** IncrementalAlterConfigs reaches the open partition: retention at its next check, max.message.bytes at the next produce. */
    @Test
    void aConfigChangeAppliesAtTheNextCheckAndTheNextProduce() throws Exception {
        String topic = "altered";
        createTopic(topic, Map.of("segment.bytes", "2048", "file.delete.delay.ms", "100"));
        TopicPartition tp = new TopicPartition(topic, 0);
        produce(topic, 0, 60, System.currentTimeMillis() - 3_600_000);
        produce(topic, 60, 10);
        Thread.sleep(1000);
        assertThat(earliest(tp)).as("seven days keep everything").isZero();

        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "600000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "600"), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                    .get("retention.ms").value()).isEqualTo("600000");
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> earliest(tp) >= 50);

        Properties p = cluster.clientProps();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, "big", "x".repeat(1000))).get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
            producer.send(new ProducerRecord<>(topic, 0, "small", "x".repeat(100))).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void bySizeTheOldestSegmentsGoUntilTheRestFits() throws Exception {
        String topic = "by-size";
        createTopic(topic, Map.of("segment.bytes", "2048", "retention.bytes", "6144", "file.delete.delay.ms", "100"));
        TopicPartition tp = new TopicPartition(topic, 0);
        produce(topic, 0, 200);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> earliest(tp) > 0);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> cluster.segmentBytes(topic) <= 6144 + 2048);
        long start = earliest(tp);
        List<ConsumerRecord<String, String>> seen = readFromEarliest(topic, (int) (200 - start));
        assertThat(seen).hasSize((int) (200 - start));
        assertThat(seen.get(seen.size() - 1).value()).as("the newest are all there").startsWith("199-");
        assertThat(200 - start).as("about 6 KiB of 200-byte records kept").isGreaterThanOrEqualTo(20);
    }

    @Test
    void deleteRecordsMovesTheLogStartThroughAdminAndTheShellTool() throws Exception {
        String topic = "trim";
        createTopic(topic, Map.of("segment.bytes", "2048", "file.delete.delay.ms", "100"));
        TopicPartition tp = new TopicPartition(topic, 0);
        produce(topic, 0, 50);
        try (Admin admin = Admin.create(cluster.clientProps())) {
            var low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(20))).lowWatermarks().get(tp).get(10, TimeUnit.SECONDS);
            assertThat(low.lowWatermark()).isEqualTo(20);
        }
        assertThat(earliest(tp)).isEqualTo(20);
        assertThat(readFromEarliest(topic, 30).get(0).offset()).isEqualTo(20);

        Path json = Files.createTempFile("delete-records", ".json");
        Files.writeString(json, "{\"version\":1,\"partitions\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":35}]}");
        var tool = ShellTools.run("org.apache.kafka.tools.DeleteRecordsCommand", null,
                "--bootstrap-server", cluster.bootstrap(), "--offset-json-file", json.toString());
        assertThat(tool.exitCode()).as(tool.stderr()).isZero();
        assertThat(tool.stdout()).contains("partition: " + topic + "-0").contains("low_watermark: 35");
        assertThat(earliest(tp)).isEqualTo(35);

        createTopic("compacted-only", Map.of("cleanup.policy", "compact"));
        try (Admin admin = Admin.create(cluster.clientProps())) {
            TopicPartition compacted = new TopicPartition("compacted-only", 0);
            var refused = admin.deleteRecords(Map.of(compacted, RecordsToDelete.beforeOffset(0))).lowWatermarks().get(compacted);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(refused::isDone);
            assertThat(refused).failsWithin(Duration.ZERO).withThrowableThat().havingCause().isInstanceOf(PolicyViolationException.class);
        }
    }
}
