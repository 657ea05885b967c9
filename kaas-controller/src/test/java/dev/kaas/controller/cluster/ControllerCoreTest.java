package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.cluster.StandaloneMetadata;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicToCreate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ControllerCoreTest {
    @TempDir
    Path data;

    private final AtomicLong clock = new AtomicLong(1_000_000);
    private StandaloneMetadata metadata;
    private ControllerCore core;

    static final class FakeSession implements BrokerSession {
        final List<Assignment> received = new ArrayList<>();
        String closedBecause;

        @Override
        public void sendAssignment(long version, long controllerEpoch, String json) {
            try {
                received.add(Json.read(json, Assignment.class));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void close(String reason) {
            closedBecause = reason;
        }

        Assignment last() {
            return received.get(received.size() - 1);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        metadata = new StandaloneMetadata(data);
        core = newCore();
    }

    private ControllerCore newCore() {
        return new ControllerCore(metadata, data, clock::get, new ControllerCore.Settings(9000, 3000, 1));
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

    @Test
    void aRegisteringBrokerGetsTheAssignmentAndEveryChangeIsWrittenBeforeItIsPushed() throws Exception {
        core.becomeLeader(7);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", s);
        var reply = core.createTopics(create("orders", 3));

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        Assignment pushed = s.last();
        assertThat(pushed.version()).isEqualTo(reply.getAssignmentVersion());
        assertThat(pushed.controllerEpoch()).isEqualTo(7);
        assertThat(pushed.topicByName("orders").orElseThrow().partitions()).extracting(PartitionAssignment::leader).containsOnly(1);
        assertThat(onDisk()).isEqualTo(pushed);
        assertThat(s.received).extracting(Assignment::version).isSorted();
    }

    @Test
    void createTopicsValidatesLikeApache() throws Exception {
        core.becomeLeader(1);
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
    void validateOnlyChangesNothing() throws Exception {
        core.becomeLeader(1);
        var reply = core.createTopics(CreateTopicsCall.newBuilder().setValidateOnly(true)
                .addTopics(TopicToCreate.newBuilder().setName("dry").setNumPartitions(2)).build());
        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(metadata.topics().topics()).isEmpty();
    }

    @Test
    void deleteByNameOrIdAndUnknownTopics() throws Exception {
        core.becomeLeader(1);
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
    void aGoneBrokerLosesItsPartitionsAndGetsANewEpochWhenItReturns() throws Exception {
        core.becomeLeader(1);
        FakeSession first = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", first);
        core.createTopics(create("t", 1));
        clock.addAndGet(5000);
        core.brokerGone(1, first);
        assertThat(onDisk().topicByName("t").orElseThrow().partitions().get(0).leader()).isEqualTo(PartitionAssignment.NO_LEADER);

        FakeSession second = new FakeSession();
        core.brokerRegistered(broker(1), "inc-2", second);
        PartitionAssignment p = second.last().topicByName("t").orElseThrow().partitions().get(0);
        assertThat(p.leader()).isEqualTo(1);
        assertThat(p.leaderEpoch()).isEqualTo(1);
    }

    @Test
    void silentBrokersExpireAfterTheSessionTimeout() throws Exception {
        core.becomeLeader(1);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", s);
        core.createTopics(create("t", 1));
        clock.addAndGet(8000);
        core.brokerStatus(1, s);
        clock.addAndGet(8000);
        core.tick();
        assertThat(s.closedBecause).isNull();
        clock.addAndGet(1500);
        core.tick();
        assertThat(s.closedBecause).contains("session timeout");
        assertThat(onDisk().brokers()).isEmpty();
    }

    @Test
    void aNewControllerPresumesKnownBrokersAliveDuringTheGrace() throws Exception {
        core.becomeLeader(1);
        FakeSession s = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", s);
        core.createTopics(create("t", 2));
        Assignment before = onDisk();

        ControllerCore successor = newCore();
        successor.becomeLeader(2);
        assertThat(onDisk().topics()).isEqualTo(before.topics());
        assertThat(onDisk().controllerEpoch()).isEqualTo(2);
        clock.addAndGet(3001);
        successor.tick();
        assertThat(onDisk().topicByName("t").orElseThrow().partitions()).extracting(PartitionAssignment::leader)
                .containsOnly(PartitionAssignment.NO_LEADER);
    }

    @Test
    void aNewerRegistrationOfTheSameBrokerClosesTheOlderStream() throws Exception {
        core.becomeLeader(1);
        FakeSession old = new FakeSession();
        core.brokerRegistered(broker(1), "inc-1", old);
        core.brokerRegistered(broker(1), "inc-2", new FakeSession());
        assertThat(old.closedBecause).contains("registered again");
    }

    @Test
    void producerIdBlocksAreNeverReused() throws Exception {
        core.becomeLeader(1);
        long a = core.allocateProducerIds();
        ControllerCore restarted = newCore();
        restarted.becomeLeader(2);
        long b = restarted.allocateProducerIds();
        assertThat(b).isGreaterThanOrEqualTo(a + 1000);
    }
}
