package dev.kaas.common.model;

/**
 * Who writes one partition, and under which leader epoch. {@code leader == -1} means no
 * live broker holds it (clients get LEADER_NOT_AVAILABLE / NOT_LEADER_OR_FOLLOWER).
 */
public record PartitionAssignment(int partition, int leader, int leaderEpoch) {
    public static final int NO_LEADER = -1;
}
