package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.metrics.BrokerMetrics;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.CloseConnection;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.protocol.RequestTrace;
import dev.kaas.broker.quota.ClientQuotas;
import dev.kaas.broker.storage.MessageFormats;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.VerificationGuards;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Produce: each partition's batches go to its serial writer (validate, assign offsets, write),
 * then, unless acks=0, the response waits for the group-commit fsync and fence check that make
 * them acknowledged. acks=0 gets no response, as in Apache.
 *
 * <p>Transactions (Apache 3.7, KIP-890 part 1): records that are transactional need the
 * request's transactional id, and a batch that would open the producer's transaction on a
 * partition is written only once the transaction coordinator confirmed the partition is part of
 * the transaction ({@link TxnVerifier}, {@link VerificationGuards}).
 */
@ApplicationScoped
public class ProduceHandler implements ApiHandler {

    private final Partitions partitions;
    private final ClusterView view;
    private final TxnVerifier verifier;
    private final ClientQuotas quotas;
    private final BrokerMetrics metrics;

    public ProduceHandler(Partitions partitions, ClusterView view, TxnVerifier verifier, ClientQuotas quotas) {
        this(partitions, view, verifier, quotas, BrokerMetrics.detached());
    }

    @jakarta.inject.Inject
    public ProduceHandler(Partitions partitions, ClusterView view, TxnVerifier verifier, ClientQuotas quotas, BrokerMetrics metrics) {
        this.partitions = partitions;
        this.view = view;
        this.verifier = verifier;
        this.quotas = quotas;
        this.metrics = metrics;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.PRODUCE;
    }

