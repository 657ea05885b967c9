package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.group.GroupCoordinator;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicAssignment;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Marker delivery. What this broker holds it writes itself: a partition it leads gets the
 * control batch through its own serial writer (acknowledged as any append: fsync, then the fence
 * check), and a group slot it coordinates commits or drops the producer's pending offsets. What
 * another broker leads goes through the {@link MarkerQueue} on the volume. A partition without
 * a leader yet is NOT_LEADER_OR_FOLLOWER (the slot retries); one that no longer exists is
 * UNKNOWN_TOPIC_OR_PARTITION (the slot stops sending to it, as Apache).
 */
final class PartitionMarkers implements MarkerWriter {
    private final Partitions partitions;
    private final GroupCoordinator groups;
    private final ClusterView view;
    private final MarkerQueue queue;

    PartitionMarkers(Partitions partitions, GroupCoordinator groups, ClusterView view, MarkerQueue queue) {
        this.partitions = partitions;
        this.groups = groups;
        this.view = view;
        this.queue = queue;
    }

    @Override
    public CompletableFuture<Void> write(int slot, TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
                                         boolean commit) {
        Assignment a = view.assignment();
        int me = view.brokerId();
        if (tp.topic().equals(TxnStateMachine.GROUP_OFFSETS)) {
            if (tp.partition() < 0 || tp.partition() >= Assignment.SLOTS) {
                return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("no group slot " + tp.partition()));
            }
            int owner = a.groupSlots().stream().filter(s -> s.slot() == tp.partition()).mapToInt(SlotAssignment::broker)
                    .findFirst().orElse(-1);
            if (owner == me) {
                return writeLocal(tp, "", producerId, producerEpoch, coordinatorEpoch, commit);
            }
            return owner < 0 ? CompletableFuture.failedFuture(new NotCoordinatorException("group slot " + tp.partition() + " has no owner"))
                    : queue.send(owner, slot, tp, "", producerId, producerEpoch, coordinatorEpoch, commit);
        }
        Replica r = partitions.get(tp);
        if (r != null && !r.log().isFenced()) {
            return append(r, producerId, producerEpoch, coordinatorEpoch, commit);
        }
        if (!view.exists(tp)) {
            return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("partition " + tp + " does not exist"));
        }
        TopicAssignment t = view.topic(tp.topic());
        PartitionAssignment p = t.partitions().get(tp.partition());
        if (p.leader() < 0 || p.leader() == me) {
            // No leader, or ours and not open yet: the slot tries again.
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("partition " + tp + " has no open leader yet"));
        }
        return queue.send(p.leader(), slot, tp, t.topic().topicId(), producerId, producerEpoch, coordinatorEpoch, commit);
    }

    /** A marker another broker's coordinator queued for what this broker holds (the leader's side of the queue). */
    CompletableFuture<Void> writeLocal(TopicPartition tp, String topicId, long producerId, short producerEpoch, int coordinatorEpoch,
                                       boolean commit) {
        if (tp.topic().equals(TxnStateMachine.GROUP_OFFSETS)) {
            if (tp.partition() < 0 || tp.partition() >= Assignment.SLOTS) {
                return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("no group slot " + tp.partition()));
            }
            return groups.callSlot(tp.partition(), shard -> {
                shard.completeTxn(producerId, producerEpoch, coordinatorEpoch, commit);
                return null;
            });
        }
        Replica r = partitions.get(tp);
        if (r == null || r.log().isFenced() || (!topicId.isEmpty() && !r.log().topicId().equals(topicId))) {
            boolean known = view.exists(tp) && (topicId.isEmpty() || view.topic(tp.topic()).topic().topicId().equals(topicId));
            return CompletableFuture.failedFuture(known ? new NotLeaderOrFollowerException("partition " + tp + " is not led here")
                    : new UnknownTopicOrPartitionException("partition " + tp + " does not exist"));
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
                    r.log().awaitFlushed(offset + 1, r.writer()).whenComplete((v, e) -> {
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
