package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.metrics.BrokerMetrics;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.quota.ClientQuotas;
import dev.kaas.broker.storage.FileSlice;
import dev.kaas.broker.storage.MessageFormats;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.common.model.TopicAssignment;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.resource.ResourceType;
import org.jboss.logging.Logger;

/**
 * Fetch for consumers. Stateless by contract (non-goals: KIP-227): every response carries
 * session ID 0, so clients send full fetch state each time; a request naming a session gets
 * FETCH_SESSION_ID_NOT_FOUND. Reads run on the storage pool. A fetch with fewer than
 * {@code min_bytes} available parks in {@link FetchWaiters} until a high watermark it reads
 * moves or {@code max_wait_ms} passes.
 *
 * <p>Size: a response holds at most {@link #responseBudget} record bytes, the request's
 * {@code max_bytes} capped by the broker's {@code fetch.max.bytes} as in Apache, except that the
 * first non-empty partition's first batch is returned whole (KIP-74) so a consumer always makes
 * progress. The cap also bounds the heap a v0-3 response is built in (down-conversion).
 */
@ApplicationScoped
public class FetchHandler implements ApiHandler {
    private static final Logger LOG = Logger.getLogger(FetchHandler.class);

    private final Partitions partitions;
    private final ClusterView view;
    private final FetchWaiters waiters;
    private final int fetchMaxBytes;
    private final ClientQuotas quotas;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(Partitions.named("kaas-fetch-timer"));

    private final BrokerMetrics metrics;

    public FetchHandler(Partitions partitions, ClusterView view, FetchWaiters waiters, BrokerConfig config, ClientQuotas quotas) {
        this(partitions, view, waiters, config, quotas, BrokerMetrics.detached());
    }

    @jakarta.inject.Inject
    public FetchHandler(Partitions partitions, ClusterView view, FetchWaiters waiters, BrokerConfig config, ClientQuotas quotas,
                        BrokerMetrics metrics) {
        this.metrics = metrics;
        this.partitions = partitions;
        this.view = view;
        this.waiters = waiters;
        this.fetchMaxBytes = config.broker().fetchMaxBytes();
        this.quotas = quotas;
    }

    /**
     * Record bytes one response may hold, as Apache's {@code KafkaApis.handleFetchRequest}:
     * {@code min(max_bytes, fetch.max.bytes)}. Before v3 a request has no {@code max_bytes}, so
     * the broker's limit alone applies.
     */
    static int responseBudget(short version, int requestMaxBytes, int fetchMaxBytes) {
        int requested = version >= 3 ? requestMaxBytes : Integer.MAX_VALUE;
        return Math.min(requested, fetchMaxBytes);
    }

    void onStop(@Observes ShutdownEvent ev) {
        timer.shutdownNow();
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.FETCH;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        FetchRequestData data = ((FetchRequest) request).data();
        if (data.sessionId() != 0) {
            return CompletableFuture.completedFuture(new FetchResponseData().setErrorCode(Errors.FETCH_SESSION_ID_NOT_FOUND.code()).setSessionId(0));
        }
        if (data.sessionEpoch() != 0 && data.sessionEpoch() != -1) {
            return CompletableFuture.completedFuture(new FetchResponseData().setErrorCode(Errors.INVALID_FETCH_SESSION_EPOCH.code()).setSessionId(0));
        }
        // Apache's follower fetch needs CLUSTER_ACTION; denied, every partition is TOPIC_AUTHORIZATION_FAILED.
        boolean follower = ((FetchRequest) request).replicaId() >= 0;
        Op op = new Op(data, ctx, follower, follower && !ctx.access().allowedOnCluster(AclOperation.CLUSTER_ACTION));
        op.start();
        return op.result;
    }

    /** One fetch, possibly attempted several times while it waits for data. */
    private final class Op implements Runnable {
        final FetchRequestData data;
        final short version;
        final String listenerName;
        final CompletableFuture<ApiMessage> result = new CompletableFuture<>();
        final AtomicBoolean busy = new AtomicBoolean();
        final List<TopicPartition> parked = new ArrayList<>();
        volatile boolean expired;
        ScheduledFuture<?> timeout;

        final RequestContext ctx;
        /** The response budget: the request's and the broker's, and what the client's consumer_byte_rate allows at once. */
        final int budget;
        /** The connection encrypts: records above {@link #TLS_INLINE_BYTES} are streamed from the file through TLS. */
        final boolean tls;

        /** A follower fetch: CLUSTER_ACTION covers every partition, as Apache's; without it every partition is refused. */
        final boolean follower;
        final boolean deniedFollower;

