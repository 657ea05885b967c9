package dev.kaas.common.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Who writes one partition, and under which leader epoch. {@code leader == -1} means no
 * live broker holds it (clients get LEADER_NOT_AVAILABLE / NOT_LEADER_OR_FOLLOWER).
 *
 * @param target  the broker an AlterPartitionReassignments placed the partition on, kept while that
 *                broker is alive (as Apache keeps a reassigned replica list); null: the balancer places it
 * @param leaving while a reassignment's handoff is under way (no leader yet), the broker it is
 *                leaving: ListPartitionReassignments shows it as the replica being removed
 */
public record PartitionAssignment(int partition, int leader, int leaderEpoch,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) Integer target,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) Integer leaving) {
    public static final int NO_LEADER = -1;

    public PartitionAssignment(int partition, int leader, int leaderEpoch) {
        this(partition, leader, leaderEpoch, null, null);
    }

    public PartitionAssignment(int partition, int leader, int leaderEpoch, Integer target) {
        this(partition, leader, leaderEpoch, target, null);
    }

    /** A reassignment that has not completed: the partition is not (yet) written by its target. */
    public boolean reassigning() {
        return target != null && leader != target;
    }
}
