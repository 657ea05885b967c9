package dev.kaas.broker.data;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * OffsetForLeaderEpoch at every version against a partition whose log was written by epochs 1
 * (offsets 0-2), 3 (3-4) and 5 (5, the current leader here), requests and responses passing through
 * the wire encoding of their version, as Apache 3.7 answers them.
 */
class OffsetForLeaderEpochHandlerTest {
    static final int BROKER = 1;
    static final String TOPIC = "orders";
    static final String TOPIC_ID = Uuid.randomUuid().toString();
    static final int CURRENT_EPOCH = 5;
    static final long LOG_END = 6;

    @TempDir
    Path data;
    final Queue<Runnable> flushes = new ArrayDeque<>();
    final List<PartitionLog> opened = new ArrayList<>();
    Partitions partitions;
    OffsetForLeaderEpochHandler handler;

    @BeforeEach
    void leadPartitionZeroUnderEpochFive() throws Exception {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", BROKER));
        ClusterView view = new ClusterView(config);
        partitions = new Partitions(config);
        // Partition 0 is led here, partition 1 by broker 2.
        view.applied(new Assignment(1, 1, "cluster", List.of(), List.of(new TopicAssignment(new TopicSpec(TOPIC, TOPIC_ID, 2, Map.of()),
                List.of(new PartitionAssignment(0, BROKER, CURRENT_EPOCH), new PartitionAssignment(1, 2, 3)))), List.of(), List.of()));
        Path dir = PartitionLog.directory(partitions.dataDir(), TOPIC, TOPIC_ID, 0);
        lead(dir, 1, 3).close();
        lead(dir, 3, 2).close();
        PartitionLog current = lead(dir, CURRENT_EPOCH, 1);
        assertThat(current.logEndOffset()).isEqualTo(LOG_END);
        partitions.put(new TopicPartition(TOPIC, 0), new Replica(current, new SerialExecutor(partitions.writers())));
        handler = new OffsetForLeaderEpochHandler(partitions, view);
    }

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
    }

    private PartitionLog lead(Path dir, int epoch, int batches) throws IOException {
        // Segments roll after every batch: an epoch's several segments are still one epoch.
        PartitionLog log = PartitionLog.open(dir, new TopicPartition(TOPIC, 0), TOPIC_ID, epoch, BROKER,
                LogConfig.from(Map.of("segment.bytes", "100")), () -> 1_700_000_000_000L, flushes::add);
        opened.add(log);
        for (int i = 0; i < batches; i++) {
            log.append(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(("e" + epoch).getBytes(StandardCharsets.UTF_8))));
        }
        return log;
    }

    /** One partition's answer, the request and the response both through the wire at {@code version}. */
    EpochEndOffset ask(short version, String topic, int partition, int currentLeaderEpoch, int leaderEpoch) {
        OffsetForLeaderEpochRequestData req = new OffsetForLeaderEpochRequestData().setReplicaId(-1);
        OffsetForLeaderTopic t = new OffsetForLeaderTopic().setTopic(topic);
        t.partitions().add(new OffsetForLeaderPartition().setPartition(partition)
                .setCurrentLeaderEpoch(currentLeaderEpoch).setLeaderEpoch(leaderEpoch));
        req.topics().add(t);
        OffsetsForLeaderEpochRequest parsed = OffsetsForLeaderEpochRequest.parse(encode(req, version), version);
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version, "t", 1), "PLAINTEXT", "/127.0.0.1");
        CompletableFuture<?> answer = handler.handle(ctx, parsed).toCompletableFuture();
        assertThat(answer).as("answered on the calling thread").isCompleted();
        var resp = (OffsetForLeaderEpochResponseData) answer.join();
        var back = new OffsetForLeaderEpochResponseData(new ByteBufferAccessor(encode(resp, version)), version);
        assertThat(back.topics()).singleElement().satisfies(r -> assertThat(r.topic()).isEqualTo(topic));
        return back.topics().iterator().next().partitions().get(0);
    }

    static ByteBuffer encode(org.apache.kafka.common.protocol.Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, version));
        m.write(new ByteBufferAccessor(buf), cache, version);
        return buf.flip();
    }

    /** What the client reads for an answer of {@code epoch} and {@code endOffset}: v0 has no epoch field. */
    static void assertAnswer(EpochEndOffset e, short version, int epoch, long endOffset) {
        assertThat(Errors.forCode(e.errorCode())).isEqualTo(Errors.NONE);
        assertThat(e.partition()).isZero();
        assertThat(e.endOffset()).as("end offset").isEqualTo(endOffset);
        assertThat(e.leaderEpoch()).as("leader epoch").isEqualTo(version >= 1 ? epoch : -1);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void eachEpochEndsWhereTheNextBegins(short v) {
        assertAnswer(ask(v, TOPIC, 0, -1, 1), v, 1, 3);
        assertAnswer(ask(v, TOPIC, 0, -1, 3), v, 3, 5);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void anEpochBetweenKnownOnesIsAnsweredWithTheLargestKnownBelowIt(short v) {
        assertAnswer(ask(v, TOPIC, 0, -1, 2), v, 1, 3);
        assertAnswer(ask(v, TOPIC, 0, -1, 4), v, 3, 5);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void theLatestEpochEndsAtTheLogEnd(short v) {
        assertAnswer(ask(v, TOPIC, 0, -1, CURRENT_EPOCH), v, CURRENT_EPOCH, LOG_END);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void anEpochBeforeTheFirstIsAnsweredWithItselfAndTheFirstStart(short v) {
        // Apache's LeaderEpochFileCache: (requested epoch, start offset of the first known epoch).
        assertAnswer(ask(v, TOPIC, 0, -1, 0), v, 0, 0);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void anUndefinedOrFutureEpochHasNoEndButNoError(short v) {
        assertAnswer(ask(v, TOPIC, 0, -1, -1), v, -1, -1);
        assertAnswer(ask(v, TOPIC, 0, -1, CURRENT_EPOCH + 1), v, -1, -1);
    }

    @ParameterizedTest
    @ValueSource(shorts = {2, 3, 4})
    void aStaleOrFutureCurrentLeaderEpochIsRefusedFromV2(short v) {
        assertThat(Errors.forCode(ask(v, TOPIC, 0, CURRENT_EPOCH - 1, 3).errorCode())).isEqualTo(Errors.FENCED_LEADER_EPOCH);
        assertThat(Errors.forCode(ask(v, TOPIC, 0, CURRENT_EPOCH + 1, 3).errorCode())).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
        EpochEndOffset refused = ask(v, TOPIC, 0, CURRENT_EPOCH - 1, 3);
        assertThat(refused.endOffset()).isEqualTo(-1);
        assertThat(refused.leaderEpoch()).isEqualTo(-1);
        assertAnswer(ask(v, TOPIC, 0, CURRENT_EPOCH, 3), v, 3, 5);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1})
    void beforeV2ThereIsNoCurrentLeaderEpochToCheck(short v) {
        // The client's stale epoch does not reach the wire at these versions.
        assertAnswer(ask(v, TOPIC, 0, CURRENT_EPOCH - 1, 3), v, 3, 5);
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void aPartitionLedElsewhereIsNotLeaderAndAnUnknownOneUnknown(short v) {
        assertThat(Errors.forCode(ask(v, TOPIC, 1, -1, 3).errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(Errors.forCode(ask(v, TOPIC, 2, -1, 3).errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(Errors.forCode(ask(v, "no-such-topic", 0, -1, 3).errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    void aFollowersReplicaIdIsAnsweredAsAConsumers() {
        // Apache answers every replica id from the leader (fetchOnlyFromLeader = true).
        OffsetForLeaderEpochRequestData req = new OffsetForLeaderEpochRequestData().setReplicaId(2);
        OffsetForLeaderTopic t = new OffsetForLeaderTopic().setTopic(TOPIC);
        t.partitions().add(new OffsetForLeaderPartition().setPartition(0).setCurrentLeaderEpoch(CURRENT_EPOCH).setLeaderEpoch(1));
        req.topics().add(t);
        short v = 4;
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.OFFSET_FOR_LEADER_EPOCH, v, "t", 1), "PLAINTEXT", "/127.0.0.1");
        var resp = (OffsetForLeaderEpochResponseData) handler.handle(ctx, OffsetsForLeaderEpochRequest.parse(encode(req, v), v))
                .toCompletableFuture().join();

        assertAnswer(resp.topics().iterator().next().partitions().get(0), v, 1, 3);
    }

    @Test
    void aLogFencedByASuccessorIsNoLongerTheLeadersAnswer() throws Exception {
        // Given a successor took the partition over under epoch 6 while this broker still has it open
        PartitionLog current = partitions.get(new TopicPartition(TOPIC, 0)).log();
        lead(current.directory(), CURRENT_EPOCH + 1, 0);
        // and this broker's next acknowledgement found the fence moved
        var appended = current.append(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("late".getBytes(StandardCharsets.UTF_8))));
        CompletableFuture<Void> ack = current.awaitDurable(appended.lastOffset() + 1);
        for (Runnable r; (r = flushes.poll()) != null; ) {
            r.run();
        }
        assertThat(ack).isCompletedExceptionally();

        // When a consumer asks it
        EpochEndOffset e = ask((short) 4, TOPIC, 0, -1, CURRENT_EPOCH);

        // Then
        assertThat(Errors.forCode(e.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }
}
