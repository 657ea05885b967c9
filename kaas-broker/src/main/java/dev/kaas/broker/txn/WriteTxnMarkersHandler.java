package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.group.GroupCoordinator;
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
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;

/**
 * WriteTxnMarkers v0–v1. kaas coordinators never send it (markers between kaas brokers go through
 * the volume), but {@code Admin.abortTransaction} / {@code kafka-transactions.sh abort} send it to
 * a partition's leader to close a hanging transaction, so it is served as Apache serves it: each
 * marker is appended to the partitions this broker leads and answered once durable;
 * {@code __consumer_offsets-N} commits or drops the producer's pending offsets in group slot N.
 * A partition this broker does not lead gets NOT_LEADER_OR_FOLLOWER (UNKNOWN_TOPIC_OR_PARTITION
 * when it does not exist).
 */
@ApplicationScoped
public class WriteTxnMarkersHandler implements ApiHandler {
    private final Partitions partitions;
    private final GroupCoordinator groups;
    private final ClusterView view;

    public WriteTxnMarkersHandler(Partitions partitions, GroupCoordinator groups, ClusterView view) {
        this.partitions = partitions;
        this.groups = groups;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.WRITE_TXN_MARKERS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.CLUSTER_ACTION);
        WriteTxnMarkersRequestData d = ((WriteTxnMarkersRequest) request).data();
        WriteTxnMarkersResponseData resp = new WriteTxnMarkersResponseData();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (var m : d.markers()) {
            var mr = new WriteTxnMarkersResponseData.WritableTxnMarkerResult().setProducerId(m.producerId());
            resp.markers().add(mr);
            for (var t : m.topics()) {
                var tr = new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult().setName(t.name());
                mr.topics().add(tr);
                for (int p : t.partitionIndexes()) {
                    var pr = new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult().setPartitionIndex(p);
                    tr.partitions().add(pr);
                    TopicPartition tp = new TopicPartition(t.name(), p);
                    pending.add(write(tp, m).handle((v, e) -> {
                        pr.setErrorCode((e == null ? Errors.NONE : ErrorMapper.forAppend(e, tp)).code());
                        return null;
                    }));
                }
            }
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(v -> resp);
    }

    private CompletableFuture<Void> write(TopicPartition tp, WriteTxnMarkersRequestData.WritableTxnMarker m) {
        if (tp.topic().equals(TxnStateMachine.GROUP_OFFSETS)) {
            return groups.callSlot(tp.partition(), shard -> {
                shard.completeTxn(m.producerId(), m.producerEpoch(), m.coordinatorEpoch(), m.transactionResult());
                return (Void) null;
            }).exceptionallyCompose(e -> CompletableFuture.failedFuture(ErrorMapper.unwrap(e) instanceof NotCoordinatorException
                    // As Apache's new group coordinator maps it: the slot is elsewhere, the caller looks again.
                    ? new org.apache.kafka.common.errors.NotLeaderOrFollowerException("group slot " + tp.partition() + " is not coordinated here")
                    : ErrorMapper.unwrap(e)));
        }
        Replica r = partitions.get(tp);
        if (r == null || r.log().isFenced()) {
            return CompletableFuture.failedFuture(view.exists(tp)
                    ? new org.apache.kafka.common.errors.NotLeaderOrFollowerException("partition " + tp + " is not led here")
                    : new org.apache.kafka.common.errors.UnknownTopicOrPartitionException("partition " + tp + " does not exist"));
        }
        return PartitionMarkers.append(r, m.producerId(), m.producerEpoch(), m.coordinatorEpoch(), m.transactionResult());
    }
}