        Op(FetchRequestData data, RequestContext ctx, boolean follower, boolean deniedFollower) {
            this.follower = follower;
            this.deniedFollower = deniedFollower;
            this.data = data;
            this.ctx = ctx;
            this.version = ctx.apiVersion();
            this.listenerName = ctx.listenerName();
            double quotaWindow = quotas.fetch().maxValueInQuotaWindow(ctx.principal(), ctx.clientId());
            this.budget = (int) Math.min(responseBudget(version, data.maxBytes(), fetchMaxBytes), quotaWindow);
            this.tls = ctx.securityProtocol() == SecurityProtocol.SSL || ctx.securityProtocol() == SecurityProtocol.SASL_SSL;
        }

        void start() {
            partitions.storage().execute(() -> attempt(true));
        }

        /** Woken by a high-watermark change. */
        @Override
        public void run() {
            if (busy.compareAndSet(false, true)) {
                partitions.storage().execute(() -> {
                    busy.set(false);
                    attempt(false);
                });
            }
        }

        private synchronized void attempt(boolean first) {
            if (result.isDone()) {
                return;
            }
            Collected c;
            long started = System.nanoTime();
            try {
                c = collect(first);
            } catch (Exception e) {
                finish();
                result.completeExceptionally(e);
                return;
            } finally {
                ctx.throttle().addThreadNanos(System.nanoTime() - started);
            }
            // As Apache: min_bytes above the response budget could never be met. And as Apache's
            // fetchMessages, a fetch that asks for no partition, or for min_bytes <= 0, is answered at once.
            int minBytes = Math.min(data.minBytes(), budget);
            boolean enough = c.bytes >= minBytes || c.error || data.maxWaitMs() <= 0 || expired || asksForNothing();
            if (enough) {
                finish();
                FetchResponseData answer;
                try {
                    answer = throttled(c);
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                    return;
                }
                result.complete(answer);
                return;
            }
            if (first) {
                parked.addAll(c.partitions);
                waiters.park(parked, this);
                timeout = timer.schedule(() -> {
                    expired = true;
                    partitions.storage().execute(() -> attempt(false));
                }, data.maxWaitMs(), TimeUnit.MILLISECONDS);
                // A high watermark that moved after collect() read it and before park() registered
                // woke nobody: look once more now that a wake-up cannot be missed, or the fetch
                // would sit out its whole max wait with the bytes it waits for already there.
                partitions.storage().execute(() -> attempt(false));
            }
        }

        /** A response topic's name: v13+ names topics by id only. */
        private String topicName(FetchableTopicResponse t) {
            if (t.topic() != null && !t.topic().isEmpty()) {
                return t.topic();
            }
            TopicAssignment a = view.topicById(t.topicId().toString());
            return a == null ? null : a.topic().name();
        }

        private boolean asksForNothing() {
            return data.topics().stream().allMatch(t -> t.partitions().isEmpty());
        }

        /**
         * As Apache: the response's bytes count against consumer_byte_rate and the time spent on
         * the fetch against request_percentage (a follower's fetch is exempt from that one, a
         * cluster action); past either quota the client gets an empty response saying how long to
         * wait (the bytes it would have held are taken back), and the connection is not read meanwhile.
         */
        private FetchResponseData throttled(Collected c) {
            long now = System.currentTimeMillis();
            int bandwidth = quotas.fetch().recordAndGetThrottleTimeMs(ctx.principal(), ctx.clientId(), c.bytes, now);
            int requestTime = follower ? 0 : quotas.recordAndGetThrottleTimeMs(ctx.principal(), ctx.clientId(), ctx.throttle().threadNanos(), now);
            ctx.throttle().requestQuotaRecorded();
            int delay = Math.max(bandwidth, requestTime);
            if (delay <= 0) {
                // Apache counts conversions as the converted records are sent: only for the answer that goes out.
                for (var conversion : c.conversions()) {
                    metrics.fetchConverted(conversion.getKey(), conversion.getValue().numRecordsConverted());
                    ctx.throttle().addConversion(conversion.getValue().conversionTimeNanos(), conversion.getValue().temporaryMemoryBytes());
                }
                if (!follower) {
                    // Apache's BytesOutPerSec: the record bytes of a consumer's response, as it goes out.
                    for (FetchableTopicResponse t : c.response.responses()) {
                        for (PartitionData pd : t.partitions()) {
                            String name = pd.records() != null && pd.records().sizeInBytes() > 0 ? topicName(t) : null;
                            if (name != null) {
                                metrics.bytesOut(name, pd.records().sizeInBytes());
                            }
                        }
                    }
                }
                return c.response;
            }
            quotas.fetch().unrecord(ctx.principal(), ctx.clientId(), c.bytes, now);
            ctx.throttle().throttle(delay);
            return new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(0).setThrottleTimeMs(delay);
        }

