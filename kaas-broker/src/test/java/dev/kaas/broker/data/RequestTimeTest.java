package dev.kaas.broker.data;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.protocol.RequestTiming;
import dev.kaas.broker.protocol.RequestTrace;
import dev.kaas.broker.quota.ClientQuotas;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.ClientQuota;
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
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * request_percentage in the handlers that work off the event loop: a Produce charges the
 * partition writer's append to its request, a Fetch its reads, and a Fetch past the quota is
 * answered empty, as Apache answers it; a follower's Fetch is exempt. A traced Produce's trace
 * hears of the append and of the group commit that acknowledged it.
 */
class RequestTimeTest {
    static final String TOPIC = "t";
    static final Uuid TOPIC_ID = Uuid.randomUuid();

    @TempDir
    Path data;
    PartitionLog log;
    ProduceHandler produce;
    FetchHandler fetch;

    @BeforeEach
    void setUp() throws Exception {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        ClusterView view = new ClusterView(config);
        Partitions partitions = new Partitions(config);
        // A quota no request can stay within: 0.00001 % of a thread.
        view.applied(new Assignment(1, 1, "c", List.of(new BrokerInfo(1, List.of(new EndpointInfo("PLAINTEXT", "b1", 9091, "PLAINTEXT")))),
                List.of(new TopicAssignment(new TopicSpec(TOPIC, TOPIC_ID.toString(), 1, Map.of()), List.of(new PartitionAssignment(0, 1, 1)))),
                List.of(), List.of(), Map.of(), Map.of(),
                List.of(new ClientQuota(Map.of(ClientQuota.CLIENT_ID, "busy"), Map.of("request_percentage", 0.00001))), List.of()));
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        log = PartitionLog.open(PartitionLog.directory(partitions.dataDir(), TOPIC, TOPIC_ID.toString(), 0), tp, TOPIC_ID.toString(),
                1, 1, LogConfig.defaults(), System::currentTimeMillis, partitions.flush());
        partitions.put(tp, new Replica(log, new SerialExecutor(partitions.writers())));
        ClientQuotas quotas = new ClientQuotas(view, config);
        produce = new ProduceHandler(partitions, view, new NoVerification(), quotas);
        fetch = new FetchHandler(partitions, view, new FetchWaiters(partitions), config, quotas);
    }

    @AfterEach
    void tearDown() {
        if (log != null) {
            log.abandon();
        }
    }

    static RequestContext context(ApiKeys key, short v, String clientId) {
        return new RequestContext(new RequestHeader(key, v, clientId, 1), "PLAINTEXT", "/127.0.0.1", KafkaPrincipal.ANONYMOUS,
                SecurityProtocol.PLAINTEXT, new RequestContext.Throttle(0));
    }

    FetchResponseData fetch(RequestContext ctx, int replicaId) throws Exception {
        short v = 12;
        var req = new FetchRequestData().setReplicaId(replicaId).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setSessionId(0)
                .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(TOPIC).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
        return (FetchResponseData) fetch.handle(ctx, FetchRequest.parse(LeaderRedirectionTest.encode(req, v), v))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aProduceChargesTheAppendOnThePartitionsWriter() throws Exception {
        RequestContext ctx = context(ApiKeys.PRODUCE, (short) 9, "busy");
        var before = ctx.throttle().threadNanos();
        FetchWakeupTest.produceOne(produce, ctx).get(10, TimeUnit.SECONDS);
        assertThat(ctx.throttle().threadNanos()).as("the handler was not timed by a pipeline: this is the writer's append")
                .isGreaterThan(before);
    }

    @Test
    void aFetchPastTheRequestQuotaIsAnsweredEmptyAndAFollowersIsNot() throws Exception {
        FetchWakeupTest.produceOne(produce, context(ApiKeys.PRODUCE, (short) 9, "other")).get(10, TimeUnit.SECONDS);

        RequestContext free = context(ApiKeys.FETCH, (short) 12, "other");
        FetchResponseData answered = fetch(free, -1);
        assertThat(answered.responses()).hasSize(1);
        assertThat(free.throttle().threadNanos()).as("the reads on the storage thread").isPositive();
        assertThat(free.throttle().ms()).isZero();

        RequestContext busy = context(ApiKeys.FETCH, (short) 12, "busy");
        FetchResponseData throttled = fetch(busy, -1);
        assertThat(throttled.responses()).as("empty, as Apache's getThrottledResponse").isEmpty();
        assertThat(throttled.throttleTimeMs()).isPositive().isEqualTo(busy.throttle().ms());
        assertThat(busy.throttle().isRequestQuotaRecorded()).as("the connection does not record it again").isTrue();

        RequestContext follower = context(ApiKeys.FETCH, (short) 12, "busy");
        FetchResponseData exempt = fetch(follower, 1);
        assertThat(exempt.responses()).hasSize(1);
        assertThat(exempt.throttleTimeMs()).isZero();
    }

    record TracedSpan(String name, long start, long end, TopicPartition partition, String attribute, long value) {
    }

    @Test
    void aTracedProduceShowsItsAppendAndTheFsyncAndFenceCheckThatAcknowledgedIt() throws Exception {
        RequestContext ctx = context(ApiKeys.PRODUCE, (short) 9, "traced");
        List<TracedSpan> spans = new java.util.concurrent.CopyOnWriteArrayList<>();
        ctx.throttle().trace(new RequestTrace() {
            @Override
            public void span(String name, long start, long end, TopicPartition partition, String attribute, long value) {
                spans.add(new TracedSpan(name, start, end, partition, attribute, value));
            }

            @Override
            public void end(RequestTiming timing, AbstractRequest request, ApiMessage response) {
            }
        });
        long sent = System.nanoTime();
        FetchWakeupTest.produceOne(produce, ctx).get(10, TimeUnit.SECONDS);
        long answered = System.nanoTime();

        assertThat(spans).as("told before the answer, in the order they ran").extracting(TracedSpan::name)
                .containsExactly("append", "fsync", "fence check");
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        assertThat(spans).allSatisfy(s -> {
            assertThat(s.partition()).isEqualTo(tp);
            assertThat(s.start()).isBetween(sent, answered);
            assertThat(s.end()).isBetween(s.start(), answered);
        });
        TracedSpan append = spans.get(0);
        TracedSpan fsync = spans.get(1);
        TracedSpan fence = spans.get(2);
        assertThat(append.attribute()).isEqualTo("kaas.writer.wait_us");
        assertThat(fsync.start()).as("the group commit ran after the append").isGreaterThanOrEqualTo(append.end());
        assertThat(fsync.attribute()).isEqualTo("kaas.group_commit.appends");
        assertThat(fsync.value()).isEqualTo(1);
        assertThat(fence.start()).as("the fence is read once the fsync returned").isEqualTo(fsync.end());
    }
}

