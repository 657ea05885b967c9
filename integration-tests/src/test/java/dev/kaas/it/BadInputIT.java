package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bad input gets Apache's answer or a clean close, nothing is written, and the broker keeps
 * serving everyone else. Each test ends by checking the broker still answers a fresh connection.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BadInputIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("victim", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void brokerStillServes() throws Exception {
        assertThat(cluster.brokerAlive()).isTrue();
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var r = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, (short) 3, new ApiVersionsRequestData()
                    .setClientSoftwareName("it").setClientSoftwareVersion("1"));
            assertThat(r.data().errorCode()).isZero();
        }
    }

    @Test
    void aTruncatedFrameIsDroppedWithItsConnection() throws Exception {
        ByteBuffer full = RawClient.frame(ApiKeys.METADATA, (short) 12, 1, new MetadataRequestData());
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // Apache reads a frame whole before parsing it: no answer to the first part, and the connection stays
            // open (until connections.max.idle.ms) for the rest, which completes the request.
            c.writeRaw(java.util.Arrays.copyOf(full.array(), full.limit() - 3));
            assertThat(c.silentFor(java.time.Duration.ofSeconds(1))).as("no answer to part of a frame, no close").isTrue();
            c.writeRaw(java.util.Arrays.copyOfRange(full.array(), full.limit() - 3, full.limit()));
            ByteBuffer resp = c.readFrame();
            assertThat(resp.getInt()).as("correlation id").isEqualTo(1);
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // The client goes away mid-frame: nothing to answer; the broker serves the next connection (checked after each test).
            c.writeRaw(java.util.Arrays.copyOf(full.array(), full.limit() - 3));
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // A frame whose size covers only part of a header: unparsable, so the connection closes.
            c.writeRaw(new byte[] {0, 0, 0, 9, 0, 3, 0, 12, 0, 0, 0, 1, 0});
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void anOversizedOrNegativeFrameSizeClosesBeforeAnyAllocation() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            c.writeRaw(ByteBuffer.allocate(4).putInt(200 * 1024 * 1024).array());
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            c.writeRaw(ByteBuffer.allocate(4).putInt(-5).array());
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void anUnknownApiKeyClosesTheConnection() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            ByteBuffer f = ByteBuffer.allocate(4 + 10).putInt(10).putShort((short) 999).putShort((short) 0).putInt(7).putShort((short) -1);
            c.writeRaw(f.array());
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void anUnsupportedVersionClosesExceptApiVersionsWhichAnswersInV0() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            ByteBuffer f = RawClient.frame(ApiKeys.METADATA, (short) 12, 1, new MetadataRequestData());
            f.putShort(6, (short) 99);
            c.writeRaw(f.array());
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // KIP-511: a client newer than the broker sends ApiVersions at its own top version.
            ByteBuffer f = RawClient.frame(ApiKeys.API_VERSIONS, (short) 3, 5, new ApiVersionsRequestData()
                    .setClientSoftwareName("future").setClientSoftwareVersion("9"));
            f.putShort(6, (short) 77);
            c.writeRaw(f.array());
            ByteBuffer resp = c.readFrame();
            assertThat(resp.getInt()).isEqualTo(5);
            ApiVersionsResponseData data = ApiVersionsResponse.parse(resp, (short) 0).data();
            assertThat(Errors.forCode(data.errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);
            assertThat(data.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion()).isEqualTo((short) 3);
        }
    }

    @Test
    void aCorruptBatchIsRejectedAndNothingIsWritten() throws Exception {
        MemoryRecords records = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("intact".getBytes()));
        records.buffer().put(records.sizeInBytes() - 1, (byte) 0x7F);
        ProduceRequestData req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName("victim")
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var resp = (ProduceResponse) c.send(ApiKeys.PRODUCE, (short) 9, req);
            var p = resp.data().responses().find("victim").partitionResponses().get(0);
            assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);
        }
        assertThat(latest("victim")).isZero();
    }

    @Test
    void aFailedAcksZeroProduceClosesTheConnectionAsApacheDoes() throws Exception {
        MemoryRecords records = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("intact".getBytes()));
        records.buffer().put(records.sizeInBytes() - 1, (byte) 0x7F);
        ProduceRequestData req = new ProduceRequestData().setAcks((short) 0).setTimeoutMs(10_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName("victim")
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            c.writeRaw(RawClient.frame(ApiKeys.PRODUCE, (short) 9, 1, req).array());
            assertThat(c.closedByPeer()).isTrue();
        }
        assertThat(latest("victim")).isZero();
    }

    @Test
    void invalidTopicNamesAreRefusedAndNeverBecomePaths() throws Exception {
        List<String> bad = List.of("..", ".", "a/b", "../escape", "x".repeat(250), "");
        try (Admin admin = Admin.create(cluster.clientProps())) {
            for (String name : bad) {
                var f = admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all();
                assertThat(f).as("create '%s'", name).failsWithin(30, TimeUnit.SECONDS).withThrowableThat()
                        .withCauseInstanceOf(InvalidTopicException.class);
            }
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            MetadataRequestData req = new MetadataRequestData().setAllowAutoTopicCreation(true);
            for (String name : bad) {
                req.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(name));
            }
            var resp = (MetadataResponse) c.send(ApiKeys.METADATA, (short) 12, req);
            assertThat(resp.data().topics()).hasSize(bad.size()).allSatisfy(t ->
                    assertThat(Errors.forCode(t.errorCode())).as(t.name()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION));
        }
        try (KafkaProducer<String, String> p = new KafkaProducer<>(props(Map.of("max.block.ms", "10000")), new StringSerializer(), new StringSerializer())) {
            // The producer's metadata wait ends on the INVALID_TOPIC_EXCEPTION answer, long before max.block.ms: a
            // TimeoutException here would mean the broker never said why.
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> p.send(new ProducerRecord<>("../escape", "v")).get(30, TimeUnit.SECONDS)))
                    .isInstanceOf(java.util.concurrent.ExecutionException.class).cause().isInstanceOf(InvalidTopicException.class);
        }
        try (Stream<Path> inData = Files.list(cluster.dataDir()); Stream<Path> beside = Files.list(cluster.dataDir().getParent())) {
            assertThat(inData.map(p -> p.getFileName().toString())).allMatch(n -> n.equals("__cluster") || n.startsWith("victim-"));
            assertThat(beside.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains("escape"));
        }
    }

    private static java.util.Properties props(Map<String, String> extra) {
        java.util.Properties p = cluster.clientProps();
        p.putAll(extra);
        return p;
    }

    private static long latest(String topic) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
        }
    }
}
