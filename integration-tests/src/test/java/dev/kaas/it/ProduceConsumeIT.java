package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Java 3.7.2 clients with default settings against a real standalone kaas. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ProduceConsumeIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static KafkaProducer<byte[], byte[]> producer(Map<String, Object> extra) {
        Properties p = cluster.clientProps();
        p.putAll(extra);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static KafkaConsumer<byte[], byte[]> consumer() {
        Properties p = cluster.clientProps();
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    record Sent(int partition, long offset, byte[] key, byte[] value, long timestamp, byte[] header) {
    }

    /** Reads every record from the beginning of the given partitions, up to {@code expected}, bounded in time. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int partitions, int expected) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (out.size() < expected && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(500)).forEach(out::add);
            }
        }
        return out;
    }

    /** CreatePartitions: a running producer with the default partitioner sends to the new partitions once its metadata refreshes. */
    @Test
    void aRunningProducerStartsUsingNewPartitions() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("growing", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put("metadata.max.age.ms", "500");
        p.put("linger.ms", "0");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 20; i++) {
                assertThat(producer.send(new ProducerRecord<>("growing", ("k" + i).getBytes(StandardCharsets.UTF_8), new byte[10]))
                        .get(30, TimeUnit.SECONDS).partition()).isZero();
            }
            try (Admin admin = Admin.create(cluster.clientProps())) {
                admin.createPartitions(Map.of("growing", org.apache.kafka.clients.admin.NewPartitions.increaseTo(3)))
                        .all().get(30, TimeUnit.SECONDS);
            }
            Set<Integer> used = new java.util.HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int i = 0; used.size() < 3 && System.nanoTime() < deadline; i++) {
                used.add(producer.send(new ProducerRecord<>("growing", ("k" + (i % 20)).getBytes(StandardCharsets.UTF_8), new byte[10]))
                        .get(30, TimeUnit.SECONDS).partition());
                Thread.sleep(5);
            }
            assertThat(used).as("the keys spread over the grown topic").containsExactlyInAnyOrder(0, 1, 2);
        }
    }

    @Test
    void oneHundredThousandRecordsRoundTripIntactAcrossPartitions() throws Exception {
        String topic = "round-trip";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        int n = 100_000;
        Random random = new Random(42);
        List<Future<RecordMetadata>> futures = new ArrayList<>(n);
        List<Sent> sent = new ArrayList<>(n);
        long baseTs = System.currentTimeMillis() - 60_000;
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            for (int i = 0; i < n; i++) {
                byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                byte[] value = new byte[10 + random.nextInt(300)];
                random.nextBytes(value);
                byte[] header = ("h" + i).getBytes(StandardCharsets.UTF_8);
                long ts = baseTs + i;
                var record = new ProducerRecord<>(topic, null, ts, key, value, List.of(new RecordHeader("trace", header)));
                futures.add(producer.send(record));
                sent.add(new Sent(-1, -1, key, value, ts, header));
            }
            producer.flush();
        }
        Map<String, Sent> byPosition = new HashMap<>();
        for (int i = 0; i < n; i++) {
            RecordMetadata md = futures.get(i).get(60, TimeUnit.SECONDS);
            Sent s = sent.get(i);
            byPosition.put(md.partition() + "/" + md.offset(), new Sent(md.partition(), md.offset(), s.key(), s.value(), s.timestamp(), s.header()));
        }
        assertThat(byPosition).hasSize(n);

        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 6, n);
        assertThat(got).hasSize(n);
        Set<Integer> partitionsUsed = new java.util.HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            Sent s = byPosition.get(r.partition() + "/" + r.offset());
            assertThat(s).as("record at %d/%d was acknowledged there", r.partition(), r.offset()).isNotNull();
            assertThat(r.key()).isEqualTo(s.key());
            assertThat(r.value()).isEqualTo(s.value());
            assertThat(r.timestamp()).isEqualTo(s.timestamp());
            assertThat(r.headers().lastHeader("trace").value()).isEqualTo(s.header());
            partitionsUsed.add(r.partition());
        }
        assertThat(partitionsUsed).hasSize(6);
    }

    @Test
    void theLongestLegalTopicNameIsServedLikeAnyOther() throws Exception {
        // 249 characters: Apache's limit. "<name>-<topic id>" would exceed a 255-byte file name.
        String topic = "L".repeat(240) + "-longest1";
        assertThat(topic).hasSize(249);
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
            producer.send(new ProducerRecord<>("after-the-long-one", 0, null, "x".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 1, 10);
        assertThat(got).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "snappy", "lz4", "zstd"})
    void compressedBatchesRoundTrip(String compression) throws Exception {
        String topic = "compressed-" + compression;
        int n = 3000;
        List<byte[]> values = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of("compression.type", compression, "linger.ms", 20))) {
            for (int i = 0; i < n; i++) {
                byte[] v = ("value " + i + " " + "x".repeat(i % 200)).getBytes(StandardCharsets.UTF_8);
                values.add(v);
                producer.send(new ProducerRecord<>(topic, 0, null, v));
            }
            producer.flush();
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 1, n);
        assertThat(got).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(got.get(i).offset()).isEqualTo(i);
            assertThat(got.get(i).value()).isEqualTo(values.get(i));
        }
    }

    @Test
    void adminCreatesDescribesListsAndDeletesTopics() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("admin-a", 3, (short) 3), new NewTopic("admin-b", 1, (short) -1)
                    .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("admin-a", "admin-b");
            TopicDescription a = admin.describeTopics(List.of("admin-a")).allTopicNames().get(30, TimeUnit.SECONDS).get("admin-a");
            assertThat(a.partitions()).hasSize(3);
            assertThat(a.partitions().get(0).replicas()).hasSize(1);
            assertThat(a.topicId()).isNotNull();
            var cfg = admin.describeConfigs(List.of(new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "admin-b"))).all().get(30, TimeUnit.SECONDS);
            assertThat(cfg.values().iterator().next().get("cleanup.policy").value()).isEqualTo("compact");
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);

            var dup = admin.createTopics(List.of(new NewTopic("admin-a", 1, (short) 1))).all();
            assertThat(dup).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().withCauseInstanceOf(TopicExistsException.class);

            admin.deleteTopics(List.of("admin-a")).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).doesNotContain("admin-a");
            var gone = admin.describeTopics(List.of("admin-a")).allTopicNames();
            assertThat(gone).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().withCauseInstanceOf(UnknownTopicOrPartitionException.class);
            // Names are not identities: a recreated topic is a new incarnation with a new ID and no old records.
            admin.createTopics(List.of(new NewTopic("admin-a", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            TopicDescription again = admin.describeTopics(List.of("admin-a")).allTopicNames().get(30, TimeUnit.SECONDS).get("admin-a");
            assertThat(again.topicId()).isNotEqualTo(a.topicId());
            assertThat(again.partitions()).hasSize(1);
        }
    }

    @Test
    void aMetadataRequestThatAutoCreatesATopicAnswersWithItsLeaderInOneRoundTrip() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            MetadataRequestData create = new MetadataRequestData().setAllowAutoTopicCreation(true);
            create.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("auto-once"));
            create.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("bad/name"));
            MetadataResponseData created = ((MetadataResponse) c.send(ApiKeys.METADATA, (short) 12, create)).data();
            MetadataResponseData.MetadataResponseTopic auto = created.topics().find("auto-once");
            assertThat(auto.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(auto.partitions()).hasSize(1);
            int leader = auto.partitions().get(0).leaderId();
            assertThat(created.brokers().find(leader)).isNotNull();
            assertThat(created.topics().find("bad/name").errorCode()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION.code());

            MetadataRequestData noCreate = new MetadataRequestData().setAllowAutoTopicCreation(false);
            noCreate.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("not-auto"));
            MetadataResponseData unknown = ((MetadataResponse) c.send(ApiKeys.METADATA, (short) 12, noCreate)).data();
            assertThat(unknown.topics().find("not-auto").errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        }
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of("max.block.ms", "5000"))) {
            assertThat(producer.send(new ProducerRecord<>("auto-once", "x".getBytes())).get(30, TimeUnit.SECONDS).offset()).isZero();
        }
    }

    @Test
    void listOffsetsAnswersEarliestLatestByTimestampAndMaxTimestamp() throws Exception {
        String topic = "offsets";
        long t0 = System.currentTimeMillis() - 10_000;
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, t0 + i * 1000L, null, ("v" + i).getBytes())).get(30, TimeUnit.SECONDS);
            }
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(cluster.clientProps())) {
            assertThat(admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.earliest())).all().get(30, TimeUnit.SECONDS).get(tp).offset()).isZero();
            assertThat(admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset()).isEqualTo(10);
            var byTime = admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.forTimestamp(t0 + 4500))).all().get(30, TimeUnit.SECONDS).get(tp);
            assertThat(byTime.offset()).isEqualTo(5);
            assertThat(byTime.timestamp()).isEqualTo(t0 + 5000);
            var max = admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.maxTimestamp())).all().get(30, TimeUnit.SECONDS).get(tp);
            assertThat(max.offset()).isEqualTo(9);
            var future = admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.forTimestamp(t0 + 1_000_000))).all().get(30, TimeUnit.SECONDS).get(tp);
            assertThat(future.offset()).isEqualTo(-1);
        }
    }

    @Test
    void aLongPollFetchReturnsAsSoonAsDataArrives() throws Exception {
        String topic = "long-poll";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put("fetch.max.wait.ms", "20000");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToEnd(List.of(tp));
            c.position(tp);
            c.poll(Duration.ofMillis(200));
            long start = System.nanoTime();
            producer.send(new ProducerRecord<>(topic, 0, null, "wake".getBytes())).get(30, TimeUnit.SECONDS);
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            while (got.isEmpty() && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(15)) {
                c.poll(Duration.ofSeconds(15)).forEach(got::add);
            }
            assertThat(got).hasSize(1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(Arrays.equals(got.get(0).value(), "wake".getBytes())).isTrue();
        }
    }
}
