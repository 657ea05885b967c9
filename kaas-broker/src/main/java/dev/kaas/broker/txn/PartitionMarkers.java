package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.group.GroupCoordinator;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.TopicAssignment;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Marker delivery to what this broker holds: a partition it leads gets the control batch through
 * its own serial writer (acknowledged as any append: fsync, then the fence check), and a group
 * slot it coordinates commits or drops the producer's pending offsets. Anything else is
 * NOT_LEADER_OR_FOLLOWER for now (the slot retries), or UNKNOWN_TOPIC_OR_PARTITION when the
 * partition no longer exists (the slot stops sending to it, as Apache).
 */
final class PartitionMarkers implements MarkerWriter {
    private final Partitions partitions;
    private final GroupCoordinator groups;
    private final ClusterView view;

    PartitionMarkers(Partitions partitions, GroupCoordinator groups, ClusterView view) {
        this.partitions = partitions;
        this.groups = groups;
        this.view = view;
    }

    @Override
    public CompletableFuture<Void> write(TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
        if (tp.topic().equals(TxnStateMachine.GROUP_OFFSETS)) {
            if (tp.partition() < 0 || tp.partition() >= Assignment.SLOTS) {
                return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("no group slot " + tp.partition()));
            }
            return groups.callSlot(tp.partition(), shard -> {
                shard.completeTxn(producerId, producerEpoch, commit);
                return null;
            });
        }
        Replica r = partitions.get(tp);
        if (r == null || r.log().isFenced()) {
            TopicAssignment t = view.topic(tp.topic());
            if (t == null || tp.partition() < 0 || tp.partition() >= t.partitions().size()) {
                return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("partition " + tp + " does not exist"));
            }
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("partition " + tp + " is not led here"));
        }
        return append(r, producerId, producerEpoch, coordinatorEpoch, commit);
    }

    /** The marker through the partition's writer; complete once durable and still owned. */
    static CompletableFuture<Void> append(Replica r, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            r.writer().execute(() -> {
                try {
                    long offset = r.log().appendMarker(producerId, producerEpoch, coordinatorEpoch, commit);
                    r.log().awaitDurable(offset + 1, r.writer()).whenComplete((v, e) -> {
                        if (e == null) {
                            done.complete(null);
                        } else {
                            done.completeExceptionally(e);
                        }
                    });
                } catch (Throwable e) {
                    done.completeExceptionally(e);
                }
            });
        } catch (RuntimeException e) {
            done.completeExceptionally(new NotLeaderOrFollowerException("partition writer stopped: " + e.getMessage()));
        }
        return done;
    }
}
