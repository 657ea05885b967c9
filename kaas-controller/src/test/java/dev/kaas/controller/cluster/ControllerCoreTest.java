package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.cluster.AssignmentStore;
import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.cluster.ControllerLease;
import dev.kaas.common.cluster.LeaseFencedException;
import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.cluster.ProducerIdStore;
import dev.kaas.common.cluster.StandaloneMetadata;
import dev.kaas.common.cluster.TopicCatalog;
import dev.kaas.common.config.TopicDefaults;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicSpec;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicToCreate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ControllerCoreTest {
    private static final long LEASE_MS = 6000;

    @TempDir
    Path data;

    private final AtomicLong clock = new AtomicLong(1_000_000);
    private StandaloneMetadata metadata;
    private ControllerCore core;

    /** A broker stream that checks, at the moment of every push, that the pushed bytes are already on disk. */
    final class FakeSession implements BrokerSession {
        final List<Integer> nudges = new ArrayList<>();

        @Override
        public void nudge(int fromBroker) {
            nudges.add(fromBroker);
        }

        final List<Assignment> received = new ArrayList<>();
        String closedBecause;
        String refusedBecause;

        @Override
        public void sendAssignment(long version, long controllerEpoch, String json) {
            try {
                String onDiskNow = Files.readString(data.resolve("__cluster/assignment.json"));
                assertThat(onDiskNow).as("assignment.json when version %d is pushed", version).isEqualTo(json);
                received.add(Json.read(json, Assignment.class));
            } catch (IOException e) {
                throw new AssertionError("assignment.json unreadable when version " + version + " is pushed", e);
            }
        }

        @Override
        public void close(String reason) {
            closedBecause = reason;
        }

        @Override
        public void refuse(String reason) {
            refusedBecause = reason;
        }

        @Override
        public void refuseForeign(String reason) {
            refusedBecause = reason;
        }

        Assignment last() {
            return received.get(received.size() - 1);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        metadata = StandaloneMetadata.open(data);
        core = newCore("a");
    }

    @AfterEach
    void tearDown() throws Exception {
        metadata.close();
    }

    private ControllerCore newCore(String holder) {
        return newCore(holder, metadata, clock::get, 100_000);
    }

    private static ControllerCore newCore(String holder, ClusterMetadata m, LongSupplier clock, int maxPartitions) {
        return new ControllerCore(m, clock, new ControllerCore.Settings(holder, LEASE_MS, 9000, 3000, 1, maxPartitions, 32));
    }

    /** Takes the lease and leads: returns the epoch. */
    private static long lead(ControllerCore c) throws IOException {
        c.maintainLease();
        assertThat(c.isLeader()).isTrue();
        return c.epoch();
    }

    /** Moves time on as the runtime would see it: the lease renewed every second on the way. */
    private void advance(long ms) throws IOException {
        for (long left = ms; left > 0; left -= 1000) {
            clock.addAndGet(Math.min(1000, left));
            core.maintainLease();
        }
    }

    private static BrokerInfo broker(int id) {
        return new BrokerInfo(id, List.of(new EndpointInfo("PLAINTEXT", "localhost", 9000 + id, "PLAINTEXT")));
    }

    private static CreateTopicsCall create(String name, int partitions) {
        return CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName(name).setNumPartitions(partitions)).build();
    }

    private Assignment onDisk() throws Exception {
        return Json.read(Files.readAllBytes(data.resolve("__cluster/assignment.json")), Assignment.class);
    }

    private static List<Integer> epochs(Assignment a, String topic) {
        return a.topicByName(topic).orElseThrow().partitions().stream().map(PartitionAssignment::leaderEpoch).toList();
    }

    @Test
    void aRegisteringBrokerGetsTheAssignmentAndEveryChangeIsWrittenBeforeItIsPushed() throws Exception {
        long epoch = lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        var reply = core.createTopics(create("orders", 3));

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        Assignment pushed = s.last();
        assertThat(pushed.version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(pushed.controllerEpoch()).isEqualTo(epoch);
        assertThat(pushed.topicByName("orders").orElseThrow().partitions()).extracting(PartitionAssignment::leader).containsOnly(1);
        assertThat(onDisk()).isEqualTo(pushed);
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), new FakeSession());
        core.createTopics(create("more", 3));
        assertThat(s.received).hasSizeGreaterThanOrEqualTo(4).extracting(Assignment::version).isSorted();
    }

    /** SCRAM credentials are published, on disk and pushed, and every later publication (a new topic, a new broker) keeps them. */
    @Test
    void scramCredentialsArePublishedAndKeptByEveryLaterPublication() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        var reply = core.alterScramCredentials(dev.kaas.proto.AlterScramCredentialsCall.newBuilder()
                .addUpsertions(ScramCredentialChangesTest.upsert("alice", 2, 4096, "alice-secret")).build());

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(s.last().scramUsers()).containsOnlyKeys("alice");
        assertThat(onDisk().scramUsers()).isEqualTo(s.last().scramUsers());
        core.createTopics(create("after", 2));
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), new FakeSession());
        core.alterBrokerConfigs(dev.kaas.proto.AlterBrokerConfigsCall.newBuilder().setResource("")
                .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("log.retention.ms").setValue("1000").setOp(0)).build());
        assertThat(s.last().version()).isGreaterThan(reply.getAssignmentVersion());
        assertThat(s.last().scramUsers()).as("kept by later publications").containsOnlyKeys("alice");
        assertThat(onDisk().scramUsers().get("alice").get(0).iterations()).isEqualTo(4096);
    }

    /** Client quotas are published, on disk and pushed, and kept by every later publication (SCRAM users, topics, brokers, configs). */
    @Test
    void clientQuotasArePublishedAndKeptByEveryLaterPublication() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        var reply = core.alterClientQuotas(dev.kaas.proto.AlterClientQuotasCall.newBuilder()
                .addAlterations(ClientQuotaChangesTest.alter(java.util.List.of(ClientQuotaChangesTest.part("client-id", "app")),
                        ClientQuotaChangesTest.set("producer_byte_rate", 1048576))).build());

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(s.last().clientQuotas()).singleElement().satisfies(q -> assertThat(q.values()).containsEntry("producer_byte_rate", 1048576.0));
        assertThat(onDisk().clientQuotas()).isEqualTo(s.last().clientQuotas());
        core.alterScramCredentials(dev.kaas.proto.AlterScramCredentialsCall.newBuilder()
                .addUpsertions(ScramCredentialChangesTest.upsert("alice", 2, 4096, "alice-secret")).build());
        core.createTopics(create("after", 2));
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), new FakeSession());
        core.alterBrokerConfigs(dev.kaas.proto.AlterBrokerConfigsCall.newBuilder().setResource("")
                .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("log.retention.ms").setValue("1000").setOp(0)).build());
        assertThat(s.last().version()).isGreaterThan(reply.getAssignmentVersion() + 2);
        assertThat(s.last().clientQuotas()).as("kept by later publications").isEqualTo(onDisk().clientQuotas()).hasSize(1);
    }

    /** ACLs are published, on disk and pushed, kept by every later publication, and deleted through a filter. */
    @Test
    void aclsArePublishedKeptByEveryLaterPublicationAndDeleted() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        var reply = core.createAcls(dev.kaas.proto.CreateAclsCall.newBuilder()
                .addAcls(AclChangesTest.acl(2, "orders", 3, "User:alice", 3, 3)).build());

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(s.last().acls()).singleElement().satisfies(a -> assertThat(a.principal()).isEqualTo("User:alice"));
        assertThat(onDisk().acls()).isEqualTo(s.last().acls());
        core.alterClientQuotas(dev.kaas.proto.AlterClientQuotasCall.newBuilder()
                .addAlterations(ClientQuotaChangesTest.alter(java.util.List.of(ClientQuotaChangesTest.part("client-id", "app")),
                        ClientQuotaChangesTest.set("producer_byte_rate", 1048576))).build());
        core.alterScramCredentials(dev.kaas.proto.AlterScramCredentialsCall.newBuilder()
                .addUpsertions(ScramCredentialChangesTest.upsert("alice", 2, 4096, "alice-secret")).build());
        core.createTopics(create("after", 2));
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), new FakeSession());
        core.alterBrokerConfigs(dev.kaas.proto.AlterBrokerConfigsCall.newBuilder().setResource("")
                .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("log.retention.ms").setValue("1000").setOp(0)).build());
        assertThat(s.last().version()).isGreaterThan(reply.getAssignmentVersion() + 3);
        assertThat(s.last().acls()).as("kept by later publications").isEqualTo(onDisk().acls()).hasSize(1);

        var deleted = core.deleteAcls(dev.kaas.proto.DeleteAclsCall.newBuilder()
                .addFilters(dev.kaas.proto.AclSpec.newBuilder().setResourceType(1).setPatternType(1).setOperation(1).setPermission(1)).build());
        assertThat(deleted.getResults(0).getMatchingList()).hasSize(1);
        assertThat(s.last().acls()).isEmpty();
        assertThat(onDisk().acls()).isEmpty();
    }

    /**
     * controller_mutation_rate on the controller: the client's creations, partition additions and
     * deletions spend one bucket, a strict request past it is refused per topic with the delay,
     * nothing of a refused topic is applied, and a call naming no client is not counted.
     */
    @Test
    void topicChangesPastTheClientsControllerMutationRateAreRefusedWithTheDelay() throws Exception {
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), new FakeSession());
        core.alterClientQuotas(dev.kaas.proto.AlterClientQuotasCall.newBuilder()
                .addAlterations(ClientQuotaChangesTest.alter(java.util.List.of(ClientQuotaChangesTest.part("client-id", "app")),
                        ClientQuotaChangesTest.set("controller_mutation_rate", 1))).build());
        var app = dev.kaas.proto.MutationClient.newBuilder().setUser("alice").setClientId("app").setStrict(true).build();

        var first = core.createTopics(create("q1", 8).toBuilder().setClient(app).build());
        assertThat(first.getResults(0).getErrorCode()).isZero();
        var grown = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder().setClient(app)
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("q1").setCount(14)).build());
        assertThat(grown.getResults(0).getErrorCode()).as("3 tokens left: allowed, to -3").isZero();
        assertThat(grown.getThrottleTimeMs()).isZero();
        var refused = core.createTopics(create("q2", 1).toBuilder().setClient(app).build());
        assertThat(refused.getResults(0).getErrorCode()).isEqualTo(Errors.THROTTLING_QUOTA_EXCEEDED.code());
        assertThat(refused.getThrottleTimeMs()).isEqualTo(3000);
        var kept = core.deleteTopics(dev.kaas.proto.DeleteTopicsCall.newBuilder().setClient(app)
                .addTopics(dev.kaas.proto.TopicRef.newBuilder().setName("q1")).build());
        assertThat(kept.getResults(0).getErrorCode()).isEqualTo(Errors.THROTTLING_QUOTA_EXCEEDED.code());
        assertThat(core.current().topicByName("q1")).isPresent();
        assertThat(core.current().topicByName("q2")).isEmpty();
        assertThat(core.createTopics(create("q3", 5)).getResults(0).getErrorCode()).as("no client named: not counted").isZero();

        clock.addAndGet(3000);
        assertThat(core.deleteTopics(dev.kaas.proto.DeleteTopicsCall.newBuilder().setClient(app)
                .addTopics(dev.kaas.proto.TopicRef.newBuilder().setName("q1")).build()).getResults(0).getErrorCode()).isZero();
    }

    /** CreatePartitions as Apache's controller: grows, never shrinks, keeps the existing leaders, places the new ones. */
    @Test
    void createPartitionsGrowsATopicAndRefusesWhatApacheRefuses() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(create("grow", 2));
        Assignment before = s.last();

        var reply = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder()
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("grow").setCount(5))
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("missing").setCount(3)).build());
        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(Errors.forCode((short) reply.getResults(1).getErrorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        Assignment after = s.last();
        assertThat(after.version()).isEqualTo(reply.getAssignmentVersion());
        var grown = after.topicByName("grow").orElseThrow();
        assertThat(grown.partitions()).hasSize(5).extracting(PartitionAssignment::leader).containsOnly(1);
        assertThat(grown.topic().topicId()).isEqualTo(before.topicByName("grow").orElseThrow().topic().topicId());
        assertThat(grown.partitions().subList(0, 2)).as("existing partitions keep their leader and epoch")
                .isEqualTo(before.topicByName("grow").orElseThrow().partitions());

        var same = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder()
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("grow").setCount(5)).build());
        assertThat(Errors.forCode((short) same.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_PARTITIONS);
        assertThat(same.getResults(0).getErrorMessage()).isEqualTo("Topic already has 5 partition(s).");
        var fewer = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder()
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("grow").setCount(3)).build());
        assertThat(fewer.getResults(0).getErrorMessage()).isEqualTo("The topic grow currently has 5 partition(s); 3 would not be an increase.");
        var validateOnly = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder().setValidateOnly(true)
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("grow").setCount(9)).build());
        assertThat(validateOnly.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().topicByName("grow").orElseThrow().partitions()).as("validate_only changes nothing").hasSize(5);
    }

    static dev.kaas.proto.ConfigOp op(String name, int op, String value) {
        return dev.kaas.proto.ConfigOp.newBuilder().setName(name).setOp(op).setValue(value).build();
    }

    static dev.kaas.proto.AlterTopicConfigsCall alter(String topic, boolean replace, dev.kaas.proto.ConfigOp... ops) {
        return dev.kaas.proto.AlterTopicConfigsCall.newBuilder().addTopics(dev.kaas.proto.TopicConfigChange.newBuilder()
                .setName(topic).setReplace(replace).addAllOps(List.of(ops))).build();
    }

    /** Alter configs as Apache's ConfigurationControlManager: ops on the current overrides, validated whole, then pushed. */
    @Test
    void alterTopicConfigsAppliesOpsToTheCurrentOverridesAndPushesThem() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("t").setNumPartitions(1)
                .addConfigs(dev.kaas.proto.TopicConfig.newBuilder().setName("retention.ms").setValue("1000"))
                .addConfigs(dev.kaas.proto.TopicConfig.newBuilder().setName("segment.bytes").setValue("100000"))).build());

        var reply = core.alterTopicConfigs(alter("t", false, op("retention.ms", 0, "2000"), op("segment.bytes", 1, ""),
                op("cleanup.policy", 2, "compact")));
        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(s.last().topicByName("t").orElseThrow().topic().configs())
                .isEqualTo(Map.of("retention.ms", "2000", "cleanup.policy", "delete,compact"));

        var subtract = core.alterTopicConfigs(alter("t", false, op("cleanup.policy", 3, "delete")));
        assertThat(subtract.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().topicByName("t").orElseThrow().topic().configs()).containsEntry("cleanup.policy", "compact");

        // Legacy AlterConfigs: the entries are the whole new set.
        core.alterTopicConfigs(alter("t", true, op("max.message.bytes", 0, "5000")));
        assertThat(s.last().topicByName("t").orElseThrow().topic().configs()).isEqualTo(Map.of("max.message.bytes", "5000"));
    }

    @Test
    void alterTopicConfigsRefusesWhatApacheRefuses() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(create("t", 1));
        long version = s.last().version();

        var notAList = core.alterTopicConfigs(alter("t", false, op("retention.ms", 2, "5")));
        assertThat(Errors.forCode((short) notAList.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(notAList.getResults(0).getErrorMessage()).isEqualTo("Can't APPEND to key retention.ms because its type is not LIST.");
        var badValue = core.alterTopicConfigs(alter("t", false, op("retention.ms", 0, "soon")));
        assertThat(Errors.forCode((short) badValue.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(badValue.getResults(0).getErrorMessage()).contains("retention.ms");
        var unknownKey = core.alterTopicConfigs(alter("t", false, op("no.such.key", 0, "1")));
        assertThat(Errors.forCode((short) unknownKey.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(unknownKey.getResults(0).getErrorMessage()).isEqualTo("Unknown topic config name: no.such.key");
        var lags = core.alterTopicConfigs(alter("t", false, op("min.compaction.lag.ms", 0, "10"), op("max.compaction.lag.ms", 0, "5")));
        assertThat(Errors.forCode((short) lags.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(lags.getResults(0).getErrorMessage())
                .isEqualTo("conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)");
        var remote = core.alterTopicConfigs(alter("t", false, op("remote.storage.enable", 0, "true")));
        assertThat(Errors.forCode((short) remote.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        var defaultTopic = core.alterTopicConfigs(alter("", false, op("retention.ms", 0, "1")));
        assertThat(Errors.forCode((short) defaultTopic.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(defaultTopic.getResults(0).getErrorMessage()).isEqualTo("Default topic resources are not allowed.");
        var missing = core.alterTopicConfigs(alter("missing", false, op("retention.ms", 0, "1")));
        assertThat(Errors.forCode((short) missing.getResults(0).getErrorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(missing.getResults(0).getErrorMessage()).isEqualTo("The topic 'missing' does not exist.");
        var badName = core.alterTopicConfigs(alter("a/b", false, op("retention.ms", 0, "1")));
        assertThat(Errors.forCode((short) badName.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION);
        var validateOnly = core.alterTopicConfigs(alter("t", false, op("retention.ms", 0, "1")).toBuilder().setValidateOnly(true).build());
        assertThat(validateOnly.getResults(0).getErrorCode()).isZero();

        assertThat(s.last().version()).as("nothing refused or only validated is pushed").isEqualTo(version);
        assertThat(s.last().topicByName("t").orElseThrow().topic().configs()).isEmpty();
    }

    /**
     * Apache's controller validates topic configs over its own log settings (server.properties,
     * then the cluster-wide dynamic ones): a topic that only sets max.compaction.lag.ms conflicts
     * with a configured log.cleaner.min.compaction.lag.ms above it.
     */
    @Test
    void topicConfigsAreValidatedOverTheControllersLogSettings() throws Exception {
        ControllerCore configured = new ControllerCore(metadata, clock::get, new ControllerCore.Settings("a", LEASE_MS, 9000, 3000, 1,
                100_000, 32, 11, 1, TopicDefaults.ofStatic(Map.of("log.cleaner.min.compaction.lag.ms", "60000"))));
        lead(configured);
        FakeSession s = new FakeSession();
        configured.brokerRegistered(broker(1), "inc-1", configured.clusterId(), s);

        var refused = configured.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("short")
                .setNumPartitions(1).addConfigs(dev.kaas.proto.TopicConfig.newBuilder().setName("max.compaction.lag.ms").setValue("1000")))
                .build());
        var created = configured.createTopics(create("t", 1));
        var altered = configured.alterTopicConfigs(alter("t", false, op("max.compaction.lag.ms", 0, "1000")));

        assertThat(Errors.forCode((short) refused.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(refused.getResults(0).getErrorMessage())
                .isEqualTo("conflict topic config setting min.compaction.lag.ms (60000) > max.compaction.lag.ms (1000)");
        assertThat(created.getResults(0).getErrorCode()).isZero();
        assertThat(Errors.forCode((short) altered.getResults(0).getErrorCode())).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(altered.getResults(0).getErrorMessage())
                .isEqualTo("conflict topic config setting min.compaction.lag.ms (60000) > max.compaction.lag.ms (1000)");

        // The cluster-wide dynamic setting lies over the static one.
        assertThat(configured.alterBrokerConfigs(brokerConfigs("", false, 0, "log.cleaner.min.compaction.lag.ms", "500"))
                .getErrorCode()).isZero();
        var afterDynamic = configured.alterTopicConfigs(alter("t", false, op("max.compaction.lag.ms", 0, "1000")));
        assertThat(afterDynamic.getResults(0).getErrorCode()).isZero();
        assertThat(s.last().topicByName("t").orElseThrow().topic().configs()).containsEntry("max.compaction.lag.ms", "1000");
    }

    @Test
    void aNudgeGoesDownTheTargetBrokersStreamOnly() throws Exception {
        lead(core);
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), one);
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), two);

        assertThat(core.nudge(2, 1)).isTrue();
        assertThat(two.nudges).containsExactly(1);
        assertThat(one.nudges).isEmpty();
        assertThat(core.nudge(3, 1)).as("no session for broker 3").isFalse();

        // Nudges do not go through the loop: what they read must follow every session change.
        FakeSession twoAgain = new FakeSession();
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), twoAgain);
        assertThat(core.nudge(2, 1)).isTrue();
        assertThat(twoAgain.nudges).containsExactly(1);
        assertThat(two.nudges).as("the replaced session").containsExactly(1);
        core.brokerGone(2, twoAgain, false);
        assertThat(core.nudge(2, 1)).as("broker 2 gone").isFalse();
        core.loseLeadership("test");
        assertThat(core.nudge(1, 2)).as("no sessions once not leading").isFalse();
        assertThat(one.nudges).isEmpty();
    }

    @Test
    void createTopicsValidatesLikeApache() throws Exception {
        lead(core);
        core.createTopics(create("exists", 1));
        var reply = core.createTopics(CreateTopicsCall.newBuilder()
                .addTopics(TopicToCreate.newBuilder().setName("exists").setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("..").setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("a/b").setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("x".repeat(250)).setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("").setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("zero").setNumPartitions(0))
                .addTopics(TopicToCreate.newBuilder().setName("badconfig").setNumPartitions(1)
                        .addConfigs(TopicConfig.newBuilder().setName("cleanup.policy").setValue("shred")))
                .addTopics(TopicToCreate.newBuilder().setName("unknownconfig").setNumPartitions(1)
                        .addConfigs(TopicConfig.newBuilder().setName("no.such.key").setValue("1")))
                .addTopics(TopicToCreate.newBuilder().setName("ex_ists").setNumPartitions(1))
                .addTopics(TopicToCreate.newBuilder().setName("defaulted").setNumPartitions(-1))
                .build());
        assertThat(reply.getResultsList()).extracting(r -> Errors.forCode((short) r.getErrorCode())).containsExactly(
                Errors.TOPIC_ALREADY_EXISTS, Errors.INVALID_TOPIC_EXCEPTION, Errors.INVALID_TOPIC_EXCEPTION,
                Errors.INVALID_TOPIC_EXCEPTION, Errors.INVALID_TOPIC_EXCEPTION, Errors.INVALID_PARTITIONS,
                Errors.INVALID_CONFIG, Errors.INVALID_CONFIG, Errors.NONE, Errors.NONE);
        assertThat(metadata.topics().topics()).extracting(t -> t.name()).containsExactlyInAnyOrder("exists", "ex_ists", "defaulted");
        assertThat(reply.getResults(9).getNumPartitions()).isEqualTo(1);
    }

    @Test
    void moreThanTenThousandPartitionsInOneRequestRefusesTheWholeRequestAsApacheDoes() throws Exception {
        lead(core);
        var reply = core.createTopics(CreateTopicsCall.newBuilder()
                .addTopics(TopicToCreate.newBuilder().setName("a").setNumPartitions(5000))
                .addTopics(TopicToCreate.newBuilder().setName("b").setNumPartitions(5000))
                .addTopics(TopicToCreate.newBuilder().setName("c").setNumPartitions(-1))
                .build());
        assertThat(Errors.forCode((short) reply.getErrorCode())).isEqualTo(Errors.POLICY_VIOLATION);
        assertThat(reply.getErrorMessage()).isEqualTo("Excessively large number of partitions per request.");
        assertThat(reply.getResultsList()).extracting(r -> Errors.forCode((short) r.getErrorCode())).containsOnly(Errors.POLICY_VIOLATION);
        assertThat(metadata.topics().topics()).isEmpty();

        // Partitions of topics the broker refused itself count too; exactly 10,000 is allowed.
        var refused = core.createTopics(CreateTopicsCall.newBuilder().setPartitionsRefusedByBroker(2)
                .addTopics(TopicToCreate.newBuilder().setName("d").setNumPartitions(9999)).build());
        assertThat(Errors.forCode((short) refused.getErrorCode())).isEqualTo(Errors.POLICY_VIOLATION);
        var atTheLimit = core.createTopics(CreateTopicsCall.newBuilder().setPartitionsRefusedByBroker(1)
                .addTopics(TopicToCreate.newBuilder().setName("d").setNumPartitions(9999)).build());
        assertThat(atTheLimit.getErrorCode()).isZero();
        assertThat(atTheLimit.getResults(0).getErrorCode()).isZero();
    }

    @Test
    void theClusterPartitionLimitRefusesTopicsThatWouldExceedItAndKeepsThoseThatFit() throws Exception {
        ControllerCore small = newCore("a", metadata, clock::get, 10);
        lead(small);
        assertThat(small.createTopics(create("six", 6)).getResults(0).getErrorCode()).isZero();
        var reply = small.createTopics(CreateTopicsCall.newBuilder()
                .addTopics(TopicToCreate.newBuilder().setName("three").setNumPartitions(3))
                .addTopics(TopicToCreate.newBuilder().setName("two").setNumPartitions(2))
                .addTopics(TopicToCreate.newBuilder().setName("one").setNumPartitions(1))
                .build());
        assertThat(reply.getResultsList()).extracting(r -> Errors.forCode((short) r.getErrorCode()))
                .containsExactly(Errors.NONE, Errors.POLICY_VIOLATION, Errors.NONE);
        assertThat(reply.getResults(1).getErrorMessage()).contains("kaas.controller.max-partitions").contains("limit of 10");
        assertThat(metadata.topics().topics()).extracting(TopicSpec::name).containsExactlyInAnyOrder("six", "three", "one");
        // Deleting makes room again.
        small.deleteTopics(DeleteTopicsCall.newBuilder().addTopics(TopicRef.newBuilder().setName("six")).build());
        assertThat(small.createTopics(create("two", 2)).getResults(0).getErrorCode()).isZero();
    }

    @Test
    void validateOnlyChangesNothing() throws Exception {
        lead(core);
        var reply = core.createTopics(CreateTopicsCall.newBuilder().setValidateOnly(true)
                .addTopics(TopicToCreate.newBuilder().setName("dry").setNumPartitions(2)).build());
        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(metadata.topics().topics()).isEmpty();
    }

    @Test
    void deleteByNameOrIdAndUnknownTopics() throws Exception {
        lead(core);
        String id = core.createTopics(create("a", 1)).getResults(0).getTopicId();
        core.createTopics(create("b", 1));
        var reply = core.deleteTopics(DeleteTopicsCall.newBuilder()
                .addTopics(TopicRef.newBuilder().setTopicId(id))
                .addTopics(TopicRef.newBuilder().setName("b"))
                .addTopics(TopicRef.newBuilder().setName("nope"))
                .addTopics(TopicRef.newBuilder().setTopicId("AAAAAAAAAAAAAAAAAAAAAA")).build());
        assertThat(reply.getResultsList()).extracting(r -> Errors.forCode((short) r.getErrorCode()))
                .containsExactly(Errors.NONE, Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID);
        assertThat(onDisk().topics()).isEmpty();
    }

    @Test
    void aBrokerThatShutsDownLosesItsPartitionsAndGetsANewEpochWhenItReturns() throws Exception {
        lead(core);
        FakeSession first = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), first);
        core.createTopics(create("t", 1));
        advance(3001);
        core.brokerGone(1, first, true);
        assertThat(onDisk().topicByName("t").orElseThrow().partitions().get(0).leader()).isEqualTo(PartitionAssignment.NO_LEADER);

        FakeSession second = new FakeSession();
        core.brokerRegistered(broker(1), "inc-2", core.clusterId(), second);
        PartitionAssignment p = second.last().topicByName("t").orElseThrow().partitions().get(0);
        assertThat(p.leader()).isEqualTo(1);
        assertThat(p.leaderEpoch()).isEqualTo(1);
    }

    @Test
    void aBrokerWhoseStreamBreaksLosesItsPartitionsAtOnceAndGetsItsShareBackUnderNewEpochs() throws Exception {
        lead(core);
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), one);
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), two);
        core.createTopics(create("t", 4));
        advance(3001);
        Assignment before = onDisk();
        assertThat(leaders(before, "t")).containsExactly(1, 2, 1, 2);

        core.brokerGone(1, one, false);
        Assignment after = onDisk();
        assertThat(leaders(after, "t")).as("no wait for a session timeout").containsOnly(2);
        assertThat(epochs(after, "t")).containsExactly(1, 0, 1, 0);
        assertThat(after.groupSlots()).extracting(SlotAssignment::broker).containsOnly(2);

        // The same process reconnects: it is a live broker again, and the balancer hands it its
        // share through handoffs (broker 2 closes first), each under a newer epoch.
        FakeSession back = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), back);
        assertThat(core.handoffsInFlight()).isPositive();
        core.brokerStatus(2, two, onDisk().version());
        core.brokerStatus(2, two, onDisk().version());
        Assignment rebalanced = onDisk();
        assertThat(leaders(rebalanced, "t")).containsOnly(1, 2);
        assertThat(leaders(rebalanced, "t").stream().filter(l -> l == 1).count()).isEqualTo(2);
        for (int p = 0; p < 4; p++) {
            PartitionAssignment was = after.topicByName("t").orElseThrow().partitions().get(p);
            PartitionAssignment now = rebalanced.topicByName("t").orElseThrow().partitions().get(p);
            if (now.leader() != was.leader()) {
                assertThat(now.leaderEpoch()).isEqualTo(was.leaderEpoch() + 1);
            }
        }
    }

    /** Broker 1 leads topic t (4 partitions) alone past the start-up grace; then broker 2 registers, which starts handoffs. */
    private void broker2JoinsBroker1sTopic(FakeSession one, FakeSession two) throws Exception {
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), one);
        core.createTopics(create("t", 4));
        advance(3001);
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), two);
    }

    @Test
    void aJoinMovesPartitionsOnlyAfterTheOldOwnerReportsThemClosed() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        Assignment relinquish = onDisk();
        List<Integer> leaders = leaders(relinquish, "t");
        assertThat(leaders).as("two partitions handed off: no owner while broker 1 closes them")
                .containsExactlyInAnyOrder(1, 1, PartitionAssignment.NO_LEADER, PartitionAssignment.NO_LEADER);
        assertThat(epochs(relinquish, "t")).containsOnly(0);

        core.tick();
        core.brokerStatus(1, one, relinquish.version() - 1);
        assertThat(onDisk().version()).as("an older applied version completes nothing").isEqualTo(relinquish.version());

        core.brokerStatus(1, one, relinquish.version());
        Assignment placed = onDisk();
        assertThat(leaders(placed, "t")).containsExactlyInAnyOrder(1, 1, 2, 2);
        for (int p = 0; p < 4; p++) {
            if (leaders(placed, "t").get(p) == 2) {
                assertThat(epochs(placed, "t").get(p)).isEqualTo(1);
            }
        }
        // 2 partitions + 25 + 25 slots are 52 moves, paced 32 in flight: broker 1 reports each batch closed.
        assertThat(core.handoffsInFlight()).isPositive().isLessThanOrEqualTo(32);
        for (int round = 0; round < 5 && core.handoffsInFlight() > 0; round++) {
            core.brokerStatus(1, one, onDisk().version());
        }
        assertThat(core.handoffsInFlight()).isZero();
        Assignment done = onDisk();
        assertThat(done.groupSlots().stream().filter(sl -> sl.broker() == 2).count()).isEqualTo(25);
        assertThat(done.txnSlots().stream().filter(sl -> sl.broker() == 2).count()).isEqualTo(25);
        assertThat(done.groupSlots().stream().filter(sl -> sl.broker() == 2)).as("first owner 1 at epoch 1, then a move").extracting(SlotAssignment::epoch).containsOnly(2);
        assertThat(leaders(done, "t")).isEqualTo(leaders(placed, "t"));
    }

    @Test
    void aDrainHandsOffEverythingTheBrokerOwnsIsPublishedAndEndsWhenTheBrokerComesBackAsANewProcess() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        settleHandoffs(one, two);
        assertThatThrownBy(() -> core.drain(7)).isInstanceOf(ControllerCore.DrainRefused.class)
                .satisfies(e -> assertThat(((ControllerCore.DrainRefused) e).unknownBroker).isTrue());

        List<Integer> before = leaders(onDisk(), "t");
        ControllerCore.BrokerView v = core.drain(2);

        assertThat(v.drained()).isTrue();
        assertThat(onDisk().drained()).as("recorded in the published assignment").containsEntry(2, "inc-2");
        List<Integer> handingOff = leaders(onDisk(), "t");
        for (int p = 0; p < 4; p++) {
            assertThat(handingOff.get(p)).as("broker 2 lets go first: nothing is taken from it while it writes")
                    .isEqualTo(before.get(p) == 2 ? PartitionAssignment.NO_LEADER : before.get(p));
        }
        settleHandoffs(one, two);
        Assignment done = onDisk();
        assertThat(leaders(done, "t")).containsOnly(1);
        assertThat(done.groupSlots()).extracting(SlotAssignment::broker).containsOnly(1);
        assertThat(done.txnSlots()).extracting(SlotAssignment::broker).containsOnly(1);
        assertThat(core.brokers()).filteredOn(b -> b.info().id() == 2).singleElement()
                .satisfies(b -> assertThat(b.idle()).as("owns nothing, closes nothing").isTrue());
        assertThatThrownBy(() -> core.drain(1)).as("nobody left to take broker 1's work").isInstanceOf(ControllerCore.DrainRefused.class)
                .satisfies(e -> assertThat(((ControllerCore.DrainRefused) e).unknownBroker).isFalse());
        long version = onDisk().version();
        core.drain(2);
        assertThat(onDisk().version()).as("idempotent").isEqualTo(version);

        // The same process reconnecting stays drained; a new process under the id ends the drain.
        core.brokerGone(2, two, true);
        FakeSession again = new FakeSession();
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), again);
        assertThat(onDisk().drained()).containsKey(2);
        assertThat(leaders(onDisk(), "t")).containsOnly(1);
        core.brokerGone(2, again, true);
        FakeSession restarted = new FakeSession();
        core.brokerRegistered(broker(2), "inc-3", core.clusterId(), restarted);
        assertThat(onDisk().drained()).isEmpty();
        settleHandoffs(one, restarted);
        assertThat(leaders(onDisk(), "t")).contains(2);
    }

    private static dev.kaas.proto.ReassignPartitionsCall move(String topic, int partition, Integer... replicas) {
        dev.kaas.proto.PartitionMove.Builder m = dev.kaas.proto.PartitionMove.newBuilder().setTopic(topic).setPartition(partition);
        if (replicas == null) {
            m.setCancel(true);
        } else {
            m.addAllReplicas(List.of(replicas));
        }
        return dev.kaas.proto.ReassignPartitionsCall.newBuilder().addMoves(m).build();
    }

    /** Settles handoffs: brokers 1, 2, … (in the order given) report every assignment applied until nothing is in flight. */
    private void settleHandoffs(FakeSession... brokers) throws Exception {
        for (int round = 0; round < 10 && core.handoffsInFlight() > 0; round++) {
            for (int i = 0; i < brokers.length; i++) {
                core.brokerStatus(i + 1, brokers[i], onDisk().version());
            }
        }
        assertThat(core.handoffsInFlight()).isZero();
    }

    @Test
    void aReassignmentHandsThePartitionOffToItsOneBrokerAndKeepsItThere() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        settleHandoffs(one, two);
        Assignment before = onDisk();
        int p = leaders(before, "t").indexOf(1);
        int epochBefore = epochs(before, "t").get(p);

        var reply = core.reassignPartitions(move("t", p, 2));

        assertThat(reply.getResultsList()).singleElement().satisfies(r -> assertThat(r.getErrorCode()).isZero());
        Assignment started = onDisk();
        assertThat(reply.getAssignmentVersion()).isEqualTo(started.version());
        PartitionAssignment moving = started.topicByName("t").orElseThrow().partitions().get(p);
        assertThat(moving.leader()).as("broker 1 lets go first").isEqualTo(PartitionAssignment.NO_LEADER);
        assertThat(moving.target()).isEqualTo(2);
        assertThat(moving.reassigning()).isTrue();

        core.brokerStatus(1, one, started.version());
        settleHandoffs(one, two);
        PartitionAssignment moved = onDisk().topicByName("t").orElseThrow().partitions().get(p);
        assertThat(moved.leader()).isEqualTo(2);
        assertThat(moved.leaderEpoch()).isEqualTo(epochBefore + 1);
        assertThat(moved.reassigning()).isFalse();
        assertThat(leaders(onDisk(), "t")).as("the spread made room for it").containsExactlyInAnyOrder(1, 1, 2, 2);

        // A new controller reads the target from the published assignment: it does not move the partition back.
        ControllerCore next = newCore("b");
        advance(LEASE_MS + 1);
        clock.addAndGet(LEASE_MS + 1);
        core = next;
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), one);
        core.brokerRegistered(broker(2), "inc-2", core.clusterId(), two);
        advance(3001);
        core.tick();
        assertThat(onDisk().topicByName("t").orElseThrow().partitions().get(p).target()).isEqualTo(2);
        // A third broker joins: the spread moves other partitions, never the reassigned one.
        FakeSession three = new FakeSession();
        core.brokerRegistered(broker(3), "inc-3", core.clusterId(), three);
        settleHandoffs(one, two);
        PartitionAssignment kept = onDisk().topicByName("t").orElseThrow().partitions().get(p);
        assertThat(kept.leader()).isEqualTo(2);
        assertThat(kept.leaderEpoch()).isEqualTo(epochBefore + 1);
        assertThat(leaders(onDisk(), "t")).as("broker 3 got its share from the others").contains(3);
    }

    @Test
    void reassignmentsApacheOrKaasCannotDoAreRefusedWithApachesErrors() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        settleHandoffs(one, two);
        long version = onDisk().version();

        assertThat(core.reassignPartitions(move("nope", 0, 1)).getResults(0).getErrorCode())
                .isEqualTo(org.apache.kafka.common.protocol.Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(core.reassignPartitions(move("t", 9, 1)).getResults(0).getErrorMessage()).isEqualTo("Unable to find partition t:9.");
        assertThat(core.reassignPartitions(move("t", 0)).getResults(0).getErrorMessage())
                .isEqualTo("The manual partition assignment includes an empty replica list.");
        assertThat(core.reassignPartitions(move("t", 0, 7)).getResults(0).getErrorMessage())
                .isEqualTo("The manual partition assignment includes broker 7, but no such broker is registered.");
        assertThat(core.reassignPartitions(move("t", 0, 2, 2)).getResults(0).getErrorMessage())
                .isEqualTo("The manual partition assignment includes the broker 2 more than once.");
        var twoReplicas = core.reassignPartitions(move("t", 0, 1, 2)).getResults(0);
        assertThat(twoReplicas.getErrorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(twoReplicas.getErrorMessage()).contains("names exactly one broker");
        assertThat(core.reassignPartitions(move("t", 0, (Integer[]) null)).getResults(0).getErrorCode())
                .isEqualTo(org.apache.kafka.common.protocol.Errors.NO_REASSIGNMENT_IN_PROGRESS.code());
        assertThat(onDisk().version()).as("nothing refused was published").isEqualTo(version);
    }

    /** As Apache reverts a cancelled reassignment to the original replicas: the partition goes back to the broker it was leaving. */
    @Test
    void aCancelledMoveGoesBackToTheBrokerItWasLeaving() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        settleHandoffs(one, two);
        int p = leaders(onDisk(), "t").indexOf(1);
        core.reassignPartitions(move("t", p, 2));
        assertThat(onDisk().topicByName("t").orElseThrow().partitions().get(p).leader()).isEqualTo(PartitionAssignment.NO_LEADER);

        var cancel = core.reassignPartitions(move("t", p, (Integer[]) null)).getResults(0);

        assertThat(cancel.getErrorCode()).isZero();
        PartitionAssignment cancelled = onDisk().topicByName("t").orElseThrow().partitions().get(p);
        assertThat(cancelled.target()).as("no longer reassigned").isNull();
        assertThat(cancelled.leaving()).as("the broker it goes back to").isEqualTo(1);
        core.brokerStatus(1, one, onDisk().version());
        settleHandoffs(one, two);
        PartitionAssignment back = onDisk().topicByName("t").orElseThrow().partitions().get(p);
        assertThat(back.leader()).isEqualTo(1);
        assertThat(back.reassigning()).isFalse();
        assertThat(back.leaving()).isNull();
        assertThat(back.target()).as("a revert, not a new reassignment").isNull();
        assertThat(core.reassignPartitions(move("t", p, (Integer[]) null)).getResults(0).getErrorCode())
                .as("nothing left to cancel").isEqualTo(org.apache.kafka.common.protocol.Errors.NO_REASSIGNMENT_IN_PROGRESS.code());
    }

    private static dev.kaas.proto.AlterBrokerConfigsCall brokerConfigs(String resource, boolean replace, int op, String... nameValues) {
        var b = dev.kaas.proto.AlterBrokerConfigsCall.newBuilder().setResource(resource).setReplace(replace);
        for (int i = 0; i < nameValues.length; i += 2) {
            b.addOps(dev.kaas.proto.ConfigOp.newBuilder().setName(nameValues[i]).setOp(op).setValue(nameValues[i + 1]));
        }
        return b.build();
    }

    @Test
    void dynamicBrokerConfigsArePublishedPerResourceAndKeptByTheNextController() throws Exception {
        FakeSession one = new FakeSession();
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), one);

        var cluster = core.alterBrokerConfigs(brokerConfigs("", false, 0, "log.retention.ms", "1000", "log.cleanup.policy", "delete"));
        var mine = core.alterBrokerConfigs(brokerConfigs("1", false, 0, "message.max.bytes", "5000"));
        var appended = core.alterBrokerConfigs(brokerConfigs("", false, 2, "log.cleanup.policy", "compact"));

        assertThat(List.of(cluster.getErrorCode(), mine.getErrorCode(), appended.getErrorCode())).containsOnly(0);
        Assignment a = onDisk();
        assertThat(appended.getAssignmentVersion()).isEqualTo(a.version());
        assertThat(one.last().brokerConfigs()).as("pushed as stored").isEqualTo(a.brokerConfigs());
        assertThat(a.brokerConfig("")).containsExactly(Map.entry("log.cleanup.policy", "delete,compact"), Map.entry("log.retention.ms", "1000"));
        assertThat(a.brokerConfig("1")).containsExactly(Map.entry("message.max.bytes", "5000"));

        var deleted = core.alterBrokerConfigs(brokerConfigs("", false, 1, "log.retention.ms", ""));
        assertThat(deleted.getErrorCode()).isZero();
        assertThat(onDisk().brokerConfig("")).containsOnlyKeys("log.cleanup.policy");
        var replaced = core.alterBrokerConfigs(brokerConfigs("1", true, 0, "log.segment.bytes", "1048576"));
        assertThat(replaced.getErrorCode()).isZero();
        assertThat(onDisk().brokerConfig("1")).as("legacy AlterConfigs replaces the resource's whole set")
                .containsExactly(Map.entry("log.segment.bytes", "1048576"));

        ControllerCore next = newCore("b");
        advance(LEASE_MS + 1);
        clock.addAndGet(LEASE_MS + 1);
        core = next;
        lead(core);
        assertThat(core.current().brokerConfig("1")).containsExactly(Map.entry("log.segment.bytes", "1048576"));
        assertThat(core.current().brokerConfig("")).containsOnlyKeys("log.cleanup.policy");
    }

    @Test
    void customBrokerPropertiesAreKeptAsApacheKeepsThem() throws Exception {
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), new FakeSession());

        var cluster = core.alterBrokerConfigs(brokerConfigs("", false, 0, "my.reporter.endpoint", "http://x", "log.retention.ms", "1000"));
        var mine = core.alterBrokerConfigs(brokerConfigs("1", false, 0, "my.reporter.token", "s3cret"));
        var replaced = core.alterBrokerConfigs(brokerConfigs("", true, 0, "my.reporter.endpoint", "http://y"));
        var deleted = core.alterBrokerConfigs(brokerConfigs("1", false, 1, "my.reporter.token", ""));

        assertThat(List.of(cluster, mine, replaced, deleted)).allSatisfy(r -> assertThat(r.getErrorCode()).as(r.getErrorMessage()).isZero());
        assertThat(onDisk().brokerConfig("")).as("the legacy form replaces, custom names included")
                .containsExactly(Map.entry("my.reporter.endpoint", "http://y"));
        assertThat(onDisk().brokerConfigs()).doesNotContainKey("1");
    }

    @Test
    void brokerConfigsKaasCannotChangeOrThatAreInvalidAreRefusedAndNothingIsPublished() throws Exception {
        lead(core);
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), new FakeSession());
        long version = onDisk().version();

        var fixed = core.alterBrokerConfigs(brokerConfigs("", false, 0, "num.io.threads", "2", "log.retention.hours", "1"));
        var bad = core.alterBrokerConfigs(brokerConfigs("", false, 0, "log.retention.ms", "soon"));
        var notList = core.alterBrokerConfigs(brokerConfigs("", false, 2, "log.retention.ms", "1"));
        var zero = core.alterBrokerConfigs(brokerConfigs("1", false, 0, "log.retention.ms", "0"));
        var onlyChecked = core.alterBrokerConfigs(brokerConfigs("", false, 0, "log.retention.ms", "1000").toBuilder().setValidateOnly(true).build());

        assertThat(fixed.getErrorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST.code());
        assertThat(fixed.getErrorMessage()).isEqualTo("Cannot update these configs dynamically: Set(log.retention.hours, num.io.threads)");
        assertThat(bad.getErrorCode()).as("Apache's KAFKA-13609").isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST.code());
        assertThat(bad.getErrorMessage()).isEqualTo("Invalid value soon for configuration log.retention.ms: Not a number of type LONG");
        assertThat(notList.getErrorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_CONFIG.code());
        assertThat(notList.getErrorMessage()).isEqualTo("Config value append is not allowed for config key: log.retention.ms");
        assertThat(zero.getErrorMessage()).isEqualTo("log.retention.ms must be unlimited (-1) or, equal or greater than 1");
        assertThat(onlyChecked.getErrorCode()).isZero();
        assertThat(onDisk().version()).isEqualTo(version);
        assertThat(onDisk().brokerConfigs()).isEmpty();
    }

    @Test
    void aHandoffWhoseOldOwnerDiesIsCompletedByTheFence() throws Exception {
        FakeSession one = new FakeSession();
        broker2JoinsBroker1sTopic(one, new FakeSession());
        assertThat(core.handoffsInFlight()).isPositive();
        core.brokerGone(1, one, false);
        assertThat(core.handoffsInFlight()).isZero();
        assertThat(leaders(onDisk(), "t")).containsOnly(2);
    }

    @Test
    void aHandoffTheOldOwnerNeverConfirmsIsPlacedAfterTheSessionTimeout() throws Exception {
        FakeSession one = new FakeSession();
        FakeSession two = new FakeSession();
        broker2JoinsBroker1sTopic(one, two);
        assertThat(core.handoffsInFlight()).isPositive();
        // Broker 1 keeps reporting (alive) but never confirms the version that took partitions away.
        for (int s = 0; s < 8; s++) {
            advance(1000);
            core.brokerStatus(1, one, 0);
            core.brokerStatus(2, two, onDisk().version());
            core.tick();
        }
        assertThat(leaders(onDisk(), "t")).as("still waiting within the session timeout").contains(PartitionAssignment.NO_LEADER);
        for (int s = 0; s < 2; s++) {
            advance(1000);
            core.brokerStatus(1, one, 0);
            core.brokerStatus(2, two, onDisk().version());
            core.tick();
        }
        assertThat(leaders(onDisk(), "t")).as("placed under the fence").doesNotContain(PartitionAssignment.NO_LEADER)
                .containsExactlyInAnyOrder(1, 1, 2, 2);
    }

    @Test
    void aBrokerWhoseDataDirectoryIsNotThisClustersVolumeIsRefused() throws Exception {
        lead(core);
        FakeSession foreign = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", "some-other-cluster", foreign);
        assertThat(foreign.refusedBecause).contains("some-other-cluster").contains(core.clusterId());
        assertThat(foreign.received).isEmpty();
        FakeSession empty = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", "", empty);
        assertThat(empty.refusedBecause).isNotNull();
        assertThat(onDisk().brokers()).isEmpty();
    }

    private static List<Integer> leaders(Assignment a, String topic) {
        return a.topicByName(topic).orElseThrow().partitions().stream().map(PartitionAssignment::leader).toList();
    }

    @Test
    void aNewIncarnationAfterABrokenStreamGetsNewEpochs() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(create("t", 2));
        core.brokerGone(1, s, false);
        FakeSession restarted = new FakeSession();
        core.brokerRegistered(broker(1), "inc-2", core.clusterId(), restarted);
        assertThat(restarted.refusedBecause).isNull();
        assertThat(epochs(onDisk(), "t")).containsOnly(1);
        assertThat(onDisk().topicByName("t").orElseThrow().partitions()).extracting(PartitionAssignment::leader).containsOnly(1);
    }

    @Test
    void silentBrokersExpireAfterTheSessionTimeout() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(create("t", 1));
        advance(8000);
        core.brokerStatus(1, s, -1);
        advance(8000);
        core.tick();
        assertThat(s.closedBecause).isNull();
        advance(1500);
        core.tick();
        assertThat(s.closedBecause).contains("session timeout");
        assertThat(onDisk().brokers()).isEmpty();
    }

    @Test
    void aNewControllerPresumesKnownBrokersAliveDuringTheGrace() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        core.createTopics(create("t", 2));
        Assignment before = onDisk();

        clock.addAndGet(LEASE_MS);
        ControllerCore successor = newCore("b");
        long epoch = lead(successor);
        assertThat(onDisk().topics()).isEqualTo(before.topics());
        assertThat(onDisk().controllerEpoch()).isEqualTo(epoch).isGreaterThan(before.controllerEpoch());
        clock.addAndGet(3001);
        successor.tick();
        assertThat(onDisk().topicByName("t").orElseThrow().partitions()).extracting(PartitionAssignment::leader)
                .containsOnly(PartitionAssignment.NO_LEADER);
    }

    @Test
    void aSecondIncarnationIsRefusedWhileTheFirstIsAliveAndAcceptedOnceItIsGone() throws Exception {
        lead(core);
        FakeSession first = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), first);
        core.createTopics(create("t", 1));
        BrokerInfo impostor = new BrokerInfo(1, List.of(new EndpointInfo("PLAINTEXT", "elsewhere", 1, "PLAINTEXT")));

        FakeSession second = new FakeSession();
        core.brokerRegistered(impostor, "inc-2", core.clusterId(), second);
        assertThat(second.refusedBecause).contains("already registered by a live broker").contains("inc-1");
        assertThat(second.received).isEmpty();
        assertThat(first.closedBecause).isNull();
        assertThat(onDisk().broker(1).orElseThrow().endpoints().get(0).host()).isEqualTo("localhost");
        // Reports from the refused stream do not keep anything alive.
        core.brokerStatus(1, second, -1);

        clock.addAndGet(1000);
        core.brokerGone(1, first, false);
        FakeSession retry = new FakeSession();
        core.brokerRegistered(impostor, "inc-2", core.clusterId(), retry);
        assertThat(retry.refusedBecause).isNull();
        assertThat(onDisk().broker(1).orElseThrow().endpoints().get(0).host()).isEqualTo("elsewhere");
    }

    @Test
    void theSameIncarnationOnANewStreamReplacesItsOlderStream() throws Exception {
        lead(core);
        FakeSession old = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), old);
        FakeSession again = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), again);
        assertThat(old.closedBecause).contains("registered again");
        assertThat(again.refusedBecause).isNull();
        assertThat(again.received).isNotEmpty();
    }

    @Test
    void producerIdBlocksAreNeverReused() throws Exception {
        lead(core);
        long a = core.allocateProducerIds();
        metadata.lease().release("a");
        ControllerCore restarted = newCore("b");
        lead(restarted);
        long b = restarted.allocateProducerIds();
        assertThat(b).isGreaterThanOrEqualTo(a + 1000);
    }

    @Test
    void aDeposedControllersCatalogAssignmentAndProducerIdWritesAreRefused() throws Exception {
        // "a" is paused (its clock stands still) while the lease expires and "b" takes it.
        AtomicLong pausedClock = new AtomicLong(clock.get());
        ControllerCore deposed = newCore("a", metadata, pausedClock::get, 100_000);
        lead(deposed);
        FakeSession s = new FakeSession();
        deposed.brokerRegistered(broker(1), "inc-1", deposed.clusterId(), s);
        deposed.createTopics(create("kept", 1));
        clock.addAndGet(LEASE_MS + 1);
        ControllerCore successor = newCore("b");
        long newEpoch = lead(successor);
        Assignment successors = onDisk();
        List<TopicSpec> catalog = metadata.topics().topics();

        assertThatThrownBy(() -> deposed.createTopics(create("late", 1))).isInstanceOf(LeaseFencedException.class);
        assertThat(deposed.isLeader()).as("a refused write ends the leadership").isFalse();
        assertThat(s.closedBecause).contains("stepped down");
        assertThat(metadata.topics().topics()).isEqualTo(catalog);
        assertThat(onDisk()).isEqualTo(successors);
        assertThat(onDisk().controllerEpoch()).isEqualTo(newEpoch);

        // The same for an assignment publication and a producer-id block.
        ControllerCore deposedAgain = newCore("a", metadata, pausedClock::get, 100_000);
        clock.addAndGet(LEASE_MS + 1);
        long third = lead(newCore("a"));
        clock.addAndGet(LEASE_MS + 1);
        lead(newCore("c"));
        assertThat(third).isLessThan(metadata.lease().acquireOrRenew("c", clock.get(), LEASE_MS).transitions());
        deposedAgain.maintainLease();
        assertThat(deposedAgain.isLeader()).isFalse();
        ClusterMetadata stale = fencedOnly(metadata, third);
        ControllerCore zombie = newCore("a", stale, pausedClock::get, 100_000);
        assertThatThrownBy(() -> lead(zombie)).isInstanceOf(LeaseFencedException.class);
        assertThat(onDisk().controllerEpoch()).isGreaterThan(third);
        assertThatThrownBy(() -> metadata.producerIds().allocateBlock(third)).isInstanceOf(LeaseFencedException.class);
    }

    /** The real binding, except that its lease always answers as if {@code epoch} were still held. */
    private static ClusterMetadata fencedOnly(StandaloneMetadata real, long epoch) {
        return new Wrapped(real) {
            @Override
            public ControllerLease lease() {
                return new ControllerLease() {
                    @Override
                    public LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) {
                        return new LeaseRecord(holder, nowMs + durationMs, epoch);
                    }

                    @Override
                    public void release(String holder) {
                    }
                };
            }
        };
    }

    @Test
    void failedRenewalsStepTheControllerDownBeforeItsRenewDeadlineAndNothingIsWrittenAfter() throws Exception {
        AtomicBoolean failing = new AtomicBoolean();
        AtomicInteger writes = new AtomicInteger();
        List<Long> writeTimes = new ArrayList<>();
        ClusterMetadata flaky = new Wrapped(metadata) {
            @Override
            public ControllerLease lease() {
                ControllerLease real = metadata.lease();
                return new ControllerLease() {
                    @Override
                    public LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException {
                        if (failing.get()) {
                            throw new IOException("volume unreachable");
                        }
                        return real.acquireOrRenew(holder, nowMs, durationMs);
                    }

                    @Override
                    public void release(String holder) throws IOException {
                        real.release(holder);
                    }
                };
            }

            @Override
            void wrote() {
                writes.incrementAndGet();
                writeTimes.add(clock.get());
            }
        };
        ControllerCore c = newCore("a", flaky, clock::get, 100_000);
        lead(c);
        long renewedAt = clock.get();
        long renewDeadline = renewedAt + LEASE_MS;
        FakeSession s = new FakeSession();
        c.brokerRegistered(broker(1), "inc-1", c.clusterId(), s);
        c.createTopics(create("t", 1));

        failing.set(true);
        clock.addAndGet(LEASE_MS / 3);
        c.maintainLease();
        c.tick();
        assertThat(c.isLeader()).as("one failed renewal is tolerated").isTrue();
        assertThat(c.createTopics(create("u", 1)).getResults(0).getErrorCode()).isZero();

        clock.set(renewedAt + LEASE_MS * 2 / 3);
        c.maintainLease();
        assertThat(c.isLeader()).isFalse();
        assertThat(clock.get()).isLessThan(renewDeadline);
        assertThat(s.closedBecause).contains("stepped down");
        int writesBefore = writes.get();
        assertThat(writeTimes).allSatisfy(t -> assertThat(t).isLessThan(renewedAt + LEASE_MS * 2 / 3));

        assertThatThrownBy(() -> c.createTopics(create("v", 1))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(c::allocateProducerIds).isInstanceOf(IllegalStateException.class);
        c.tick();
        clock.addAndGet(1000);
        c.maintainLease();
        c.tick();
        assertThat(writes.get()).isEqualTo(writesBefore);
        assertThat(metadata.topics().topics()).extracting(TopicSpec::name).containsExactlyInAnyOrder("t", "u");
    }

    @Test
    void aControllerWhoseRenewalsStallStepsDownOnItsOwnTickWithoutAnotherRenewalAttempt() throws Exception {
        lead(core);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", core.clusterId(), s);
        clock.addAndGet(LEASE_MS * 2 / 3 - 1);
        core.tick();
        assertThat(core.isLeader()).isTrue();
        clock.addAndGet(1);
        core.tick();
        assertThat(core.isLeader()).isFalse();
        assertThat(s.closedBecause).contains("could not be renewed");
    }

    /** Delegates to a real binding, calling {@link #wrote()} before every write. */
    private static class Wrapped implements ClusterMetadata {
        private final ClusterMetadata real;

        Wrapped(ClusterMetadata real) {
            this.real = real;
        }

        void wrote() {
        }

        @Override
        public ControllerLease lease() {
            return real.lease();
        }

        @Override
        public TopicCatalog topics() {
            TopicCatalog t = real.topics();
            return new TopicCatalog() {
                @Override
                public List<TopicSpec> topics() throws IOException {
                    return t.topics();
                }

                @Override
                public void store(long leaseEpoch, List<TopicSpec> topics) throws IOException {
                    wrote();
                    t.store(leaseEpoch, topics);
                }
            };
        }

        @Override
        public ProducerIdStore producerIds() {
            ProducerIdStore p = real.producerIds();
            return epoch -> {
                wrote();
                return p.allocateBlock(epoch);
            };
        }

        @Override
        public AssignmentStore assignments() {
            AssignmentStore a = real.assignments();
            return new AssignmentStore() {
                @Override
                public Optional<Assignment> load() throws IOException {
                    return a.load();
                }

                @Override
                public void store(long leaseEpoch, String json) throws IOException {
                    wrote();
                    a.store(leaseEpoch, json);
                }
            };
        }

        @Override
        public String clusterId(long leaseEpoch) throws IOException {
            return real.clusterId(leaseEpoch);
        }

        @Override
        public void close() {
        }
    }
}