    /**
     * As Apache 3.7's {@code KafkaApis.handleProduceRequest}: partitions are collected into maps
     * keyed by topic-partition, so a partition named twice in one request is appended once, with
     * its last occurrence's records, and answered once. An outcome decided before appending (an
     * unknown or internal topic, invalid records) overrides the append's in the answer, as
     * Apache's {@code responseStatus ++ nonExisting ++ invalid} does. {@code __consumer_offsets}
     * and {@code __transaction_state} are refused with INVALID_TOPIC_EXCEPTION, as Apache's
     * {@code ReplicaManager} refuses client appends to internal topics: kaas keeps that state in
     * files (non-goals: internal topics).
     */
    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ProduceRequestData data = ((ProduceRequest) request).data();
        if (hasTransactionalRecords(data) && (data.transactionalId() == null
                || !ctx.allowed(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId()))) {
            // Apache's KafkaApis: transactional records need WRITE on their transactional id; the whole request is refused.
            return refuseAll((ProduceRequest) request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception());
        }
        short acks = data.acks();
        Set<TopicPartition> order = new LinkedHashSet<>();
        Map<TopicPartition, PartitionProduceResponse> nonExisting = new HashMap<>();
        Map<TopicPartition, PartitionProduceResponse> invalid = new HashMap<>();
        Map<TopicPartition, MemoryRecords> toAppend = new LinkedHashMap<>();
        for (ProduceRequestData.TopicProduceData t : data.topicData()) {
            // Before the topic's existence, as Apache's: a principal that may not write learns nothing about it.
            boolean mayWrite = ctx.allowed(AclOperation.WRITE, ResourceType.TOPIC, t.name());
            for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                TopicPartition tp = new TopicPartition(t.name(), p.index());
                order.add(tp);
                if (!mayWrite) {
                    nonExisting.put(tp, failed(tp, Errors.TOPIC_AUTHORIZATION_FAILED, null));
                    continue;
                }
                if (Topic.isInternal(t.name())) {
                    nonExisting.put(tp, failed(tp, Errors.INVALID_TOPIC_EXCEPTION, "Cannot append to internal topic " + t.name()));
                    continue;
                }
                if (partitions.get(tp) == null) {
                    var topic = view.topic(t.name());
                    boolean known = topic != null && p.index() >= 0 && p.index() < topic.partitions().size();
                    if (!known) {
                        nonExisting.put(tp, failed(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
                        continue;
                    }
                }
                if (!(p.records() instanceof MemoryRecords records)) {
                    invalid.put(tp, failed(tp, Errors.CORRUPT_MESSAGE, null));
                    continue;
                }
                PartitionProduceResponse bad = validateRecords(tp, ctx.apiVersion(), records);
                if (bad != null) {
                    invalid.put(tp, bad);
                    continue;
                }
                toAppend.put(tp, records);
            }
        }
        long[] producer = transactionalProducer(toAppend.values());
        if (producer == MANY_PRODUCERS) {
            // As Apache's ReplicaManager: one request's transactional records belong to one producer.
            return refuseAll((ProduceRequest) request,
                    Errors.INVALID_PRODUCER_ID_MAPPING.exception("Transactional records contained more than one producer ID"));
        }
        VerificationGuards.Ticket firstTry = producer != null && verifier.enabled() ? VerificationGuards.Ticket.UNVERIFIED
                : VerificationGuards.Ticket.DISABLED;
        Map<TopicPartition, PartitionProduceResponse> appended = new HashMap<>();
        Map<TopicPartition, Attempt> firstRound = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, MemoryRecords> e : toAppend.entrySet()) {
            TopicPartition tp = e.getKey();
            if (acks != 0 && acks != 1 && acks != -1) {
                appended.put(tp, failed(tp, Errors.INVALID_REQUIRED_ACKS, null));
                continue;
            }
            Replica replica = partitions.get(tp);
            if (replica == null) {
                // Apache counts a partition it does not lead too: TotalProduceRequests is marked before the leader check.
                metrics.produceRequest(tp.topic());
                appended.put(tp, failed(tp, Errors.NOT_LEADER_OR_FOLLOWER, null));
                continue;
            }
            PartitionProduceResponse pr = new PartitionProduceResponse().setIndex(tp.partition())
                    .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
            appended.put(tp, pr);
            firstRound.put(tp, append(replica, e.getValue(), acks, data.timeoutMs(), pr, firstTry, RecordBatch.NO_PRODUCER_ID, Errors.NONE,
                    ctx.throttle()));
        }
        // Verification starts once every first attempt ran on its writer, not once they are durable.
        CompletableFuture<Void> verified = CompletableFuture.allOf(firstRound.values().stream().map(Attempt::tried)
                        .toArray(CompletableFuture[]::new))
                .thenCompose(v -> verifyThenAppend(data, producer, firstRound, toAppend, appended, ctx.throttle()));
        CompletableFuture<Void> all = CompletableFuture.allOf(Stream.concat(firstRound.values().stream().map(Attempt::settled),
                Stream.of(verified)).toArray(CompletableFuture[]::new));
        return all.thenApply(v -> {
            ProduceResponseData resp = new ProduceResponseData().setThrottleTimeMs(0);
            boolean failed = false;
            for (TopicPartition tp : order) {
                PartitionProduceResponse pr = invalid.getOrDefault(tp, nonExisting.getOrDefault(tp, appended.get(tp)));
                failed |= pr.errorCode() != Errors.NONE.code();
                TopicProduceResponse tr = resp.responses().find(tp.topic());
                if (tr == null) {
                    tr = new TopicProduceResponse().setName(tp.topic());
                    resp.responses().add(tr);
                }
                tr.partitionResponses().add(pr);
                if (ctx.apiVersion() >= 10 && pr.errorCode() == Errors.NOT_LEADER_OR_FOLLOWER.code()) {
                    redirect(resp, pr, tp, ctx.listenerName());
                }
            }
            // As Apache: the request's size counts against producer_byte_rate once it is handled; past
            // the quota the answer says how long to wait, and the connection is not read meanwhile.
            int delay = quotas.produce().recordAndGetThrottleTimeMs(ctx.principal(), ctx.clientId(), ctx.throttle().requestBytes(),
                    System.currentTimeMillis());
            ctx.throttle().throttle(delay);
            resp.setThrottleTimeMs(delay);
            if (acks != 0) {
                return resp;
            }
            if (failed) {
                throw new CloseConnection("acks=0 produce failed");
            }
            return null;
        });
    }

    /**
     * KIP-951, as Apache 3.7 answers Produce v10+: a partition refused with NOT_LEADER_OR_FOLLOWER
     * carries the leader and epoch of the applied assignment, and the response the leader's
     * endpoint on the request's listener, so the producer can go there without a Metadata round trip.
     */
    private void redirect(ProduceResponseData resp, PartitionProduceResponse pr, TopicPartition tp, String listenerName) {
        ClusterView.CurrentLeader leader = view.currentLeader(tp, listenerName);
        pr.currentLeader().setLeaderId(leader.leaderId()).setLeaderEpoch(leader.leaderEpoch());
        leader.node().ifPresent(n -> {
            if (resp.nodeEndpoints().find(n.id()) == null) {
                resp.nodeEndpoints().add(new ProduceResponseData.NodeEndpoint().setNodeId(n.id()).setHost(n.host())
                        .setPort(n.port()).setRack(n.rack()));
            }
        });
    }

    private static PartitionProduceResponse failed(TopicPartition tp, Errors error, String message) {
        return new PartitionProduceResponse().setIndex(tp.partition()).setErrorCode(error.code()).setErrorMessage(message)
                .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
    }

    /** Apache's rule for Produce v3+: exactly one batch per partition, and it is magic v2. */
    /**
     * Apache's request-level rule ({@code ProduceRequest.validateRecords}): v3+ carries exactly one
     * magic v2 batch, ZSTD only from v7. Reads batch headers only; the records are validated on
     * the partition's writer. A codec id no Kafka defines is refused here rather than failing the request.
     */
    private static PartitionProduceResponse validateRecords(TopicPartition tp, short version, MemoryRecords records) {
        try {
            ProduceRequest.validateRecords(version, records);
            return null;
        } catch (ApiException e) {
            return failed(tp, Errors.forException(e), e.getMessage());
        } catch (IllegalArgumentException e) {
            return failed(tp, Errors.INVALID_RECORD, "Record batch has an unknown compression type: " + e.getMessage());
        }
    }

    private static final long[] MANY_PRODUCERS = new long[0];

    /** Every partition gets {@code error}; with acks=0, which has no response, the connection is closed instead. */
    private static CompletionStage<ApiMessage> refuseAll(ProduceRequest request, Exception error) {
        if (request.acks() == 0) {
            return CompletableFuture.failedFuture(new CloseConnection("acks=0 produce refused: " + error.getMessage()));
        }
        return CompletableFuture.completedFuture(request.getErrorResponse(0, error).data());
    }

    /**
     * The producer id and epoch of the transactional batches about to be appended: null when
     * there are none, {@link #MANY_PRODUCERS} when they are not all one producer's.
     */
    private static long[] transactionalProducer(Iterable<MemoryRecords> all) {
        long[] found = null;
        for (MemoryRecords records : all) {
            for (RecordBatch batch : records.batches()) {
                if (!batch.isTransactional() || !batch.hasProducerId()) {
                    continue;
                }
                if (found == null) {
                    found = new long[] {batch.producerId(), batch.producerEpoch()};
                } else if (found[0] != batch.producerId() || found[1] != batch.producerEpoch()) {
                    return MANY_PRODUCERS;
                }
            }
        }
        return found;
    }

    private static boolean hasTransactionalRecords(ProduceRequestData data) {
        for (ProduceRequestData.TopicProduceData t : data.topicData()) {
            for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                if (p.records() instanceof MemoryRecords records) {
                    try {
                        for (RecordBatch batch : records.batches()) {
                            if (batch.isTransactional()) {
                                return true;
                            }
                        }
                    } catch (RuntimeException malformed) {
                        // Refused per partition as corrupt later; nothing here to decide.
                    }
                }
            }
        }
        return false;
    }

    /**
     * One append on a partition's writer: {@code tried} completes once the writer ran it, with
     * the ticket to verify with when it must wait for the coordinator (else null);
     * {@code settled} once the partition's answer is filled in (at once for a waiting one).
     */
    private record Attempt(Replica replica, CompletableFuture<VerificationGuards.Ticket> tried, CompletableFuture<Void> settled) {
    }

    /**
     * The second round of a transactional produce: the partitions whose first append must wait
     * for a verification. Those whose ticket asks are verified together with the coordinator;
     * each then waits for its turn behind the producer's earlier requests on that partition and
     * is appended with its ticket, or refused with the answer, mapped as Apache maps it
     * ({@link TxnVerifier#forAppend}).
     */
    private CompletableFuture<Void> verifyThenAppend(ProduceRequestData data, long[] producer, Map<TopicPartition, Attempt> firstRound,
                                                     Map<TopicPartition, MemoryRecords> toAppend,
                                                     Map<TopicPartition, PartitionProduceResponse> appended,
                                                     RequestContext.Throttle usage) {
        Map<TopicPartition, VerificationGuards.Ticket> waiting = new LinkedHashMap<>();
        firstRound.forEach((tp, attempt) -> {
            VerificationGuards.Ticket ticket = attempt.tried().join();
            if (ticket != null) {
                waiting.put(tp, ticket);
            }
        });
        if (waiting.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        Set<TopicPartition> asking = new LinkedHashSet<>();
        waiting.forEach((tp, ticket) -> {
            if (ticket.asks()) {
                asking.add(tp);
            }
        });
        if (!asking.isEmpty()) {
            CompletableFuture<Map<TopicPartition, Errors>> answer;
            RequestTrace trace = usage.trace();
            long asked = trace == null ? 0 : System.nanoTime();
            try {
                answer = verifier.verify(data.transactionalId(), producer[0], (short) producer[1], asking);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            // Every asking ticket gets an outcome, whatever happens: the requests behind it wait on it. The span is
            // recorded first, in the same callback: an outcome starts the append, which must not be traced before it.
            answer.whenComplete((errors, failure) -> {
                if (trace != null) {
                    trace.span("txn verification", asked, System.nanoTime(), null, "kaas.partitions", asking.size());
                }
                asking.forEach(tp -> waiting.get(tp).outcome().complete(
                        errors == null ? Errors.UNKNOWN_SERVER_ERROR : errors.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR)));
            });
        }
        List<CompletableFuture<?>> second = new ArrayList<>();
        waiting.forEach((tp, ticket) -> second.add(ticket.previous().thenCombine(ticket.outcome(), (v, outcome) -> outcome)
                .thenCompose(outcome -> {
                    PartitionProduceResponse pr = appended.get(tp);
                    // The ticket belongs to the log it was taken on; if the partition reopened meanwhile, that log is gone.
                    Replica replica = firstRound.get(tp).replica();
                    if (partitions.get(tp) != replica) {
                        pr.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
                        outcome = Errors.NOT_LEADER_OR_FOLLOWER;
                    } else if (outcome != Errors.NONE) {
                        Errors refused = TxnVerifier.forAppend(outcome);
                        pr.setErrorCode(refused.code()).setErrorMessage(refused == Errors.INVALID_TXN_STATE
                                ? "Partition was not added to the transaction"
                                : "Unable to verify the partition has been added to the transaction. Underlying error: " + outcome);
                    }
                    return append(replica, toAppend.get(tp), data.acks(), data.timeoutMs(), pr, ticket, producer[0], outcome, usage).settled();
                })
                // The writer lets the next request go right after this one's append; this only covers a failure on the way there.
                .whenComplete((r, e) -> ticket.release())));
        return CompletableFuture.allOf(second.toArray(CompletableFuture[]::new));
    }

    /**
     * Appends on the partition's writer and fills {@code pr}. With a ticket from the first round,
     * the writer finishes it right after the append, or without appending when {@code refused} is
     * not NONE ({@code pr} already says why).
     */
    private Attempt append(Replica replica, MemoryRecords records, short acks, int timeoutMs, PartitionProduceResponse pr,
                           VerificationGuards.Ticket verified, long producerId, Errors refused, RequestContext.Throttle usage) {
        boolean holdsTicket = verified != VerificationGuards.Ticket.DISABLED && verified != VerificationGuards.Ticket.UNVERIFIED;
        if (holdsTicket && refused != Errors.NONE) {
            try {
                replica.writer().execute(() -> replica.log().verificationDone(producerId, verified));
            } catch (RuntimeException writerGone) {
                verified.release();
            }
            return new Attempt(replica, CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(null));
        }
        CompletableFuture<PartitionLog.AppendResult> appended = new CompletableFuture<>();
        CompletableFuture<Void> durable = new CompletableFuture<>();
        String topic = replica.log().topicPartition().topic();
        RequestTrace trace = usage.trace();
        long queued = trace == null ? 0 : System.nanoTime();
        Runnable task = () -> {
            long started = System.nanoTime();
            boolean counted = false;
            try {
                org.apache.kafka.common.record.ConvertedRecords<MemoryRecords> converted =
                        MessageFormats.hasLegacyBatches(records) ? MessageFormats.upConvert(records) : null;
                MemoryRecords v2 = converted == null ? records : converted.records();
                PartitionLog.AppendResult r;
                try {
                    r = replica.log().append(v2, verified);
                } finally {
                    if (holdsTicket) {
                        replica.log().verificationDone(producerId, verified);
                    }
                    // Apache's request-time counts the local append, not the wait for the fsync.
                    usage.addThreadNanos(System.nanoTime() - started);
                }
                // Counted once the append was tried: not for a first try that only found the partition needs verifying.
                counted = true;
                if (trace != null) {
                    trace.span("append", started, System.nanoTime(), replica.log().topicPartition(), "kaas.writer.wait_us",
                            (started - queued) / 1000);
                }
                if (converted != null) {
                    // As Apache: an append's conversion stats count once it succeeded.
                    var stats = converted.recordConversionStats();
                    usage.addConversion(stats.conversionTimeNanos(), stats.temporaryMemoryBytes());
                    metrics.produceConverted(topic, stats.numRecordsConverted());
                }
                metrics.produceRequest(topic);
                metrics.appended(topic, records.sizeInBytes(), r.lastOffset() - r.baseOffset() + 1);
                // Registered here, in the writer's task: a close queued behind this append settles it.
                CompletableFuture<Void> ack = acks == 0 ? CompletableFuture.completedFuture(null)
                        : replica.log().awaitDurable(r.lastOffset() + 1, replica.writer(), trace == null ? null : roundSpans(trace,
                                replica.log().topicPartition()));
                appended.complete(r);
                ack.whenComplete((v, e) -> {
                    if (e == null) {
                        durable.complete(null);
                    } else {
                        durable.completeExceptionally(e);
                    }
                });
            } catch (Throwable e) {
                if (!counted && !(e instanceof VerificationGuards.Required)) {
                    metrics.produceRequest(topic);
                }
                appended.completeExceptionally(e);
                durable.completeExceptionally(e);
            }
        };
        try {
            replica.writer().execute(task);
        } catch (RuntimeException writerGone) {
            metrics.produceRequest(topic);
            if (holdsTicket) {
                verified.release();
            }
            appended.completeExceptionally(new org.apache.kafka.common.errors.NotLeaderOrFollowerException(
                    "partition writer stopped: " + writerGone.getMessage()));
        }
        CompletableFuture<VerificationGuards.Ticket> tried = appended.handle((r, e) -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            return !holdsTicket && cause instanceof VerificationGuards.Required required ? required.ticket() : null;
        });
        // timeout_ms bounds the wait for durability once appended, as Apache's bounds the wait for replication.
        CompletableFuture<Void> settled = appended.thenCompose(r -> durable.orTimeout(Math.max(1, timeoutMs), TimeUnit.MILLISECONDS)
                .thenRun(() -> pr.setErrorCode(Errors.NONE.code()).setBaseOffset(r.baseOffset())
                        .setLogAppendTimeMs(r.logAppendTime()).setLogStartOffset(r.logStartOffset())))
                .exceptionally(e -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof VerificationGuards.Required required) {
                if (!holdsTicket) {
                    // Answered in the second round.
                    return null;
                }
                // Cannot happen: an append with a ticket never asks for another. Refuse rather than wait forever.
                required.ticket().release();
                cause = new org.apache.kafka.common.errors.InvalidTxnStateException("verification did not settle");
            }
            if (cause instanceof TimeoutException) {
                // As Apache when acks=all outlives timeout_ms: the records may still become durable.
                cause = new org.apache.kafka.common.errors.TimeoutException("fsync did not complete within " + timeoutMs + " ms");
            }
            Errors error = ErrorMapper.forAppend(cause, replica.log().topicPartition());
            if (countsAsFailed(error)) {
                metrics.produceFailed(topic);
            }
            pr.setErrorCode(error.code()).setErrorMessage(cause.getMessage()).setBaseOffset(-1);
            return null;
        });
        return new Attempt(replica, tried, settled);
    }

    /** The group commit that acknowledged a traced append, as its fsync and fence check spans. */
    private static PartitionLog.RoundTimes roundSpans(RequestTrace trace, TopicPartition tp) {
        return (fsyncStart, fsyncEnd, fenceEnd, appends) -> {
            trace.span("fsync", fsyncStart, fsyncEnd, tp, "kaas.group_commit.appends", appends);
            trace.span("fence check", fsyncEnd, fenceEnd, tp);
        };
    }

    /**
     * Apache's FailedProduceRequestsPerSec ({@code ReplicaManager.appendToLocalLog}): records that
     * failed validation, or an unexpected error; not a refusal for leadership, size, corruption,
     * storage or a wait that timed out.
     */
    static boolean countsAsFailed(Errors error) {
        return switch (error) {
            case NONE, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, RECORD_LIST_TOO_LARGE, MESSAGE_TOO_LARGE, CORRUPT_MESSAGE,
                 KAFKA_STORAGE_ERROR, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND -> false;
            default -> true;
        };
    }
}
