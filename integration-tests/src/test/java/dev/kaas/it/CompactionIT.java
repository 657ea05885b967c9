package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction against a real broker with the Apache 3.7.2 clients: a compacted topic ends with
 * exactly the latest value of each key at the offset it was written at, tombstones go after
 * {@code delete.retention.ms}, every batch passes the consumer's CRC check, and a Kafka Streams
 * changelog is compacted and restores from it. (A kill -9 during a pass: {@link CompactionCrashIT}.)
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class CompactionIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of(
            "kaas.broker.log-cleaner-backoff", "200ms",
            "kaas.broker.log-cleaner-dedupe-buffer-size", "16777216"));

    static KaasCluster cluster;

    @TempDir
    Path tmp;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static Map<String, String> compacted() {
        return Map.of("cleanup.policy", "compact", "segment.bytes", "262144", "segment.ms", "1500",
                "min.cleanable.dirty.ratio", "0", "delete.retention.ms", "3000", "file.delete.delay.ms", "1000");
    }

    static void createTopic(KaasCluster cluster, String topic, Map<String, String> configs) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** What was written: the value at each offset, and each key's latest offset. */
    static final class Written {
        final Map<Long, String> valueAt = new ConcurrentHashMap<>();
        final Map<String, Long> latest = new ConcurrentHashMap<>();
    }

    /** {@code updates} writes over {@code keys} keys of about 100 bytes each, then tombstones for the first {@code deleted} keys. */
    static Written produce(KaasCluster cluster, String topic, int updates, int keys, int deleted) throws Exception {
        Written w = new Written();
        Properties p = cluster.clientProps();
        p.put("linger.ms", "5");
        p.put("acks", "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < updates + deleted; i++) {
                String key = "k" + (i < updates ? i % keys : i - updates);
                String value = i < updates ? i + "-" + "v".repeat(90) : null;
                sent.add(producer.send(new ProducerRecord<>(topic, 0, key, value), (md, e) -> {
                    if (e == null) {
                        w.valueAt.put(md.offset(), value == null ? "<tombstone>" : value);
                        w.latest.merge(key, md.offset(), Math::max);
                    }
                }));
                if (sent.size() >= 5000) {
                    for (var f : sent) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                    sent.clear();
                }
            }
            for (var f : sent) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        return w;
    }

    /** A record after the segment's age limit: it rolls the active segment, so everything before it may be cleaned. */
    static void roll(KaasCluster cluster, String topic) throws Exception {
        Thread.sleep(1600);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, 0, "filler", "f")).get(30, TimeUnit.SECONDS);
        }
    }

    /** Every record from the log start to the end, read with CRC checks on. */
    static List<ConsumerRecord<String, String>> readAll(KaasCluster cluster, String topic) {
        Properties p = cluster.clientProps();
        p.put("check.crcs", "true");
        p.put("max.partition.fetch.bytes", "1048576");
        TopicPartition tp = new TopicPartition(topic, 0);
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (c.position(tp, Duration.ofSeconds(30)) < end && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /** Nothing that was not written, each at its own offset; every key's latest value is there (the tombstoned ones' may be gone). */
    static void assertConsistent(List<ConsumerRecord<String, String>> seen, Written w, String when) {
        Map<String, Long> latestSeen = new HashMap<>();
        for (ConsumerRecord<String, String> r : seen) {
            if (r.key().equals("filler")) {
                continue;
            }
            assertThat(r.value() == null ? "<tombstone>" : r.value()).as("%s: the record at offset %d", when, r.offset())
                    .isEqualTo(w.valueAt.get(r.offset()));
            latestSeen.merge(r.key(), r.offset(), Math::max);
        }
        for (var e : w.latest.entrySet()) {
            if (!"<tombstone>".equals(w.valueAt.get(e.getValue()))) {
                assertThat(latestSeen.get(e.getKey())).as("%s: the latest of %s", when, e.getKey()).isEqualTo(e.getValue());
            }
        }
    }


    @Test
    void aHundredThousandUpdatesOverAThousandKeysEndAsTheLatestValueOfEachKey() throws Exception {
        String topic = "table";
        createTopic(cluster, topic, compacted());
        Written w = produce(cluster, topic, 100_000, 1_000, 100);
        // What the log would hold uncompacted: the values alone (the cleaner ran while they were written).
        long written = 100_000L * 96;
        roll(cluster, topic);

        // Exactly one record per key, the latest, at the offset it was written at; tombstones too until their horizon.
        Awaitility.await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<ConsumerRecord<String, String>> seen = readAll(cluster, topic);
            assertConsistent(seen, w, "compacted");
            assertThat(seen.stream().filter(r -> !r.key().equals("filler")).count()).isBetween(900L, 1_000L);
        });
        assertThat(cluster.segmentBytes(topic)).as("disk usage falls from %d bytes", written).isLessThan(written / 20);

        // After delete.retention.ms, the next pass drops the tombstones.
        Thread.sleep(3000);
        roll(cluster, topic);
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<ConsumerRecord<String, String>> seen = readAll(cluster, topic);
            assertConsistent(seen, w, "tombstones dropped");
            assertThat(seen.stream().filter(r -> !r.key().equals("filler")).map(ConsumerRecord::key).distinct().count()).isEqualTo(900);
            assertThat(seen).noneMatch(r -> r.value() == null);
        });
    }

    @Test
    void aStreamsChangelogIsCompactedAndRestoresFromIt() throws Exception {
        String in = "clicks";
        String out = "click-counts";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(in, 1, (short) 1), new NewTopic(out, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        KafkaStreams first = counter(in, out, tmp.resolve("state-1"));
        Map<String, Long> expected = new HashMap<>();
        try {
            sendClicks(in, 3_000, expected);
            awaitCounts(out, expected);
        } finally {
            first.close(Duration.ofSeconds(30));
        }
        String changelog = "click-counter-counts-changelog";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
            var config = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r);
            assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        }
        // 3,000 updates of 20 keys: compaction keeps one per key below the active segment. How many
        // records the active segment holds is Streams' batching (a 641-record batch was seen), and no
        // cleaner, Apache's neither, touches it: the guarantee is on what lies below it.
        long[] below = new long[2];
        try {
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                long active = cluster.activeSegmentBase(changelog);
                List<ConsumerRecord<String, String>> cleanable = readAll(cluster, changelog).stream().filter(r -> r.offset() < active).toList();
                below[0] = active;
                below[1] = cleanable.size();
                return active > 0 && cleanable.size() == cleanable.stream().map(ConsumerRecord::key).distinct().count();
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            List<String> cleaner = java.nio.file.Files.readAllLines(cluster.brokerLog()).stream()
                    .filter(l -> l.contains("Cleaner") || l.contains("compaction") || l.contains(changelog)).toList();
            throw new AssertionError("the changelog below its active segment at " + below[0] + " was not compacted in 60 s: "
                    + below[1] + " records there; broker's cleaner lines:\n"
                    + String.join("\n", cleaner.subList(Math.max(0, cleaner.size() - 60), cleaner.size())), e);
        }
        // A producer batch holds at most batch.size (16 KiB, ~700 of these records): most updates lie below.
        assertThat(below[0]).as("the active segment's base").isGreaterThan(2_000);
        assertThat(below[1]).as("one record per key below offset %d", below[0]).isLessThanOrEqualTo(20);

        // A new instance with empty state restores the counts from the compacted changelog and goes on from them.
        KafkaStreams second = counter(in, out, tmp.resolve("state-2"));
        try {
            sendClicks(in, 20, expected);
            awaitCounts(out, expected);
        } finally {
            second.close(Duration.ofSeconds(30));
        }
    }

    KafkaStreams counter(String in, String out, Path state) {
        StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(in)
                .groupByKey()
                .count(org.apache.kafka.streams.kstream.Materialized.as("counts"))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "click-counter");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10_000);
        // Changelog topic configs, as an operator tunes them: small segments so compaction shows in a test.
        p.put(StreamsConfig.topicPrefix("segment.bytes"), "4096");
        p.put(StreamsConfig.topicPrefix("min.cleanable.dirty.ratio"), "0");
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.start();
        return streams;
    }

    static void sendClicks(String topic, int n, Map<String, Long> expected) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                String key = "user-" + (i % 20);
                p.send(new ProducerRecord<>(topic, key, "click"));
                expected.merge(key, 1L, Long::sum);
            }
            p.flush();
        }
    }

    static void awaitCounts(String topic, Map<String, Long> expected) {
        Map<String, Long> latest = new HashMap<>();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(cluster.clientProps(), new StringDeserializer(), new LongDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline && !latest.equals(expected)) {
                c.poll(Duration.ofMillis(300)).forEach(r -> latest.put(r.key(), r.value()));
            }
        }
        assertThat(latest).isEqualTo(expected);
    }
}
