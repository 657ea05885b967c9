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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AlterReplicaLogDirsResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
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

    /** The APIs kaas claims (compatibility.md). */
    static final List<ApiKeys> CLAIMED = List.of(
            ApiKeys.PRODUCE, ApiKeys.FETCH, ApiKeys.LIST_OFFSETS, ApiKeys.METADATA, ApiKeys.API_VERSIONS,
            ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.DELETE_RECORDS, ApiKeys.INIT_PRODUCER_ID, ApiKeys.DESCRIBE_CONFIGS,
            ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP, ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP,
            ApiKeys.OFFSET_COMMIT, ApiKeys.OFFSET_FETCH, ApiKeys.DESCRIBE_GROUPS, ApiKeys.LIST_GROUPS,
            ApiKeys.DELETE_GROUPS, ApiKeys.OFFSET_DELETE, ApiKeys.OFFSET_FOR_LEADER_EPOCH, ApiKeys.DESCRIBE_CLUSTER,
            ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.ADD_OFFSETS_TO_TXN, ApiKeys.END_TXN, ApiKeys.WRITE_TXN_MARKERS,
            ApiKeys.TXN_OFFSET_COMMIT, ApiKeys.DESCRIBE_PRODUCERS, ApiKeys.DESCRIBE_TRANSACTIONS, ApiKeys.LIST_TRANSACTIONS,
            ApiKeys.DESCRIBE_LOG_DIRS, ApiKeys.ALTER_REPLICA_LOG_DIRS, ApiKeys.ELECT_LEADERS, ApiKeys.CREATE_PARTITIONS,
            ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS,
            ApiKeys.LIST_PARTITION_REASSIGNMENTS, ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE,
            ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, ApiKeys.DESCRIBE_CLIENT_QUOTAS,
            ApiKeys.ALTER_CLIENT_QUOTAS, ApiKeys.DESCRIBE_ACLS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS);

    /**
     * Apache 3.7's latest stable version from kafka-clients 3.7.2, not the broker's own ApiVersions answer:
     * a handler whose range shrank would otherwise shrink the matrix with it.
     */
    static short max(ApiKeys key) {
        return key.latestVersion(false);
    }

    @Test
    void theMatrixCoversEveryAdvertisedApi() throws Exception {
        assertThat(served()).extracting(ApiVersion::apiKey).containsExactlyInAnyOrderElementsOf(
                CLAIMED.stream().map(k -> k.id).toList());
    }

    @Test
    void everyClaimedApiIsAdvertisedWithApache37sStableRange() throws Exception {
        Map<Short, ApiVersion> served = new java.util.HashMap<>();
        served().forEach(v -> served.put(v.apiKey(), v));
        for (ApiKeys key : CLAIMED) {
            assertThat(served.get(key.id)).as("%s advertised", key).isNotNull();
            assertThat(served.get(key.id).minVersion()).as("%s min", key).isEqualTo(key.oldestVersion());
            assertThat(served.get(key.id).maxVersion()).as("%s max", key).isEqualTo(key.latestVersion(false));
        }
    }

    /** On a listener without SASL, Apache's KafkaApis answers both SASL APIs with ILLEGAL_SASL_STATE. */
    @Test
    void saslApisWithoutSaslAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.SASL_HANDSHAKE); v++) {
                var r = (org.apache.kafka.common.requests.SaslHandshakeResponse) c.send(ApiKeys.SASL_HANDSHAKE, v,
                        new org.apache.kafka.common.message.SaslHandshakeRequestData().setMechanism("PLAIN"));
                assertThat(Errors.forCode(r.data().errorCode())).as("SaslHandshake v%d", v).isEqualTo(Errors.ILLEGAL_SASL_STATE);
            }
            for (short v = 0; v <= max(ApiKeys.SASL_AUTHENTICATE); v++) {
                var r = (org.apache.kafka.common.requests.SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, v,
                        new org.apache.kafka.common.message.SaslAuthenticateRequestData().setAuthBytes(new byte[] {0, 'a', 0, 'b'}));
                assertThat(Errors.forCode(r.data().errorCode())).as("SaslAuthenticate v%d", v).isEqualTo(Errors.ILLEGAL_SASL_STATE);
                assertThat(r.data().errorMessage()).isEqualTo("SaslAuthenticate request received after successful authentication");
            }
        }
    }

    @Test
    void scramCredentialApisAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS); v++) {
                String user = "matrix-user-" + v;
                var altered = (org.apache.kafka.common.requests.AlterUserScramCredentialsResponse) c.send(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, v,
                        new org.apache.kafka.common.message.AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                                new org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion()
                                        .setName(user).setMechanism((byte) 2).setIterations(4096).setSalt(new byte[] {1, 2, 3})
                                        .setSaltedPassword(new byte[64]))));
                assertThat(altered.data().results()).singleElement().satisfies(r -> {
                    assertThat(r.user()).isEqualTo(user);
                    assertThat(Errors.forCode(r.errorCode())).as("AlterUserScramCredentials v%d", (int) 0).isEqualTo(Errors.NONE);
                });
            }
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS); v++) {
                var described = (org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse) c.send(
                        ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, v, new org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData()
                                .setUsers(List.of(new org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData.UserName()
                                        .setName("matrix-user-0"))));
                assertThat(described.data().results()).singleElement().satisfies(r -> {
                    assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.NONE);
                    assertThat(r.credentialInfos()).singleElement().satisfies(i -> assertThat(i.iterations()).isEqualTo(4096));
                });
            }
        }
    }

    /** Without {@code authorizer.class.name} (this cluster), the ACL APIs answer SECURITY_DISABLED at every version, as Apache's. */
    @Test
    void aclApisWithoutAnAuthorizerAtEveryVersion() throws Exception {
        var acl = new org.apache.kafka.common.acl.AclBinding(new org.apache.kafka.common.resource.ResourcePattern(
                org.apache.kafka.common.resource.ResourceType.TOPIC, "t", org.apache.kafka.common.resource.PatternType.LITERAL),
                new org.apache.kafka.common.acl.AccessControlEntry("User:alice", "*", org.apache.kafka.common.acl.AclOperation.READ,
                        org.apache.kafka.common.acl.AclPermissionType.ALLOW));
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_ACLS); v++) {
                short version = v;
                var described = (org.apache.kafka.common.requests.DescribeAclsResponse) c.send(ApiKeys.DESCRIBE_ACLS, v,
                        new org.apache.kafka.common.requests.DescribeAclsRequest.Builder(acl.toFilter()).build(v).data());
                assertThat(Errors.forCode(described.data().errorCode())).as("DescribeAcls v%d", (int) version).isEqualTo(Errors.SECURITY_DISABLED);
                assertThat(described.data().errorMessage()).isEqualTo("No Authorizer is configured on the broker");
                var created = (org.apache.kafka.common.requests.CreateAclsResponse) c.send(ApiKeys.CREATE_ACLS, v,
                        new org.apache.kafka.common.message.CreateAclsRequestData().setCreations(
                                List.of(org.apache.kafka.common.requests.CreateAclsRequest.aclCreation(acl))));
                assertThat(created.data().results()).singleElement().satisfies(r ->
                        assertThat(Errors.forCode(r.errorCode())).as("CreateAcls v%d", (int) version).isEqualTo(Errors.SECURITY_DISABLED));
                var deleted = (org.apache.kafka.common.requests.DeleteAclsResponse) c.send(ApiKeys.DELETE_ACLS, v,
                        new org.apache.kafka.common.message.DeleteAclsRequestData().setFilters(
                                List.of(org.apache.kafka.common.requests.DeleteAclsRequest.deleteAclsFilter(acl.toFilter()))));
                assertThat(deleted.data().filterResults()).singleElement().satisfies(r ->
                        assertThat(Errors.forCode(r.errorCode())).as("DeleteAcls v%d", (int) version).isEqualTo(Errors.SECURITY_DISABLED));
            }
        }
    }

    @Test
    void clientQuotaApisAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.ALTER_CLIENT_QUOTAS); v++) {
                String client = "matrix-client-" + v;
                var altered = (org.apache.kafka.common.requests.AlterClientQuotasResponse) c.send(ApiKeys.ALTER_CLIENT_QUOTAS, v,
                        new org.apache.kafka.common.message.AlterClientQuotasRequestData().setEntries(List.of(
                                new org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData()
                                        .setEntity(List.of(new org.apache.kafka.common.message.AlterClientQuotasRequestData.EntityData()
                                                .setEntityType("client-id").setEntityName(client)))
                                        .setOps(List.of(new org.apache.kafka.common.message.AlterClientQuotasRequestData.OpData()
                                                .setKey("producer_byte_rate").setValue(1e12))))));
                short version = v;
                assertThat(altered.data().entries()).singleElement().satisfies(e -> {
                    assertThat(Errors.forCode(e.errorCode())).as("AlterClientQuotas v%d", (int) version).isEqualTo(Errors.NONE);
                    assertThat(e.entity()).singleElement().satisfies(x -> assertThat(x.entityName()).isEqualTo(client));
                });
            }
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_CLIENT_QUOTAS); v++) {
                var described = (org.apache.kafka.common.requests.DescribeClientQuotasResponse) c.send(ApiKeys.DESCRIBE_CLIENT_QUOTAS, v,
                        new org.apache.kafka.common.message.DescribeClientQuotasRequestData().setComponents(List.of(
                                new org.apache.kafka.common.message.DescribeClientQuotasRequestData.ComponentData().setEntityType("client-id")
                                        .setMatchType(org.apache.kafka.common.requests.DescribeClientQuotasRequest.MATCH_TYPE_EXACT)
                                        .setMatch("matrix-client-0"))));
                assertThat(Errors.forCode(described.data().errorCode())).isEqualTo(Errors.NONE);
                assertThat(described.data().entries()).singleElement().satisfies(e ->
                        assertThat(e.values()).singleElement().satisfies(x -> assertThat(x.value()).isEqualTo(1e12)));
            }
        }
    }

    @Test
    void unknownTopicsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // Metadata v4+ can refuse auto-creation; before v4 Apache auto-creates, as kaas does.
            for (short v = 4; v <= max(ApiKeys.METADATA); v++) {
                var req = new MetadataRequestData().setAllowAutoTopicCreation(false);
                req.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("no-such-topic"));
                var r = (MetadataResponse) c.send(ApiKeys.METADATA, v, req);
                assertThat(Errors.forCode(r.data().topics().find("no-such-topic").errorCode())).as("metadata v%d", v)
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            for (short v = 0; v <= max(ApiKeys.PRODUCE); v++) {
                byte magic = v <= 1 ? RecordBatch.MAGIC_VALUE_V0 : v == 2 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.MAGIC_VALUE_V2;
                MemoryRecords records = MemoryRecords.withRecords(magic, 0L, CompressionType.NONE, TimestampType.CREATE_TIME,
                        new SimpleRecord(System.currentTimeMillis(), "k".getBytes(), "lost".getBytes()));
                var req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
                req.topicData().add(new ProduceRequestData.TopicProduceData().setName("no-such-topic").setPartitionData(
                        List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
                var r = (ProduceResponse) c.send(ApiKeys.PRODUCE, v, req);
                var p = r.data().responses().find("no-such-topic").partitionResponses().get(0);
                assertThat(Errors.forCode(p.errorCode())).as("produce v%d", v).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            for (short v = 0; v <= max(ApiKeys.FETCH); v++) {
                var req = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setSessionEpoch(-1);
                var topic = new FetchRequestData.FetchTopic();
                Uuid unknownId = Uuid.randomUuid();
                if (v >= 13) {
                    topic.setTopicId(unknownId);
                } else {
                    topic.setTopic("no-such-topic");
                }
                topic.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
                req.topics().add(topic);
                if (v < 15) {
                    req.setReplicaId(-1);
                }
                var r = (FetchResponse) c.send(ApiKeys.FETCH, v, req);
                assertThat(Errors.forCode(r.data().errorCode())).as("fetch v%d top level", v).isEqualTo(Errors.NONE);
                var pd = r.data().responses().get(0).partitions().get(0);
                assertThat(Errors.forCode(pd.errorCode())).as("fetch v%d", v)
                        .isEqualTo(v >= 13 ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION);
                if (v >= 13) {
                    assertThat(r.data().responses().get(0).topicId()).isEqualTo(unknownId);
                }
            }
            for (short v = 0; v <= max(ApiKeys.LIST_OFFSETS); v++) {
                var req = new ListOffsetsRequestData().setReplicaId(-1);
                req.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("no-such-topic").setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1).setMaxNumOffsets(1))));
                var r = (ListOffsetsResponse) c.send(ApiKeys.LIST_OFFSETS, v, req);
                assertThat(Errors.forCode(r.data().topics().get(0).partitions().get(0).errorCode())).as("list offsets v%d", v)
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_CONFIGS); v++) {
                var req = new DescribeConfigsRequestData();
                req.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName("no-such-topic").setConfigurationKeys(null));
                var r = (DescribeConfigsResponse) c.send(ApiKeys.DESCRIBE_CONFIGS, v, req);
                assertThat(Errors.forCode(r.data().results().get(0).errorCode())).as("describe configs v%d", v)
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            for (short v = 0; v <= max(ApiKeys.DELETE_TOPICS); v++) {
                var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
                Uuid unknownId = Uuid.randomUuid();
                if (v >= 6) {
                    req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(null).setTopicId(unknownId));
                } else {
                    req.topicNames().add("no-such-topic");
                }
                var r = (DeleteTopicsResponse) c.send(ApiKeys.DELETE_TOPICS, v, req);
                assertThat(r.data().responses()).hasSize(1);
                var result = r.data().responses().iterator().next();
                assertThat(Errors.forCode(result.errorCode())).as("delete v%d", v)
                        .isEqualTo(v >= 6 ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION);
                if (v >= 6) {
                    assertThat(result.topicId()).isEqualTo(unknownId);
                }
            }
        }
    }

    @Test
    void deleteTopicsByIdAtV6() throws Exception {
        Uuid id;
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("deleted-by-id", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            id = admin.describeTopics(List.of("deleted-by-id")).allTopicNames().get(30, TimeUnit.SECONDS).get("deleted-by-id").topicId();
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
            req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(null).setTopicId(id));
            var r = (DeleteTopicsResponse) c.send(ApiKeys.DELETE_TOPICS, (short) 6, req);
            var result = r.data().responses().iterator().next();
            assertThat(Errors.forCode(result.errorCode())).isEqualTo(Errors.NONE);
            assertThat(result.topicId()).isEqualTo(id);
            assertThat(result.name()).isEqualTo("deleted-by-id");
        }
        try (Admin admin = Admin.create(cluster.clientProps())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("deleted-by-id") && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).doesNotContain("deleted-by-id");
        }
    }

    @Test
    void metadataForAllTopicsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.METADATA); v++) {
                // v0: an empty list means all topics; v1+: null means all, an empty list none.
                var all = new MetadataRequestData().setTopics(v == 0 ? new ArrayList<>() : null);
                if (v >= 4) {
                    all.setAllowAutoTopicCreation(false);
                }
                var r = (MetadataResponse) c.send(ApiKeys.METADATA, v, all);
                var t = r.data().topics().find("matrix");
                assertThat(t).as("all topics at v%d", v).isNotNull();
                assertThat(t.errorCode()).isZero();
                assertThat(t.partitions()).hasSize(1);
                if (v >= 10) {
                    assertThat(t.topicId()).isEqualTo(topicId);
                }
                if (v >= 1) {
                    var none = (MetadataResponse) c.send(ApiKeys.METADATA, v, new MetadataRequestData().setTopics(new ArrayList<>())
                            .setAllowAutoTopicCreation(v < 4));
                    assertThat(none.data().topics()).as("no topics at v%d", v).isEmpty();
                    assertThat(none.data().brokers()).hasSize(1);
                }
            }
        }
    }

    @Test
    void listOffsetsByTimestampFromV1() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("stamped", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            // One batch: Apache finds the first record at or after the timestamp, not only the batch.
            MemoryRecords records = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, 0L, CompressionType.NONE, TimestampType.CREATE_TIME,
                    new SimpleRecord(1_000L, null, "a".getBytes()), new SimpleRecord(3_000L, null, "b".getBytes()),
                    new SimpleRecord(2_000L, null, "c".getBytes()));
            var produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
            produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("stamped").setPartitionData(
                    List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
            var pr = (ProduceResponse) c.send(ApiKeys.PRODUCE, max(ApiKeys.PRODUCE), produce);
            assertThat(pr.data().responses().find("stamped").partitionResponses().get(0).errorCode()).isZero();
            for (short v = 1; v <= max(ApiKeys.LIST_OFFSETS); v++) {
                // {timestamp asked, offset expected, timestamp expected}; -2 earliest, -3 max timestamp (v7+).
                List<long[]> cases = new ArrayList<>(List.of(
                        new long[] {500, 0, 1_000}, new long[] {1_500, 1, 3_000}, new long[] {3_000, 1, 3_000},
                        new long[] {3_001, -1, -1}, new long[] {-2, 0, -1}));
                if (v >= 7) {
                    cases.add(new long[] {-3, 1, 3_000});
                }
                for (long[] k : cases) {
                    var req = new ListOffsetsRequestData().setReplicaId(-1);
                    req.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("stamped").setPartitions(List.of(
                            new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(k[0]))));
                    var r = (ListOffsetsResponse) c.send(ApiKeys.LIST_OFFSETS, v, req);
                    var p = r.data().topics().get(0).partitions().get(0);
                    assertThat(Errors.forCode(p.errorCode())).as("v%d at %d", v, k[0]).isEqualTo(Errors.NONE);
                    assertThat(p.offset()).as("offset, v%d at %d", v, k[0]).isEqualTo(k[1]);
                    assertThat(p.timestamp()).as("timestamp, v%d at %d", v, k[0]).isEqualTo(k[2]);
                }
            }
        }
    }

    @Test
    void apiVersionsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = ApiKeys.API_VERSIONS.oldestVersion(); v <= max(ApiKeys.API_VERSIONS); v++) {
                var req = new ApiVersionsRequestData();
                if (v >= 3) {
                    req.setClientSoftwareName("matrix").setClientSoftwareVersion("1.0");
                }
                var r = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, v, req);
                assertThat(r.data().errorCode()).as("v%d", v).isZero();
                assertThat(r.data().apiKeys()).hasSize(CLAIMED.size());
            }
        }
    }

    /** Each version moves the log start one record further; above the high watermark and unknown partitions are refused. */
    @Test
    void deleteRecordsAtEveryVersion() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("trimmed", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
            produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("trimmed").setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(CompressionType.NONE,
                            new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes()), new SimpleRecord("c".getBytes()),
                            new SimpleRecord("d".getBytes()))))));
            var pr = (ProduceResponse) c.send(ApiKeys.PRODUCE, max(ApiKeys.PRODUCE), produce);
            assertThat(pr.data().responses().find("trimmed").partitionResponses().get(0).errorCode()).isZero();
            for (short v = 0; v <= max(ApiKeys.DELETE_RECORDS); v++) {
                var req = new DeleteRecordsRequestData().setTimeoutMs(30_000);
                req.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("trimmed").setPartitions(List.of(
                        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(v + 1),
                        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(1).setOffset(0))));
                req.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("no-such-topic").setPartitions(List.of(
                        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(0))));
                var r = (DeleteRecordsResponse) c.send(ApiKeys.DELETE_RECORDS, v, req);
                var trimmed = r.data().topics().find("trimmed").partitions();
                assertThat(Errors.forCode(trimmed.find(0).errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(trimmed.find(0).lowWatermark()).as("v%d", v).isEqualTo(v + 1);
                assertThat(Errors.forCode(trimmed.find(1).errorCode())).as("v%d", v).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                assertThat(Errors.forCode(r.data().topics().find("no-such-topic").partitions().find(0).errorCode()))
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            var beyond = new DeleteRecordsRequestData().setTimeoutMs(30_000);
            beyond.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("trimmed").setPartitions(List.of(
                    new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(5))));
            var r = (DeleteRecordsResponse) c.send(ApiKeys.DELETE_RECORDS, max(ApiKeys.DELETE_RECORDS), beyond);
            var p = r.data().topics().find("trimmed").partitions().find(0);
            assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
            assertThat(p.lowWatermark()).isEqualTo(-1);
        }
    }

    /** The data directory as the one log dir, with "matrix"-0; its size from v0, the volume's bytes from v4. */
    @Test
    void describeLogDirsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_LOG_DIRS); v++) {
                var req = new DescribeLogDirsRequestData();
                req.topics().add(new DescribeLogDirsRequestData.DescribableLogDirTopic().setTopic("matrix").setPartitions(List.of(0, 7)));
                var r = (DescribeLogDirsResponse) c.send(ApiKeys.DESCRIBE_LOG_DIRS, v, req);
                assertThat(r.data().results()).as("v%d", v).hasSize(1);
                var dir = r.data().results().get(0);
                assertThat(Errors.forCode(dir.errorCode())).isEqualTo(Errors.NONE);
                assertThat(java.nio.file.Path.of(dir.logDir())).isEqualTo(cluster.dataDir().toAbsolutePath());
                assertThat(dir.topics()).as("v%d: only what is here", v).hasSize(1);
                assertThat(dir.topics().get(0).partitions()).extracting(p -> p.partitionIndex()).containsExactly(0);
                if (v >= 4) {
                    assertThat(dir.totalBytes()).isPositive();
                    assertThat(dir.usableBytes()).isBetween(0L, dir.totalBytes());
                }
                var all = (DescribeLogDirsResponse) c.send(ApiKeys.DESCRIBE_LOG_DIRS, v, new DescribeLogDirsRequestData().setTopics(null));
                assertThat(all.data().results().get(0).topics()).extracting(t -> t.name()).contains("matrix");
            }
        }
    }

    @Test
    void alterReplicaLogDirsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.ALTER_REPLICA_LOG_DIRS); v++) {
                var req = new AlterReplicaLogDirsRequestData();
                var here = new AlterReplicaLogDirsRequestData.AlterReplicaLogDir().setPath(cluster.dataDir().toAbsolutePath().toString());
                here.topics().add(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic().setName("matrix").setPartitions(List.of(0, 9)));
                req.dirs().add(here);
                var elsewhere = new AlterReplicaLogDirsRequestData.AlterReplicaLogDir().setPath("/no/such/dir");
                elsewhere.topics().add(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic().setName("other").setPartitions(List.of(0)));
                req.dirs().add(elsewhere);
                var r = (AlterReplicaLogDirsResponse) c.send(ApiKeys.ALTER_REPLICA_LOG_DIRS, v, req);
                Map<String, Errors> errors = new java.util.HashMap<>();
                r.data().results().forEach(t -> t.partitions().forEach(p ->
                        errors.put(t.topicName() + "-" + p.partitionIndex(), Errors.forCode(p.errorCode()))));
                assertThat(errors).as("v%d", v).containsExactlyInAnyOrderEntriesOf(Map.of("matrix-0", Errors.NONE,
                        "matrix-9", Errors.UNKNOWN_TOPIC_OR_PARTITION, "other-0", Errors.LOG_DIR_NOT_FOUND));
            }
        }
    }

    /** Each version grows its own topic by one partition; no increase, unknown topics and duplicates are refused. */
    @Test
    void createPartitionsAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort()); Admin admin = Admin.create(cluster.clientProps())) {
            for (short v = 0; v <= max(ApiKeys.CREATE_PARTITIONS); v++) {
                String topic = "grow-v" + v;
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
                var req = new CreatePartitionsRequestData().setTimeoutMs(30_000);
                req.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(topic).setCount(2).setAssignments(null));
                req.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("matrix").setCount(1).setAssignments(null));
                req.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("no-such-topic").setCount(2)
                        .setAssignments(null));
                var r = (CreatePartitionsResponse) c.send(ApiKeys.CREATE_PARTITIONS, v, req);
                Map<String, Errors> errors = new java.util.HashMap<>();
                r.data().results().forEach(t -> errors.put(t.name(), Errors.forCode(t.errorCode())));
                assertThat(errors).as("v%d", v).containsExactlyInAnyOrderEntriesOf(Map.of(topic, Errors.NONE,
                        "matrix", Errors.INVALID_PARTITIONS, "no-such-topic", Errors.UNKNOWN_TOPIC_OR_PARTITION));
                var md = new MetadataRequestData().setAllowAutoTopicCreation(false);
                md.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(topic));
                var meta = (MetadataResponse) c.send(ApiKeys.METADATA, max(ApiKeys.METADATA), md);
                assertThat(meta.data().topics().find(topic).partitions()).as("v%d: served at once", v).hasSize(2);

                var dup = new CreatePartitionsRequestData().setTimeoutMs(30_000);
                dup.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(topic).setCount(3).setAssignments(null));
                dup.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(topic).setCount(4).setAssignments(null));
                var d = (CreatePartitionsResponse) c.send(ApiKeys.CREATE_PARTITIONS, v, dup);
                assertThat(d.data().results()).hasSize(1).allSatisfy(t -> assertThat(Errors.forCode(t.errorCode())).isEqualTo(Errors.INVALID_REQUEST));
            }
        }
    }

    /** The value of {@code key} on topic {@code topic} as DescribeConfigs answers it. */
    static String describedValue(RawClient c, String topic, String key) throws Exception {
        var req = new org.apache.kafka.common.message.DescribeConfigsRequestData();
        req.resources().add(new org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource()
                .setResourceType(org.apache.kafka.common.config.ConfigResource.Type.TOPIC.id()).setResourceName(topic)
                .setConfigurationKeys(List.of(key)));
        var r = (org.apache.kafka.common.requests.DescribeConfigsResponse) c.send(ApiKeys.DESCRIBE_CONFIGS,
                max(ApiKeys.DESCRIBE_CONFIGS), req);
        return r.data().results().get(0).configs().get(0).value();
    }

    /** A topic, this broker and its loggers described at every version; another broker's id is refused as Apache refuses it. */
    @Test
    void describeConfigsOfEveryResourceTypeAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_CONFIGS); v++) {
                var req = new org.apache.kafka.common.message.DescribeConfigsRequestData().setIncludeSynonyms(v >= 1);
                for (var type : List.of(org.apache.kafka.common.config.ConfigResource.Type.TOPIC,
                        org.apache.kafka.common.config.ConfigResource.Type.BROKER,
                        org.apache.kafka.common.config.ConfigResource.Type.BROKER_LOGGER)) {
                    req.resources().add(new org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource()
                            .setResourceType(type.id()).setResourceName(type == org.apache.kafka.common.config.ConfigResource.Type.TOPIC
                                    ? "matrix" : "1").setConfigurationKeys(null));
                }
                req.resources().add(new org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource()
                        .setResourceType(org.apache.kafka.common.config.ConfigResource.Type.BROKER.id()).setResourceName("77")
                        .setConfigurationKeys(null));
                var r = (org.apache.kafka.common.requests.DescribeConfigsResponse) c.send(ApiKeys.DESCRIBE_CONFIGS, v, req);
                var results = r.data().results();
                assertThat(results).hasSize(4);
                for (int i = 0; i < 3; i++) {
                    assertThat(Errors.forCode(results.get(i).errorCode())).as("v%d resource %d", v, i).isEqualTo(Errors.NONE);
                    assertThat(results.get(i).configs()).as("v%d resource %d", v, i).isNotEmpty();
                }
                assertThat(results.get(1).configs()).as("v%d", v)
                        .anySatisfy(e -> assertThat(e.name() + "=" + e.value()).isEqualTo("node.id=1"))
                        .anySatisfy(e -> assertThat(e.name() + "=" + e.value()).isEqualTo("log.flush.interval.messages=1"));
                assertThat(results.get(2).configs()).as("v%d", v).anySatisfy(e -> assertThat(e.name()).isEqualTo("root"));
                assertThat(Errors.forCode(results.get(3).errorCode())).as("v%d", v).isEqualTo(Errors.INVALID_REQUEST);
            }
        }
    }

    @Test
    void alterConfigsAndIncrementalAlterConfigsAtEveryVersion() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("matrix-conf", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        byte topic = org.apache.kafka.common.config.ConfigResource.Type.TOPIC.id();
        byte loggers = org.apache.kafka.common.config.ConfigResource.Type.BROKER_LOGGER.id();
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.INCREMENTAL_ALTER_CONFIGS); v++) {
                var req = new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData();
                var res = new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(topic).setResourceName("matrix-conf");
                res.configs().add(new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig()
                        .setName("retention.ms").setConfigOperation((byte) 0).setValue(Integer.toString(100_000 + v)));
                req.resources().add(res);
                var unknown = new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(topic).setResourceName("no-such-topic");
                unknown.configs().add(new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig()
                        .setName("retention.ms").setConfigOperation((byte) 0).setValue("1"));
                req.resources().add(unknown);
                var logger = new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(loggers).setResourceName("1");
                String level = v % 2 == 0 ? "DEBUG" : "WARN";
                logger.configs().add(new org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig()
                        .setName("dev.kaas.broker.storage.LogCleaner").setConfigOperation((byte) 0).setValue(level));
                req.resources().add(logger);
                var r = (org.apache.kafka.common.requests.IncrementalAlterConfigsResponse) c.send(ApiKeys.INCREMENTAL_ALTER_CONFIGS, v, req);
                assertThat(r.data().responses()).hasSize(3);
                assertThat(Errors.forCode(r.data().responses().get(0).errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(Errors.forCode(r.data().responses().get(1).errorCode())).as("v%d", v).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                assertThat(Errors.forCode(r.data().responses().get(2).errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(describedValue(c, "matrix-conf", "retention.ms")).as("v%d", v).isEqualTo(Integer.toString(100_000 + v));
                var loggersReq = new org.apache.kafka.common.message.DescribeConfigsRequestData();
                loggersReq.resources().add(new org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource()
                        .setResourceType(loggers).setResourceName("1").setConfigurationKeys(List.of("dev.kaas.broker.storage.LogCleaner")));
                var described = (org.apache.kafka.common.requests.DescribeConfigsResponse) c.send(ApiKeys.DESCRIBE_CONFIGS,
                        max(ApiKeys.DESCRIBE_CONFIGS), loggersReq);
                assertThat(described.data().results().get(0).configs().get(0).value()).as("v%d", v).isEqualTo(level);
            }
            for (short v = 0; v <= max(ApiKeys.ALTER_CONFIGS); v++) {
                var req = new org.apache.kafka.common.message.AlterConfigsRequestData();
                var res = new org.apache.kafka.common.message.AlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(topic).setResourceName("matrix-conf");
                res.configs().add(new org.apache.kafka.common.message.AlterConfigsRequestData.AlterableConfig()
                        .setName("segment.ms").setValue(Integer.toString(200_000 + v)));
                req.resources().add(res);
                var r = (org.apache.kafka.common.requests.AlterConfigsResponse) c.send(ApiKeys.ALTER_CONFIGS, v, req);
                assertThat(Errors.forCode(r.data().responses().get(0).errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(describedValue(c, "matrix-conf", "segment.ms")).as("v%d", v).isEqualTo(Integer.toString(200_000 + v));
                assertThat(describedValue(c, "matrix-conf", "retention.ms")).as("v%d: legacy AlterConfigs replaces every override", v)
                        .isEqualTo("604800000");
            }
        }
    }

    /**
     * A reassignment names one broker: onto the partition's own writer it is done at once (as Apache
     * completes a reassignment to the current replicas), onto an unknown broker it is Apache's
     * INVALID_REPLICA_ASSIGNMENT, and a cancel with nothing in progress NO_REASSIGNMENT_IN_PROGRESS.
     */
    @Test
    void partitionReassignmentsAtEveryVersion() throws Exception {
        int writer;
        try (Admin admin = Admin.create(cluster.clientProps())) {
            writer = admin.describeTopics(List.of("matrix")).allTopicNames().get(30, TimeUnit.SECONDS).get("matrix")
                    .partitions().get(0).leader().id();
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.ALTER_PARTITION_REASSIGNMENTS); v++) {
                var req = new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData().setTimeoutMs(30_000);
                var topic = new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("matrix");
                topic.partitions().add(new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignablePartition()
                        .setPartitionIndex(0).setReplicas(List.of(writer)));
                topic.partitions().add(new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignablePartition()
                        .setPartitionIndex(0).setReplicas(List.of(writer + 1000)));
                req.topics().add(topic);
                var unknown = new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("no-such");
                unknown.partitions().add(new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignablePartition()
                        .setPartitionIndex(0).setReplicas(null));
                req.topics().add(unknown);
                var r = (org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse) c.send(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, v, req);
                assertThat(Errors.forCode(r.data().errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                var parts = r.data().responses().get(0).partitions();
                assertThat(Errors.forCode(parts.get(0).errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(Errors.forCode(parts.get(1).errorCode())).as("v%d", v).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
                assertThat(parts.get(1).errorMessage()).contains("no such broker is registered");
                assertThat(Errors.forCode(r.data().responses().get(1).partitions().get(0).errorCode())).as("v%d", v)
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            for (short v = 0; v <= max(ApiKeys.LIST_PARTITION_REASSIGNMENTS); v++) {
                var all = (org.apache.kafka.common.requests.ListPartitionReassignmentsResponse) c.send(ApiKeys.LIST_PARTITION_REASSIGNMENTS, v,
                        new org.apache.kafka.common.message.ListPartitionReassignmentsRequestData().setTopics(null).setTimeoutMs(30_000));
                assertThat(Errors.forCode(all.data().errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(all.data().topics()).as("v%d: the move onto its own writer is complete", v).isEmpty();
                var some = new org.apache.kafka.common.message.ListPartitionReassignmentsRequestData().setTimeoutMs(30_000).setTopics(new ArrayList<>());
                some.topics().add(new org.apache.kafka.common.message.ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics()
                        .setName("matrix").setPartitionIndexes(List.of(0, 7)));
                var r = (org.apache.kafka.common.requests.ListPartitionReassignmentsResponse) c.send(ApiKeys.LIST_PARTITION_REASSIGNMENTS, v, some);
                assertThat(r.data().topics()).as("v%d", v).isEmpty();
            }
        }
    }

    @Test
    void electLeadersAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.ELECT_LEADERS); v++) {
                var req = new ElectLeadersRequestData().setElectionType((byte) 0).setTimeoutMs(30_000);
                req.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic("matrix").setPartitions(List.of(0, 5)));
                var r = (ElectLeadersResponse) c.send(ApiKeys.ELECT_LEADERS, v, req);
                var results = r.data().replicaElectionResults().get(0).partitionResult();
                assertThat(Errors.forCode(results.get(0).errorCode())).as("v%d", v).isEqualTo(Errors.ELECTION_NOT_NEEDED);
                assertThat(Errors.forCode(results.get(1).errorCode())).as("v%d", v).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                var all = (ElectLeadersResponse) c.send(ApiKeys.ELECT_LEADERS, v, new ElectLeadersRequestData().setTopicPartitions(null));
                assertThat(all.data().replicaElectionResults()).as("v%d: nothing needed an election", v).isEmpty();
            }
        }
    }

    @Test
    void offsetForLeaderEpochAtEveryVersion() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("epochs", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
            produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("epochs").setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                            MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("e".getBytes()))))));
            var pr = (ProduceResponse) c.send(ApiKeys.PRODUCE, max(ApiKeys.PRODUCE), produce);
            assertThat(pr.data().responses().find("epochs").partitionResponses().get(0).errorCode()).isZero();
            var md = new MetadataRequestData().setAllowAutoTopicCreation(false);
            md.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("epochs"));
            int epoch = ((MetadataResponse) c.send(ApiKeys.METADATA, max(ApiKeys.METADATA), md)).data().topics().find("epochs")
                    .partitions().get(0).leaderEpoch();
            for (short v = 0; v <= max(ApiKeys.OFFSET_FOR_LEADER_EPOCH); v++) {
                // The leader's own epoch ends at the log end; an undefined one has no end, and no error.
                for (int asked : new int[] {epoch, -1}) {
                    var req = new OffsetForLeaderEpochRequestData().setReplicaId(-1);
                    var t = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("epochs");
                    t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                            .setCurrentLeaderEpoch(v >= 2 ? epoch : -1).setLeaderEpoch(asked));
                    req.topics().add(t);
                    var r = (OffsetsForLeaderEpochResponse) c.send(ApiKeys.OFFSET_FOR_LEADER_EPOCH, v, req);
                    var p = r.data().topics().find("epochs").partitions().get(0);
                    assertThat(Errors.forCode(p.errorCode())).as("v%d epoch %d", v, asked).isEqualTo(Errors.NONE);
                    assertThat(p.endOffset()).as("v%d epoch %d", v, asked).isEqualTo(asked == epoch ? 1 : -1);
                    assertThat(p.leaderEpoch()).as("v%d epoch %d", v, asked).isEqualTo(v >= 1 && asked == epoch ? epoch : -1);
                }
            }
        }
    }

    @Test
    void describeClusterAtEveryVersion() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.DESCRIBE_CLUSTER); v++) {
                var r = (DescribeClusterResponse) c.send(ApiKeys.DESCRIBE_CLUSTER, v, new DescribeClusterRequestData());
                assertThat(Errors.forCode(r.data().errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                assertThat(r.data().clusterId()).isNotEmpty();
                assertThat(r.data().brokers()).hasSize(1);
                var broker = r.data().brokers().iterator().next();
                assertThat(broker.port()).isEqualTo(cluster.kafkaPort());
                assertThat(r.data().controllerId()).as("the lowest listed broker").isEqualTo(broker.brokerId());
                assertThat(r.data().clusterAuthorizedOperations()).isEqualTo(Integer.MIN_VALUE);
            }
            var controllers = (DescribeClusterResponse) c.send(ApiKeys.DESCRIBE_CLUSTER, (short) 1,
                    new DescribeClusterRequestData().setEndpointType((byte) 2));
            assertThat(Errors.forCode(controllers.data().errorCode())).isEqualTo(Errors.MISMATCHED_ENDPOINT_TYPE);
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

    /** One whole transaction per version of each transaction API, over the wire, as the Java client would send it. */
    @Test
    void transactionApisAtEveryVersion() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            // Its own topic: the produce matrix counts offsets on "matrix".
            admin.createTopics(List.of(new NewTopic("matrix-txn", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short v = 0; v <= max(ApiKeys.INIT_PRODUCER_ID); v++) {
                String id = "matrix-txn-" + v;
                var init = (org.apache.kafka.common.requests.InitProducerIdResponse) c.send(ApiKeys.INIT_PRODUCER_ID, v,
                        new org.apache.kafka.common.message.InitProducerIdRequestData().setTransactionalId(id).setTransactionTimeoutMs(60_000)
                                .setProducerId(-1).setProducerEpoch((short) -1));
                assertThat(init.error()).as("InitProducerId v%d", v).isEqualTo(Errors.NONE);
                long pid = init.data().producerId();
                short epoch = init.data().producerEpoch();

                short addV = (short) Math.min(v, 3);
                var add = new org.apache.kafka.common.message.AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(id)
                        .setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch(epoch);
                var addTopics = new org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
                addTopics.add(new org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName("matrix-txn")
                        .setPartitions(List.of(0)));
                add.setV3AndBelowTopics(addTopics);
                var added = (org.apache.kafka.common.requests.AddPartitionsToTxnResponse) c.send(ApiKeys.ADD_PARTITIONS_TO_TXN, addV, add);
                assertThat(added.errors().get(org.apache.kafka.common.requests.AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID))
                        .as("AddPartitionsToTxn v%d", addV).containsEntry(new TopicPartition("matrix-txn", 0), Errors.NONE);

                short offV = (short) Math.min(v, max(ApiKeys.ADD_OFFSETS_TO_TXN));
                var offsets = (org.apache.kafka.common.requests.AddOffsetsToTxnResponse) c.send(ApiKeys.ADD_OFFSETS_TO_TXN, offV,
                        new org.apache.kafka.common.message.AddOffsetsToTxnRequestData().setTransactionalId(id).setProducerId(pid)
                                .setProducerEpoch(epoch).setGroupId("matrix-group-" + v));
                assertThat(Errors.forCode(offsets.data().errorCode())).as("AddOffsetsToTxn v%d", offV).isEqualTo(Errors.NONE);

                short tocV = (short) Math.min(v, max(ApiKeys.TXN_OFFSET_COMMIT));
                var toc = new org.apache.kafka.common.message.TxnOffsetCommitRequestData().setTransactionalId(id)
                        .setGroupId("matrix-group-" + v).setProducerId(pid).setProducerEpoch(epoch).setGenerationId(-1).setMemberId("");
                toc.topics().add(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("matrix-txn")
                        .setPartitions(List.of(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                .setPartitionIndex(0).setCommittedOffset(0))));
                var committed = (org.apache.kafka.common.requests.TxnOffsetCommitResponse) c.send(ApiKeys.TXN_OFFSET_COMMIT, tocV, toc);
                assertThat(committed.errors()).as("TxnOffsetCommit v%d", tocV).containsEntry(new TopicPartition("matrix-txn", 0), Errors.NONE);

                short endV = (short) Math.min(v, max(ApiKeys.END_TXN));
                var end = (org.apache.kafka.common.requests.EndTxnResponse) c.send(ApiKeys.END_TXN, endV,
                        new org.apache.kafka.common.message.EndTxnRequestData().setTransactionalId(id).setProducerId(pid)
                                .setProducerEpoch(epoch).setCommitted(true));
                assertThat(end.error()).as("EndTxn v%d", endV).isEqualTo(Errors.NONE);
            }
            var described = (org.apache.kafka.common.requests.DescribeTransactionsResponse) c.send(ApiKeys.DESCRIBE_TRANSACTIONS, (short) 0,
                    new org.apache.kafka.common.message.DescribeTransactionsRequestData().setTransactionalIds(List.of("matrix-txn-0", "never-seen")));
            assertThat(described.data().transactionStates()).extracting(t -> Errors.forCode(t.errorCode()))
                    .containsExactly(Errors.NONE, Errors.TRANSACTIONAL_ID_NOT_FOUND);
            var listed = (org.apache.kafka.common.requests.ListTransactionsResponse) c.send(ApiKeys.LIST_TRANSACTIONS, (short) 0,
                    new org.apache.kafka.common.message.ListTransactionsRequestData().setStateFilters(List.of("CompleteCommit", "NoSuchState")));
            assertThat(listed.data().unknownStateFilters()).containsExactly("NoSuchState");
            assertThat(listed.data().transactionStates()).extracting(t -> t.transactionalId()).contains("matrix-txn-0");
            var producers = new org.apache.kafka.common.message.DescribeProducersRequestData();
            producers.topics().add(new org.apache.kafka.common.message.DescribeProducersRequestData.TopicRequest().setName("matrix-txn")
                    .setPartitionIndexes(List.of(0)));
            var described2 = (org.apache.kafka.common.requests.DescribeProducersResponse) c.send(ApiKeys.DESCRIBE_PRODUCERS, (short) 0, producers);
            assertThat(Errors.forCode(described2.data().topics().get(0).partitions().get(0).errorCode())).isEqualTo(Errors.NONE);
            for (short v = 0; v <= max(ApiKeys.WRITE_TXN_MARKERS); v++) {
                var markers = new org.apache.kafka.common.message.WriteTxnMarkersRequestData();
                markers.markers().add(new org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(999_999)
                        .setProducerEpoch((short) 0).setTransactionResult(false).setCoordinatorEpoch(0).setTopics(List.of(
                                new org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName("matrix-txn")
                                        .setPartitionIndexes(List.of(0)))));
                var written = (org.apache.kafka.common.requests.WriteTxnMarkersResponse) c.send(ApiKeys.WRITE_TXN_MARKERS, v, markers);
                assertThat(written.errorsByProducerId().get(999_999L)).as("WriteTxnMarkers v%d", v)
                        .containsEntry(new TopicPartition("matrix-txn", 0), Errors.NONE);
            }
        }
    }
}
