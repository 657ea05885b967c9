package dev.kaas.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.fs.IdFileNames;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.Slots;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OffsetCommit through the real handler, coordinator and group files: a write that fails on the
 * disk is COORDINATOR_NOT_AVAILABLE (retriable; the Java consumer's commitSync treats
 * UNKNOWN_SERVER_ERROR as fatal), a write after a takeover is NOT_COORDINATOR.
 */
class OffsetCommitStorageErrorTest {
    static final String GROUP = "g";

    @TempDir
    Path data;
    Path slotDir;
    OffsetCommitHandler handler;

    @BeforeEach
    void coordinatorOwnsTheGroup() {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        ClusterView view = new ClusterView(config);
        GroupCoordinator coordinator = new GroupCoordinator(view, new Partitions(config), config);
        int slot = Slots.slotFor(GROUP);
        Assignment a = new Assignment(1, 1, "c", List.of(),
                List.of(new TopicAssignment(new TopicSpec("t", Uuid.randomUuid().toString(), 1, Map.of()),
                        List.of(new PartitionAssignment(0, 1, 0)))),
                List.of(new SlotAssignment(slot, 1, 0)), List.of());
        view.applied(a);
        coordinator.onAssignment(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> coordinator.owns(GROUP));
        slotDir = data.resolve("__cluster").resolve("groups").resolve(String.format("slot-%02d", slot));
        handler = new OffsetCommitHandler(coordinator);
    }

    @Test
    void offsetsFileWriteFailureIsCoordinatorNotAvailable() throws Exception {
        // Given the group's offsets file cannot be written (a directory is in its place)
        Files.createDirectories(slotDir.resolve(IdFileNames.encode(GROUP) + ".00000000.json").resolve("in-the-way"));

        // When / Then
        assertThat(commit()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void writeAfterATakeoverIsNotCoordinator() throws Exception {
        // Given another broker fenced the slot with a newer epoch
        Files.writeString(slotDir.resolve("fences").resolve("00000001"), "{\"epoch\":1,\"owner\":2}");

        // When / Then
        assertThat(commit()).isEqualTo(Errors.NOT_COORDINATOR);
    }

    private Errors commit() throws Exception {
        short version = 8;
        OffsetCommitRequestData req = new OffsetCommitRequestData().setGroupId(GROUP).setGenerationIdOrMemberEpoch(-1).setMemberId("");
        req.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t").setPartitions(List.of(
                new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(5))));
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.OFFSET_COMMIT, version, "test", 1), "PLAINTEXT", "127.0.0.1");
        OffsetCommitResponseData resp = (OffsetCommitResponseData) handler.handle(ctx, new OffsetCommitRequest(req, version))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        return Errors.forCode(resp.topics().get(0).partitions().get(0).errorCode());
    }
}
