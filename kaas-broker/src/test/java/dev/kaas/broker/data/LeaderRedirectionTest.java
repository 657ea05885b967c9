package dev.kaas.broker.data;

import dev.kaas.broker.quota.ClientQuotas;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KIP-951 as Apache 3.7 answers it: Produce v10 and Fetch v16 tell a client sent to the wrong
 * broker who leads the partition now (id, epoch) and where to reach that broker on the client's
 * listener; lower versions carry neither.
 */
class LeaderRedirectionTest {
    static final int ME = 1;
    static final String TOPIC = "t";
    static final Uuid TOPIC_ID = Uuid.randomUuid();

    @TempDir
    Path data;
    PartitionLog led;
    ProduceHandler produce;
    FetchHandler fetch;

    /** Partition 0 is led by broker 2 (epoch 7), partition 1 by nobody (epoch 4), partition 2 here (epoch 5). */
    @BeforeEach
    void givenThreePartitionsLedInThreeWays() throws Exception {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", ME));
        ClusterView view = new ClusterView(config);
        Partitions partitions = new Partitions(config);
        view.applied(new Assignment(1, 1, "c", List.of(
                new BrokerInfo(ME, List.of(new EndpointInfo("PLAINTEXT", "b1", 9091, "PLAINTEXT"))),
                new BrokerInfo(2, List.of(new EndpointInfo("INTERNAL", "b2.internal", 19092, "PLAINTEXT"),
                        new EndpointInfo("PLAINTEXT", "b2", 9092, "PLAINTEXT")))),
                List.of(new TopicAssignment(new TopicSpec(TOPIC, TOPIC_ID.toString(), 3, Map.of()), List.of(
                        new PartitionAssignment(0, 2, 7), new PartitionAssignment(1, PartitionAssignment.NO_LEADER, 4),
                        new PartitionAssignment(2, ME, 5)))),
                List.of(), List.of()));
        TopicPartition tp2 = new TopicPartition(TOPIC, 2);
        led = PartitionLog.open(PartitionLog.directory(partitions.dataDir(), TOPIC, TOPIC_ID.toString(), 2), tp2, TOPIC_ID.toString(),
                5, ME, LogConfig.defaults(), System::currentTimeMillis, partitions.flush());
        partitions.put(tp2, new Replica(led, new SerialExecutor(partitions.writers())));
        produce = new ProduceHandler(partitions, view, new NoVerification(), new ClientQuotas(view, config));
        fetch = new FetchHandler(partitions, view, new FetchWaiters(partitions), config, new ClientQuotas(view, config));
    }

    @AfterEach
    void tearDown() {
        led.abandon();
    }

    static ByteBuffer encode(Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, version));
        m.write(new ByteBufferAccessor(buf), cache, version);
        return buf.flip();
    }

    static RequestContext ctx(ApiKeys key, short version) {
        return new RequestContext(new RequestHeader(key, version, "t", 1), "PLAINTEXT", "/127.0.0.1");
    }

    ProduceResponseData produceToPartitionsZeroAndOne(short v) throws Exception {
        var req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        var t = new ProduceRequestData.TopicProduceData().setName(TOPIC);
        for (int p : new int[] {0, 1}) {
            t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(p)
                    .setRecords(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("v".getBytes()))));
        }
        req.topicData().add(t);
        return (ProduceResponseData) produce.handle(ctx(ApiKeys.PRODUCE, v), ProduceRequest.parse(encode(req, v), v))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Partitions 0 and 1 (led elsewhere, or by nobody) and 2 with a stale current leader epoch. */
    FetchResponseData fetchMisdirected(short v) throws Exception {
        var req = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setSessionId(0).setSessionEpoch(-1);
        var t = v >= 13 ? new FetchRequestData.FetchTopic().setTopicId(TOPIC_ID) : new FetchRequestData.FetchTopic().setTopic(TOPIC);
        for (int p : new int[] {0, 1, 2}) {
            t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0)
                    .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(p == 2 ? 4 : -1));
        }
        req.topics().add(t);
        if (v < 15) {
            req.setReplicaId(-1);
        }
        return (FetchResponseData) fetch.handle(ctx(ApiKeys.FETCH, v), FetchRequest.parse(encode(req, v), v))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    static List<String> endpoints(Iterable<? extends Object> nodes) {
        List<String> out = new ArrayList<>();
        for (Object n : nodes) {
            if (n instanceof ProduceResponseData.NodeEndpoint e) {
                out.add(e.nodeId() + "@" + e.host() + ":" + e.port() + "/" + e.rack());
            } else if (n instanceof FetchResponseData.NodeEndpoint e) {
                out.add(e.nodeId() + "@" + e.host() + ":" + e.port() + "/" + e.rack());
            }
        }
        return out;
    }

    @Test
    void produceV10NamesTheCurrentLeaderAndWhereToReachIt() throws Exception {
        ProduceResponseData resp = produceToPartitionsZeroAndOne((short) 10);

        // The client reads what went over the wire.
        ProduceResponseData read = new ProduceResponseData(new ByteBufferAccessor(encode(resp, (short) 10)), (short) 10);
        var parts = read.responses().find(TOPIC).partitionResponses();
        assertThat(parts).allSatisfy(p -> assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER));
        assertThat(parts.get(0).currentLeader()).isEqualTo(new ProduceResponseData.LeaderIdAndEpoch().setLeaderId(2).setLeaderEpoch(7));
        assertThat(parts.get(1).currentLeader()).isEqualTo(new ProduceResponseData.LeaderIdAndEpoch().setLeaderId(-1).setLeaderEpoch(4));
        assertThat(endpoints(read.nodeEndpoints())).containsExactly("2@b2:9092/null");
    }

    @Test
    void produceBelowV10IsUnchanged() throws Exception {
        ProduceResponseData resp = produceToPartitionsZeroAndOne((short) 9);

        var parts = resp.responses().find(TOPIC).partitionResponses();
        assertThat(parts).allSatisfy(p -> {
            assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
            assertThat(p.currentLeader()).isEqualTo(new ProduceResponseData.LeaderIdAndEpoch());
        });
        assertThat(resp.nodeEndpoints()).isEmpty();
        assertThat(encode(resp, (short) 9).remaining()).isPositive();
    }

    @Test
    void fetchV16NamesTheCurrentLeaderForNotLeaderAndFencedEpoch() throws Exception {
        FetchResponseData resp = fetchMisdirected((short) 16);

        FetchResponseData read = new FetchResponseData(new ByteBufferAccessor(encode(resp, (short) 16)), (short) 16);
        var parts = read.responses().get(0).partitions();
        assertThat(parts).extracting(p -> Errors.forCode(p.errorCode()))
                .containsExactly(Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH);
        assertThat(parts).extracting(p -> p.currentLeader().leaderId() + "/" + p.currentLeader().leaderEpoch())
                .containsExactly("2/7", "-1/4", "1/5");
        assertThat(endpoints(read.nodeEndpoints())).containsExactlyInAnyOrder("2@b2:9092/null", "1@b1:9091/null");
    }

    @Test
    void fetchBelowV16IsUnchanged() throws Exception {
        // v12-15 have a current_leader field; Apache fills it only from v16.
        FetchResponseData resp = fetchMisdirected((short) 15);

        var parts = resp.responses().get(0).partitions();
        assertThat(parts).extracting(p -> Errors.forCode(p.errorCode()))
                .containsExactly(Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH);
        assertThat(parts).allSatisfy(p -> assertThat(p.currentLeader()).isEqualTo(new FetchResponseData.LeaderIdAndEpoch()));
        assertThat(resp.nodeEndpoints()).isEmpty();
    }
}
