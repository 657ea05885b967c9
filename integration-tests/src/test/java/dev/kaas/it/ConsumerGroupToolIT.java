package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code kafka-consumer-groups.sh} (Apache 3.7.2) with every action and reset selector. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ConsumerGroupToolIT {
    @TempDir
    static Path tmp;

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;
    static long midTimestamp;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("cg", 2, (short) 1), new NewTopic("cg2", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        long base = System.currentTimeMillis() - 3_600_000;
        midTimestamp = base + 50 * 1000;
        try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 100; i++) {
                p.send(new ProducerRecord<>("cg", 0, base + i * 1000L, null, "v" + i));
                p.send(new ProducerRecord<>("cg", 1, base + i * 1000L, null, "v" + i));
                p.send(new ProducerRecord<>("cg2", 0, base + i * 1000L, null, "v" + i));
            }
        }
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.alterConsumerGroupOffsets("tool", Map.of(new TopicPartition("cg", 0), new OffsetAndMetadata(10),
                    new TopicPartition("cg", 1), new OffsetAndMetadata(20), new TopicPartition("cg2", 0), new OffsetAndMetadata(30)))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    static ShellTools.Result groups(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.bootstrap()));
        all.addAll(List.of(args));
        ShellTools.Result r = ShellTools.run("kafka.admin.ConsumerGroupCommand", null, all.toArray(String[]::new));
        assertThat(r.exitCode()).as(String.join(" ", args) + "\n" + r.stdout() + r.stderr()).isZero();
        return r;
    }

    /** The NEW-OFFSET column per topic:partition from a reset's output table. */
    static Map<String, Long> newOffsets(String out) {
        Map<String, Long> m = new java.util.TreeMap<>();
        for (String line : out.lines().toList()) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 4 && f[0].equals("tool") && f[3].matches("\\d+")) {
                m.put(f[1] + ":" + f[2], Long.parseLong(f[3]));
            }
        }
        return m;
    }

    static Map<TopicPartition, Long> committed() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            Map<TopicPartition, Long> out = new java.util.HashMap<>();
            admin.listConsumerGroupOffsets("tool").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                    .forEach((tp, o) -> out.put(tp, o.offset()));
            return out;
        }
    }

    @Test
    void listDescribeAndEveryResetSelector() throws Exception {
        assertThat(groups("--list").stdout().lines()).contains("tool");
        assertThat(groups("--list", "--state").stdout()).contains("tool").contains("Empty");
        assertThat(groups("--list", "--state", "Stable").stdout()).doesNotContain("tool");

        String describe = groups("--describe", "--group", "tool").stdout();
        assertThat(describe).contains("cg              0          10              100");
        assertThat(groups("--describe", "--group", "tool", "--offsets", "--verbose").stdout()).contains("cg2             0          30              100");
        assertThat(groups("--describe", "--group", "tool", "--state").stdout()).contains("Empty").contains("COORDINATOR");
        var noMembers = groups("--describe", "--group", "tool", "--members");
        assertThat(noMembers.stdout() + noMembers.stderr()).contains("has no active members");

        // --dry-run changes nothing; every selector computes what Apache's would.
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--all-topics", "--to-earliest", "--dry-run").stdout()))
                .containsEntry("cg:0", 0L).containsEntry("cg:1", 0L).containsEntry("cg2:0", 0L);
        assertThat(committed()).containsEntry(new TopicPartition("cg", 0), 10L);
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--all-topics", "--to-latest", "--dry-run").stdout()))
                .containsEntry("cg:0", 100L).containsEntry("cg2:0", 100L);
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--topic", "cg:1", "--to-offset", "42", "--dry-run").stdout()))
                .containsExactlyEntriesOf(Map.of("cg:1", 42L));
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--topic", "cg", "--shift-by", "-5", "--dry-run").stdout()))
                .containsEntry("cg:0", 5L).containsEntry("cg:1", 15L);
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--all-topics", "--to-current", "--dry-run").stdout()))
                .containsEntry("cg:0", 10L).containsEntry("cg:1", 20L).containsEntry("cg2:0", 30L);
        String datetime = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS").withZone(ZoneOffset.UTC).format(Instant.ofEpochMilli(midTimestamp));
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--topic", "cg:0", "--to-datetime", datetime + "Z", "--dry-run").stdout()))
                .containsEntry("cg:0", 50L);
        assertThat(newOffsets(groups("--reset-offsets", "--group", "tool", "--topic", "cg:0", "--by-duration", "PT0H30M0S", "--dry-run").stdout()))
                .containsEntry("cg:0", 100L);

        Path export = tmp.resolve("plan.csv");
        String plan = groups("--reset-offsets", "--group", "tool", "--all-topics", "--to-offset", "7", "--dry-run", "--export").stdout();
        Files.writeString(export, plan);
        assertThat(plan.lines()).contains("cg,0,7", "cg,1,7", "cg2,0,7");
        groups("--reset-offsets", "--group", "tool", "--from-file", export.toString(), "--execute");
        assertThat(committed()).containsEntry(new TopicPartition("cg", 0), 7L).containsEntry(new TopicPartition("cg2", 0), 7L);
        groups("--reset-offsets", "--group", "tool", "--topic", "cg:1", "--to-latest", "--execute");
        assertThat(committed()).containsEntry(new TopicPartition("cg", 1), 100L);

        var deleteOffsets = groups("--delete-offsets", "--group", "tool", "--topic", "cg2");
        assertThat(deleteOffsets.stdout()).contains("Successful");
        assertThat(committed()).doesNotContainKey(new TopicPartition("cg2", 0));
        assertThat(groups("--delete", "--group", "tool").stdout()).contains("successful");
        assertThat(groups("--list").stdout().lines()).doesNotContain("tool");
    }

    @Test
    void aLiveGroupIsDescribedWithItsMembersAndCannotBeDeleted() throws Exception {
        Properties p = cluster.clientProps();
        p.put("group.id", "live");
        p.put("auto.offset.reset", "earliest");
        p.put("client.id", "live-client");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of("cg"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int got = 0;
            while (got < 200 && System.nanoTime() < deadline) {
                got += c.poll(Duration.ofMillis(200)).count();
            }
            c.commitSync();
            String members = groups("--describe", "--group", "live", "--members", "--verbose").stdout();
            assertThat(members).contains("live-client").contains("/127.0.0.1").contains("cg(0,1)");
            assertThat(groups("--describe", "--group", "live", "--state").stdout()).contains("Stable").contains("range");
            assertThat(groups("--describe", "--group", "live").stdout()).contains("live-client");
            var delete = ShellTools.run("kafka.admin.ConsumerGroupCommand", null, "--bootstrap-server", cluster.bootstrap(), "--delete", "--group", "live");
            assertThat(delete.stdout() + delete.stderr()).contains("GroupNotEmptyException").doesNotContain("was successful");
            var reset = ShellTools.run("kafka.admin.ConsumerGroupCommand", null, "--bootstrap-server", cluster.bootstrap(),
                    "--reset-offsets", "--group", "live", "--all-topics", "--to-earliest", "--execute");
            assertThat(reset.stdout() + reset.stderr()).contains("inactive");
            var deleteOffsets = ShellTools.run("kafka.admin.ConsumerGroupCommand", null, "--bootstrap-server", cluster.bootstrap(),
                    "--delete-offsets", "--group", "live", "--topic", "cg");
            assertThat(deleteOffsets.stdout() + deleteOffsets.stderr()).contains("GroupSubscribedToTopicException");
        }
    }
}
