package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.PartitionLog;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * OffsetForLeaderEpoch, as Apache 3.7's {@code ReplicaManager.lastOffsetForLeaderEpoch}: the
 * consumer's truncation check after a leader change (KIP-320). The answer comes from the epoch
 * history the partition's segment names spell ({@link PartitionLog#epochHistory}), looked up as
 * Apache's leader-epoch cache does ({@link PartitionLog#endOffsetForEpoch}).
 *
 * <p>Apache serves a follower's request ({@code replica_id >= 0}) the same way as a consumer's,
 * from the leader only; kaas has no followers, so {@code replica_id} changes nothing here either.
 * A partition this broker does not lead is NOT_LEADER_OR_FOLLOWER when the topic and partition
 * exist, UNKNOWN_TOPIC_OR_PARTITION otherwise; {@code current_leader_epoch} (v2+) is checked first,
 * as Apache does for a partition it hosts. A log a successor has already fenced answers
 * NOT_LEADER_OR_FOLLOWER: its history lacks the successor's epoch, so its end offsets could be
 * past where its epoch really ended.
 *
 * <p>Threading: reads only in-memory state (the segment map and volatile offsets), so it runs on
 * the event loop.
 */
@ApplicationScoped
public class OffsetForLeaderEpochHandler implements ApiHandler {
    private final Partitions partitions;
    private final ClusterView view;

    public OffsetForLeaderEpochHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.OFFSET_FOR_LEADER_EPOCH;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        OffsetForLeaderEpochRequestData data = ((OffsetsForLeaderEpochRequest) request).data();
        OffsetForLeaderEpochResponseData resp = new OffsetForLeaderEpochResponseData().setThrottleTimeMs(0);
        // Apache's: CLUSTER_ACTION on the cluster covers every topic, else DESCRIBE on each, before its existence.
        boolean replica = ctx.access().allowedOnCluster(AclOperation.CLUSTER_ACTION);
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t : data.topics()) {
            OffsetForLeaderTopicResult tr = new OffsetForLeaderTopicResult().setTopic(t.topic());
            resp.topics().add(tr);
            boolean described = replica || ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic());
            for (OffsetForLeaderPartition p : t.partitions()) {
                if (!described) {
                    tr.partitions().add(new EpochEndOffset().setPartition(p.partition()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    continue;
                }
                tr.partitions().add(lookup(new TopicPartition(t.topic(), p.partition()), p));
            }
        }
        return CompletableFuture.completedFuture(resp);
    }

    private EpochEndOffset lookup(TopicPartition tp, OffsetForLeaderPartition p) {
        // Defaults are Apache's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET (-1, -1).
        EpochEndOffset out = new EpochEndOffset().setPartition(tp.partition());
        Replica replica = partitions.get(tp);
        if (replica == null) {
            var topic = view.topic(tp.topic());
            boolean known = topic != null && tp.partition() >= 0 && tp.partition() < topic.partitions().size();
            return out.setErrorCode((known ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
        }
        PartitionLog log = replica.log();
        Errors epochError = LeaderEpochs.check(p.currentLeaderEpoch(), log.leaderEpoch());
        if (epochError != Errors.NONE) {
            return out.setErrorCode(epochError.code());
        }
        if (log.isFenced()) {
            return out.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
        }
        Optional<PartitionLog.EpochEnd> end = log.endOffsetForEpoch(p.leaderEpoch());
        out.setErrorCode(Errors.NONE.code());
        // LeaderEpoch is ignorable before v1: v0 carries the end offset alone.
        end.ifPresent(e -> out.setLeaderEpoch(e.epoch()).setEndOffset(e.endOffset()));
        return out;
    }
}
