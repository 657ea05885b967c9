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
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
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

/** A long-polling fetch is never left to sit out its max wait for bytes that arrived while it parked. */
class FetchWakeupTest {
    static final String TOPIC = "t";
    static final Uuid TOPIC_ID = Uuid.randomUuid();

    @TempDir
    Path data;
    PartitionLog log;

    BrokerConfig config;
    ClusterView view;
    Partitions partitions;

    /** One broker leading the one partition of {@link #TOPIC}, its log open. */
    @BeforeEach
    void leadOnePartition() throws Exception {
        config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        view = new ClusterView(config);
        partitions = new Partitions(config);
        view.applied(new Assignment(1, 1, "c", List.of(new BrokerInfo(1, List.of(new EndpointInfo("PLAINTEXT", "b1", 9091, "PLAINTEXT")))),
                List.of(new TopicAssignment(new TopicSpec(TOPIC, TOPIC_ID.toString(), 1, Map.of()), List.of(new PartitionAssignment(0, 1, 1)))),
                List.of(), List.of()));
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        log = PartitionLog.open(PartitionLog.directory(partitions.dataDir(), TOPIC, TOPIC_ID.toString(), 0), tp, TOPIC_ID.toString(),
                1, 1, LogConfig.defaults(), System::currentTimeMillis, partitions.flush());
        partitions.put(tp, new Replica(log, new SerialExecutor(partitions.writers())));
    }

    @AfterEach
    void tearDown() {
        if (log != null) {
            log.abandon();
        }
    }

    @Test
    void aHighWatermarkThatMovesBetweenTheLookAndTheParkingStillWakesTheFetch() throws Exception {
        ProduceHandler produce = new ProduceHandler(partitions, view, new NoVerification(), new ClientQuotas(view, config));
        // The worst moment: the record lands (and its high watermark moves, waking whoever is parked)
        // after the fetch found nothing and before it parks.
        FetchWaiters waiters = new FetchWaiters(partitions) {
            @Override
            public void park(Iterable<TopicPartition> tps, Runnable wake) {
                try {
                    produceOne(produce).get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                super.park(tps, wake);
            }
        };
        FetchHandler fetch = new FetchHandler(partitions, view, waiters, config, new ClientQuotas(view, config));
        short v = 12;
        var req = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(20_000).setMinBytes(1).setMaxBytes(1 << 20).setSessionId(0)
                .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(TOPIC).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
        long start = System.nanoTime();
        var resp = (FetchResponseData) fetch.handle(new RequestContext(new RequestHeader(ApiKeys.FETCH, v, "t", 1), "PLAINTEXT", "/127.0.0.1"),
                FetchRequest.parse(LeaderRedirectionTest.encode(req, v), v)).toCompletableFuture().get(30, TimeUnit.SECONDS);

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("answered long before its 20 s max wait").isLessThan(5_000);
        assertThat(resp.responses().get(0).partitions().get(0).highWatermark()).isEqualTo(1);
    }

    /**
     * As Apache's fetchMessages: a fetch with nothing to wait for is answered at once, whatever its
     * max wait: min_bytes 0 (even with no data), or no partition asked for.
     */
    @Test
    void aFetchWithMinBytesZeroOrNoPartitionIsAnsweredAtOnce() throws Exception {
        FetchHandler fetch = new FetchHandler(partitions, view, new FetchWaiters(partitions), config, new ClientQuotas(view, config));
        short v = 12;
        var minBytesZero = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(20_000).setMinBytes(0).setMaxBytes(1 << 20)
                .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(TOPIC).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
        var noPartition = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(20_000).setMinBytes(1).setMaxBytes(1 << 20).setSessionEpoch(-1);

        for (FetchRequestData req : List.of(minBytesZero, noPartition)) {
            long start = System.nanoTime();
            var resp = (FetchResponseData) fetch.handle(new RequestContext(new RequestHeader(ApiKeys.FETCH, v, "t", 1), "PLAINTEXT", "/127.0.0.1"),
                    FetchRequest.parse(LeaderRedirectionTest.encode(req, v), v)).toCompletableFuture().get(30, TimeUnit.SECONDS);

            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("answered without waiting out 20 s").isLessThan(5_000);
            assertThat(resp.errorCode()).isZero();
        }
    }

    static java.util.concurrent.CompletableFuture<org.apache.kafka.common.protocol.ApiMessage> produceOne(ProduceHandler produce) {
        return produceOne(produce, new RequestContext(new RequestHeader(ApiKeys.PRODUCE, (short) 9, "t", 2), "PLAINTEXT", "/127.0.0.1"));
    }

    static java.util.concurrent.CompletableFuture<org.apache.kafka.common.protocol.ApiMessage> produceOne(ProduceHandler produce,
                                                                                                        RequestContext ctx) {
        short v = 9;
        var req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000).setTopicData(new ProduceRequestData.TopicProduceDataCollection(
                List.of(new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(List.of(
                        new ProduceRequestData.PartitionProduceData().setIndex(0)
                                .setRecords(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("v".getBytes()))))))
                        .iterator()));
        return produce.handle(ctx, ProduceRequest.parse(LeaderRedirectionTest.encode(req, v), v)).toCompletableFuture();
    }
}
