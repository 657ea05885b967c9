package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every served API at every advertised version, with a realistic request, against the real
 * broker: the response must encode (fields exist only from some version on) and mean what
 * Apache's would. Default-valued codec round trips cannot catch a handler that sets a field
 * its version lacks; this does.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ApiVersionMatrixIT {
    /** No initial rebalance delay: every JoinGroup version starts a fresh group. */
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.group.initial-rebalance-delay", "0s"));

    static KaasCluster cluster;
    static Uuid topicId;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("matrix", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            topicId = admin.describeTopics(List.of("matrix")).allTopicNames().get(30, TimeUnit.SECONDS).get("matrix").topicId();
        }
    }

    static List<ApiVersion> served() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var r = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, (short) 3,
                    new ApiVersionsRequestData().setClientSoftwareName("matrix").setClientSoftwareVersion("1"));
            return new ArrayList<>(r.data().apiKeys());
        }
    }

    static short max(ApiKeys key) throws Exception {
        return served().stream().filter(v -> v.apiKey() == key.id).findFirst().orElseThrow().maxVersion();
    }

    @Test
    void theMatrixCoversEveryAdvertisedApi() throws Exception {
        assertThat(served()).extracting(ApiVersion::apiKey).containsExactlyInAnyOrder(
                ApiKeys.PRODUCE.id, ApiKeys.FETCH.id, ApiKeys.LIST_OFFSETS.id, ApiKeys.METADATA.id, ApiKeys.API_VERSIONS.id,
                ApiKeys.CREATE_TOPICS.id, ApiKeys.DELETE_TOPICS.id, ApiKeys.INIT_PRODUCER_ID.id, ApiKeys.DESCRIBE_CONFIGS.id,
                ApiKeys.FIND_COORDINATOR.id, ApiKeys.JOIN_GROUP.id, ApiKeys.SYNC_GROUP.id, ApiKeys.HEARTBEAT.id, ApiKeys.LEAVE_GROUP.id,
                ApiKeys.OFFSET_COMMIT.id, ApiKeys.OFFSET_FETCH.id, ApiKeys.DESCRIBE_GROUPS.id, ApiKeys.LIST_GROUPS.id,
                ApiKeys.DELETE_GROUPS.id, ApiKeys.OFFSET_DELETE.id);
    }

    @Test
    void apiVersionsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.API_VERSIONS); v++) {
                var req = new ApiVersionsRequestData();
                if (v >= 3) {
                    req.setClientSoftwareName("matrix").setClientSoftwareVersion("1.0");
                }
                var r = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, v, req);
                assertThat(r.data().errorCode()).as("v%d", v).isZero();
                assertThat(r.data().apiKeys()).hasSize(20);
            }
        }
    }

    @Test
    void createDescribeAndDeleteTopicsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.CREATE_TOPICS); v++) {
                String name = "created-v" + v;
                var req = new CreateTopicsRequestData().setTimeoutMs(30_000);
                req.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(2).setReplicationFactor((short) 1));
                var r = (CreateTopicsResponse) c.send(ApiKeys.CREATE_TOPICS, v, req);
                var t = r.data().topics().find(name);
                assertThat(Errors.forCode(t.errorCode())).as("create v%d", v).isEqualTo(Errors.NONE);
                if (v >= 5) {
                    assertThat(t.numPartitions()).isEqualTo(2);
                    assertThat(t.configs()).isNotEmpty();
                }
                if (v >= 7) {
                    assertThat(t.topicId()).isNotEqualTo(Uuid.ZERO_UUID);
                }
            }
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_CONFIGS); v++) {
                var req = new DescribeConfigsRequestData();
                req.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName("matrix").setConfigurationKeys(null));
                if (v >= 1) {
                    req.setIncludeSynonyms(true);
                }
                if (v >= 3) {
                    req.setIncludeDocumentation(true);
                }
                var r = (DescribeConfigsResponse) c.send(ApiKeys.DESCRIBE_CONFIGS, v, req);
                var result = r.data().results().get(0);
                assertThat(result.errorCode()).as("describe v%d", v).isZero();
                assertThat(result.configs()).anySatisfy(cfg -> assertThat(cfg.name()).isEqualTo("cleanup.policy"));
            }
            for (short v = 0; v <= max(ApiKeys.DELETE_TOPICS); v++) {
                String name = "created-v" + v;
                var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
                if (v >= 6) {
                    req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(name));
                } else {
                    req.topicNames().add(name);
                }
                var r = (DeleteTopicsResponse) c.send(ApiKeys.DELETE_TOPICS, v, req);
                assertThat(r.data().responses()).hasSize(1);
                assertThat(Errors.forCode(r.data().responses().iterator().next().errorCode())).as("delete v%d", v).isEqualTo(Errors.NONE);
            }
        }
    }

    @Test
    void metadataAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.METADATA); v++) {
                var req = new MetadataRequestData();
                req.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("matrix"));
                if (v >= 4) {
                    req.setAllowAutoTopicCreation(false);
                }
                var r = (MetadataResponse) c.send(ApiKeys.METADATA, v, req);
                assertThat(r.data().brokers()).as("v%d", v).hasSize(1);
                var t = r.data().topics().find("matrix");
                assertThat(t.errorCode()).isZero();
                assertThat(t.partitions()).hasSize(1);
                assertThat(t.partitions().get(0).leaderId()).isEqualTo(1);
                if (v >= 10) {
                    assertThat(t.topicId()).isEqualTo(topicId);
                }
            }
        }
    }

    @Test
    void initProducerIdProduceFetchAndListOffsetsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.INIT_PRODUCER_ID); v++) {
                var r = (InitProducerIdResponse) c.send(ApiKeys.INIT_PRODUCER_ID, v,
                        new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000));
                assertThat(r.data().errorCode()).as("v%d", v).isZero();
                assertThat(r.data().producerId()).isNotNegative();
            }
            long expectedOffset = 0;
            for (short v = 0; v <= max(ApiKeys.PRODUCE); v++) {
                byte magic = v <= 1 ? RecordBatch.MAGIC_VALUE_V0 : v == 2 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.MAGIC_VALUE_V2;
                MemoryRecords records = MemoryRecords.withRecords(magic, 0L, CompressionType.NONE, TimestampType.CREATE_TIME,
                        new SimpleRecord(System.currentTimeMillis(), "k".getBytes(), ("produce-v" + v).getBytes()));
                var req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
                req.topicData().add(new ProduceRequestData.TopicProduceData().setName("matrix").setPartitionData(
                        List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
                var r = (ProduceResponse) c.send(ApiKeys.PRODUCE, v, req);
                var p = r.data().responses().find("matrix").partitionResponses().get(0);
                assertThat(Errors.forCode(p.errorCode())).as("produce v%d", v).isEqualTo(Errors.NONE);
                assertThat(p.baseOffset()).isEqualTo(expectedOffset++);
            }
            for (short v = 0; v <= max(ApiKeys.FETCH); v++) {
                var req = new FetchRequestData().setMaxWaitMs(100).setMinBytes(1).setMaxBytes(1 << 20).setSessionEpoch(-1);
                var topic = new FetchRequestData.FetchTopic();
                if (v >= 13) {
                    topic.setTopicId(topicId);
                } else {
                    topic.setTopic("matrix");
                }
                topic.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
                req.topics().add(topic);
                if (v < 15) {
                    req.setReplicaId(-1);
                }
                var r = (FetchResponse) c.send(ApiKeys.FETCH, v, req);
                assertThat(r.data().errorCode()).as("fetch v%d", v).isZero();
                var pd = r.data().responses().get(0).partitions().get(0);
                assertThat(Errors.forCode(pd.errorCode())).as("fetch v%d", v).isEqualTo(Errors.NONE);
                List<String> values = new ArrayList<>();
                byte expectedMagic = v <= 1 ? RecordBatch.MAGIC_VALUE_V0 : v <= 3 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.MAGIC_VALUE_V2;
                for (RecordBatch b : ((MemoryRecords) pd.records()).batches()) {
                    assertThat(b.magic()).as("fetch v%d magic", v).isEqualTo(expectedMagic);
                    for (Record rec : b) {
                        values.add(StandardCharsets.UTF_8.decode(rec.value()).toString());
                    }
                }
                assertThat(values).as("fetch v%d", v).startsWith("produce-v0", "produce-v1", "produce-v2", "produce-v3");
                assertThat(pd.highWatermark()).isEqualTo(expectedOffset);
            }
            for (short v = 0; v <= max(ApiKeys.LIST_OFFSETS); v++) {
                var req = new ListOffsetsRequestData().setReplicaId(-1);
                req.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("matrix").setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1).setMaxNumOffsets(1))));
                var r = (ListOffsetsResponse) c.send(ApiKeys.LIST_OFFSETS, v, req);
                var p = r.data().topics().get(0).partitions().get(0);
                assertThat(p.errorCode()).as("list offsets v%d", v).isZero();
                long offset = v == 0 ? p.oldStyleOffsets().get(0) : p.offset();
                assertThat(offset).as("latest at v%d", v).isEqualTo(expectedOffset);
            }
        }
    }
}
