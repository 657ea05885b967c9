package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.CloseConnection;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.MessageFormats;
import dev.kaas.broker.storage.PartitionLog;
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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * Produce: each partition's batches go to its serial writer (validate, assign offsets, write),
 * then, unless acks=0, the response waits for the group-commit fsync and fence check that make
 * them acknowledged. acks=0 gets no response, as in Apache.
 */
@ApplicationScoped
public class ProduceHandler implements ApiHandler {

    private final Partitions partitions;
    private final ClusterView view;

    public ProduceHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
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
        short acks = data.acks();
        Set<TopicPartition> order = new LinkedHashSet<>();
        Map<TopicPartition, PartitionProduceResponse> nonExisting = new HashMap<>();
        Map<TopicPartition, PartitionProduceResponse> invalid = new HashMap<>();
        Map<TopicPartition, MemoryRecords> toAppend = new LinkedHashMap<>();
        for (ProduceRequestData.TopicProduceData t : data.topicData()) {
            for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                TopicPartition tp = new TopicPartition(t.name(), p.index());
                order.add(tp);
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
        Map<TopicPartition, PartitionProduceResponse> appended = new HashMap<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (Map.Entry<TopicPartition, MemoryRecords> e : toAppend.entrySet()) {
            TopicPartition tp = e.getKey();
            if (acks != 0 && acks != 1 && acks != -1) {
                appended.put(tp, failed(tp, Errors.INVALID_REQUIRED_ACKS, null));
                continue;
            }
            Replica replica = partitions.get(tp);
            if (replica == null) {
                appended.put(tp, failed(tp, Errors.NOT_LEADER_OR_FOLLOWER, null));
                continue;
            }
            PartitionProduceResponse pr = new PartitionProduceResponse().setIndex(tp.partition())
                    .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
            appended.put(tp, pr);
            pending.add(append(replica, e.getValue(), acks, data.timeoutMs(), pr));
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
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

    private CompletableFuture<Void> append(Replica replica, MemoryRecords records, short acks, int timeoutMs, PartitionProduceResponse pr) {
        CompletableFuture<PartitionLog.AppendResult> appended = new CompletableFuture<>();
        CompletableFuture<Void> durable = new CompletableFuture<>();
        replica.writer().execute(() -> {
            try {
                MemoryRecords v2 = MessageFormats.hasLegacyBatches(records) ? MessageFormats.upConvert(records) : records;
                PartitionLog.AppendResult r = replica.log().append(v2);
                // Registered here, in the writer's task: a close queued behind this append settles it.
                CompletableFuture<Void> ack = acks == 0 ? CompletableFuture.completedFuture(null)
                        : replica.log().awaitDurable(r.lastOffset() + 1, replica.writer());
                appended.complete(r);
                ack.whenComplete((v, e) -> {
                    if (e == null) {
                        durable.complete(null);
                    } else {
                        durable.completeExceptionally(e);
                    }
                });
            } catch (Throwable e) {
                appended.completeExceptionally(e);
                durable.completeExceptionally(e);
            }
        });
        // timeout_ms bounds the wait for durability once appended, as Apache's bounds the wait for replication.
        return appended.thenCompose(r -> durable.orTimeout(Math.max(1, timeoutMs), TimeUnit.MILLISECONDS).thenRun(() ->
                pr.setErrorCode(Errors.NONE.code()).setBaseOffset(r.baseOffset())
                        .setLogAppendTimeMs(r.logAppendTime()).setLogStartOffset(r.logStartOffset()))
        ).exceptionally(e -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof TimeoutException) {
                // As Apache when acks=all outlives timeout_ms: the records may still become durable.
                cause = new org.apache.kafka.common.errors.TimeoutException("fsync did not complete within " + timeoutMs + " ms");
            }
            Errors error = ErrorMapper.forAppend(cause, replica.log().topicPartition());
            pr.setErrorCode(error.code()).setErrorMessage(cause.getMessage()).setBaseOffset(-1);
            return null;
        });
    }
}
