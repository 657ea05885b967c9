package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DeleteRecords (key 21), as Apache 3.7's {@code ReplicaManager.deleteRecords} on the leader:
 * the log start offset moves up to the requested offset ({@code -1}: the high watermark),
 * durably and while this broker still owns the partition, and the answer's low watermark is the
 * new log start offset (there are no followers to wait for). Above the high watermark is
 * OFFSET_OUT_OF_RANGE; a topic whose {@code cleanup.policy} lacks {@code delete} is
 * POLICY_VIOLATION. The segments wholly below it are retired at once, through retention.
 */
@ApplicationScoped
public class DeleteRecordsHandler implements ApiHandler {
    private final Partitions partitions;
    private final ClusterView view;

    public DeleteRecordsHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DELETE_RECORDS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DeleteRecordsRequestData data = ((DeleteRecordsRequest) request).data();
        DeleteRecordsResponseData resp = new DeleteRecordsResponseData().setThrottleTimeMs(0);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (DeleteRecordsRequestData.DeleteRecordsTopic t : data.topics()) {
            DeleteRecordsTopicResult tr = resp.topics().find(t.name());
            if (tr == null) {
                tr = new DeleteRecordsTopicResult().setName(t.name());
                resp.topics().add(tr);
            }
            // DELETE on the topic, before its existence, as Apache's.
            boolean mayDelete = ctx.allowed(AclOperation.DELETE, ResourceType.TOPIC, t.name());
            for (DeleteRecordsRequestData.DeleteRecordsPartition p : t.partitions()) {
                DeleteRecordsPartitionResult pr = new DeleteRecordsPartitionResult().setPartitionIndex(p.partitionIndex())
                        .setLowWatermark(DeleteRecordsResponse.INVALID_LOW_WATERMARK);
                tr.partitions().add(pr);
                if (!mayDelete) {
                    pr.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
                    continue;
                }
                pending.add(delete(new TopicPartition(t.name(), p.partitionIndex()), p.offset(), pr));
            }
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(v -> resp);
    }

    private CompletableFuture<Void> delete(TopicPartition tp, long offset, DeleteRecordsPartitionResult pr) {
        if (!view.exists(tp)) {
            pr.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            return CompletableFuture.completedFuture(null);
        }
        Replica replica = partitions.get(tp);
        if (replica == null || replica.log().isFenced()) {
            pr.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
            return CompletableFuture.completedFuture(null);
        }
        if (!replica.log().config().deletePolicy()) {
            // Apache's message: "Records of partition … can not be deleted due to the configured policy".
            pr.setErrorCode(Errors.POLICY_VIOLATION.code());
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            replica.writer().execute(() -> {
                try {
                    long low = replica.log().deleteRecordsBefore(offset);
                    pr.setErrorCode(Errors.NONE.code()).setLowWatermark(low);
                } catch (Exception e) {
                    pr.setErrorCode(ErrorMapper.forAppend(e, tp).code());
                }
                done.complete(null);
            });
        } catch (RuntimeException writerGone) {
            pr.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
            return CompletableFuture.completedFuture(null);
        }
        return done.thenRun(() -> {
            if (pr.errorCode() == Errors.NONE.code()) {
                partitions.enforceRetention(replica);
            }
        });
    }
}