        private void finish() {
            waiters.unpark(parked, this);
            if (timeout != null) {
                timeout.cancel(false);
            }
        }

        /** @param first the fetch's first attempt (a waiting fetch is collected again when woken) */
        private Collected collect(boolean first) throws Exception {
            FetchResponseData resp = new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(0).setThrottleTimeMs(0);
            boolean readCommitted = data.isolationLevel() == IsolationLevel.READ_COMMITTED.id();
            int total = 0;
            int inlined = 0;
            boolean error = false;
            List<TopicPartition> tps = new ArrayList<>();
            List<Map.Entry<String, org.apache.kafka.common.record.RecordValidationStats>> conversions = new ArrayList<>(0);
            List<Map.Entry<TopicPartition, PartitionData>> resolved = new ArrayList<>();
            for (FetchRequestData.FetchTopic ft : data.topics()) {
                boolean byId = version >= 13;
                TopicAssignment topic = byId ? view.topicById(ft.topicId().toString()) : view.topic(ft.topic());
                FetchableTopicResponse tr = new FetchableTopicResponse().setTopic(ft.topic()).setTopicId(ft.topicId());
                resp.responses().add(tr);
                // READ on the topic, once its id resolved (an unknown id is UNKNOWN_TOPIC_ID first) and before its
                // existence by name, as Apache's; asked on every attempt, as Apache asks on every fetch.
                String name = byId ? (topic == null ? null : topic.topic().name()) : ft.topic();
                boolean mayRead = follower ? !deniedFollower : name != null && ctx.allowed(AclOperation.READ, ResourceType.TOPIC, name);
                for (FetchRequestData.FetchPartition fp : ft.partitions()) {
                    PartitionData pd = new PartitionData().setPartitionIndex(fp.partition()).setHighWatermark(-1)
                            .setLastStableOffset(-1).setLogStartOffset(-1).setPreferredReadReplica(-1)
                            .setAbortedTransactions(readCommitted ? new ArrayList<>() : null)
                            .setRecords(MemoryRecords.EMPTY);
                    tr.partitions().add(pd);
                    if (!mayRead && (deniedFollower || name != null)) {
                        pd.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
                        error = true;
                        continue;
                    }
                    if (topic == null) {
                        pd.setErrorCode((byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
                        error = true;
                        continue;
                    }
                    TopicPartition tp = new TopicPartition(topic.topic().name(), fp.partition());
                    resolved.add(Map.entry(tp, pd));
                    if (first && fp.partition() >= 0 && fp.partition() < topic.partitions().size()) {
                        // Apache's TotalFetchRequestsPerSec: each partition of the topic asked for, once however long the fetch waits.
                        metrics.fetchRequest(tp.topic());
                    }
                    Replica replica = partitions.get(tp);
                    // A log that found its fence taken (a successor leads) serves nothing more.
                    if (replica == null || !replica.log().topicId().equals(topic.topic().topicId()) || replica.log().isFenced()) {
                        boolean known = fp.partition() >= 0 && fp.partition() < topic.partitions().size();
                        pd.setErrorCode((known ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
                        error = true;
                        continue;
                    }
                    PartitionLog log = replica.log();
                    Errors epochError = LeaderEpochs.check(fp.currentLeaderEpoch(), log.leaderEpoch());
                    long hw = log.highWatermark();
                    long lso = Math.min(log.lastStableOffset(), hw);
                    // READ_COMMITTED stops at the last stable offset, as Apache's fetchIsolation does.
                    long upTo = readCommitted ? lso : hw;
                    pd.setHighWatermark(hw).setLastStableOffset(lso).setLogStartOffset(log.logStartOffset());
                    if (epochError != Errors.NONE) {
                        pd.setErrorCode(epochError.code());
                        error = true;
                        continue;
                    }
                    if (fp.fetchOffset() < log.logStartOffset() || fp.fetchOffset() > log.logEndOffset()) {
                        pd.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
                        error = true;
                        continue;
                    }
                    tps.add(tp);
                    int limit = Math.min(fp.partitionMaxBytes(), Math.max(0, budget - total));
                    BaseRecords records;
                    try {
                        if (limit <= 0 && total > 0) {
                            records = MemoryRecords.EMPTY;
                        } else if (version >= 4) {
                            // Clients of v4+ read the stored v2 batches as they are: send them from the file
                            // (zero-copy, or through TLS a chunk at a time as the socket takes them).
                            records = log.readSlice(fp.fetchOffset(), limit, total == 0, upTo);
                            if (tls && records instanceof FileSlice slice && inlined + slice.size() <= TLS_INLINE_BYTES) {
                                // A small answer (a consumer at the head of the log) is read here, on the storage
                                // thread, rather than streamed: streaming costs a reader-thread round trip per chunk.
                                records = inHeap(slice);
                                inlined += slice.size();
                            }
                        } else {
                            byte magic = MessageFormats.magicForFetchVersion(version);
                            var converted = MessageFormats.downConvert(log.read(fp.fetchOffset(), limit, total == 0, upTo), magic,
                                    fp.fetchOffset());
                            if (converted.recordConversionStats().numRecordsConverted() > 0) {
                                // Counted only if this attempt's answer is the one sent (see throttled): a waiting fetch collects again.
                                conversions.add(Map.entry(tp.topic(), converted.recordConversionStats()));
                            }
                            records = converted.records();
                        }
                    } catch (Exception e) {
                        // As Apache: a partition whose read fails answers alone, the others are still served.
                        Errors failed = ErrorMapper.forRead(e, tp);
                        pd.setErrorCode(failed.code());
                        if (failed != Errors.KAFKA_STORAGE_ERROR && failed != Errors.NOT_LEADER_OR_FOLLOWER
                                && failed != Errors.OFFSET_OUT_OF_RANGE) {
                            // Apache's FailedFetchRequestsPerSec: an unexpected error, not a storage or leadership one.
                            metrics.fetchFailed(tp.topic());
                        }
                        error = true;
                        continue;
                    }
                    pd.setErrorCode(Errors.NONE.code()).setRecords(records);
                    if (readCommitted && records.sizeInBytes() > 0) {
                        for (PartitionLog.AbortedTransaction t : log.abortedTransactions(fp.fetchOffset(), upTo)) {
                            pd.abortedTransactions().add(new FetchResponseData.AbortedTransaction()
                                    .setProducerId(t.producerId()).setFirstOffset(t.firstOffset()));
                        }
                    }
                    total += records.sizeInBytes();
                }
            }
            if (version >= 16) {
                for (Map.Entry<TopicPartition, PartitionData> e : resolved) {
                    Errors err = Errors.forCode(e.getValue().errorCode());
                    if (err == Errors.NOT_LEADER_OR_FOLLOWER || err == Errors.FENCED_LEADER_EPOCH) {
                        redirect(resp, e.getValue(), e.getKey());
                    }
                }
            }
            return new Collected(resp, total, error, tps, conversions);
        }

        /**
         * KIP-951, as Apache 3.7 answers Fetch v16+: a partition refused with NOT_LEADER_OR_FOLLOWER or
         * FENCED_LEADER_EPOCH carries the leader and epoch of the applied assignment, and the response
         * the leader's endpoint on the request's listener.
         */
        private void redirect(FetchResponseData resp, PartitionData pd, TopicPartition tp) {
            ClusterView.CurrentLeader leader = view.currentLeader(tp, listenerName);
            pd.currentLeader().setLeaderId(leader.leaderId()).setLeaderEpoch(leader.leaderEpoch());
            leader.node().ifPresent(n -> {
                if (resp.nodeEndpoints().find(n.id()) == null) {
                    resp.nodeEndpoints().add(new FetchResponseData.NodeEndpoint().setNodeId(n.id()).setHost(n.host())
                            .setPort(n.port()).setRack(n.rack()));
                }
            });
        }
    }

    /**
     * Records of one TLS Fetch response read into the heap instead of streamed: at most this much,
     * so what a connection that never reads can hold stays small.
     */
    static final int TLS_INLINE_BYTES = 64 * 1024;

    /** A slice's bytes, read now (on the storage thread). */
    static MemoryRecords inHeap(FileSlice slice) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(slice.size());
        slice.readFully(buf, 0);
        return MemoryRecords.readableRecords(buf.flip());
    }

    /** @param conversions the records down-converted for this answer, by topic (old clients only) */
    private record Collected(FetchResponseData response, int bytes, boolean error, List<TopicPartition> partitions,
                             List<Map.Entry<String, org.apache.kafka.common.record.RecordValidationStats>> conversions) {
    }

}
