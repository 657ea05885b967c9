package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.CloseConnection;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.MessageFormats;
import dev.kaas.broker.storage.PartitionLog;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
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
import org.jboss.logging.Logger;

/**
 * Produce: each partition's batches go to its serial writer (validate, assign offsets, write),
 * then, unless acks=0, the response waits for the group-commit fsync and fence check that make
 * them acknowledged. acks=0 gets no response, as in Apache.
 */
@ApplicationScoped
public class ProduceHandler implements ApiHandler {
    private static final Logger LOG = Logger.getLogger(ProduceHandler.class);

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

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ProduceRequestData data = ((ProduceRequest) request).data();
        short acks = data.acks();
        ProduceResponseData resp = new ProduceResponseData().setThrottleTimeMs(0);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (ProduceRequestData.TopicProduceData t : data.topicData()) {
            TopicProduceResponse tr = new TopicProduceResponse().setName(t.name());
            resp.responses().add(tr);
            for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                PartitionProduceResponse pr = new PartitionProduceResponse().setIndex(p.index())
                        .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
                tr.partitionResponses().add(pr);
                if (acks != 0 && acks != 1 && acks != -1) {
                    pr.setErrorCode(Errors.INVALID_REQUIRED_ACKS.code());
                    continue;
                }
                TopicPartition tp = new TopicPartition(t.name(), p.index());
                Replica replica = partitions.get(tp);
                if (replica == null) {
                    var topic = view.topic(t.name());
                    boolean known = topic != null && p.index() >= 0 && p.index() < topic.partitions().size();
                    pr.setErrorCode((known ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
                    continue;
                }
                if (!(p.records() instanceof MemoryRecords records)) {
                    pr.setErrorCode(Errors.CORRUPT_MESSAGE.code());
                    continue;
                }
                String invalid = ctx.apiVersion() >= 3 ? singleV2Batch(records) : null;
                if (invalid != null) {
                    pr.setErrorCode(Errors.INVALID_RECORD.code()).setErrorMessage(invalid);
                    continue;
                }
                pending.add(append(replica, records, acks, data.timeoutMs(), pr));
            }
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
        return all.thenApply(v -> {
            if (acks != 0) {
                return resp;
            }
            boolean failed = resp.responses().stream().flatMap(t -> t.partitionResponses().stream()).anyMatch(p -> p.errorCode() != 0);
            if (failed) {
                throw new CloseConnection("acks=0 produce failed");
            }
            return null;
        });
    }

    /** Apache's rule for Produce v3+: exactly one batch per partition, and it is magic v2. */
    private static String singleV2Batch(MemoryRecords records) {
        int count = 0;
        for (var batch : records.batches()) {
            count++;
            if (batch.magic() != org.apache.kafka.common.record.RecordBatch.MAGIC_VALUE_V2) {
                return "Produce requests with version 3 and above are only allowed to contain record batches with magic version 2";
            }
        }
        return count == 1 ? null : "Produce requests with version 3 and above are only allowed to contain exactly one record batch";
    }

    private CompletableFuture<Void> append(Replica replica, MemoryRecords records, short acks, int timeoutMs, PartitionProduceResponse pr) {
        CompletableFuture<PartitionLog.AppendResult> appended = new CompletableFuture<>();
        replica.writer().execute(() -> {
            try {
                MemoryRecords v2 = MessageFormats.hasLegacyBatches(records) ? MessageFormats.upConvert(records) : records;
                appended.complete(replica.log().append(v2));
            } catch (Throwable e) {
                appended.completeExceptionally(e);
            }
        });
        return appended.thenCompose(r -> {
            CompletableFuture<Void> durable = acks == 0 ? CompletableFuture.completedFuture(null)
                    : replica.log().awaitDurable(r.lastOffset() + 1).orTimeout(Math.max(1, timeoutMs), TimeUnit.MILLISECONDS);
            return durable.thenRun(() -> pr.setErrorCode(Errors.NONE.code()).setBaseOffset(r.baseOffset())
                    .setLogAppendTimeMs(r.logAppendTime()).setLogStartOffset(r.logStartOffset()));
        }).exceptionally(e -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof TimeoutException) {
                // As Apache when acks=all outlives timeout_ms: the records may still become durable.
                cause = new org.apache.kafka.common.errors.TimeoutException("fsync did not complete within " + timeoutMs + " ms");
            }
            Errors error = dev.kaas.broker.protocol.ErrorMapper.forAppend(cause, replica.log().topicPartition());
            pr.setErrorCode(error.code()).setErrorMessage(cause.getMessage()).setBaseOffset(-1);
            return null;
        });
    }
}
