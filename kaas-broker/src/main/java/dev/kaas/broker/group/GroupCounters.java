package dev.kaas.broker.group;

import java.util.concurrent.atomic.LongAdder;

/**
 * Apache's {@code group-coordinator-metrics} counts, for every slot this broker coordinated since it
 * started (kept here, not in a shard, so a slot that moves away does not take its count along and
 * make a counter go backwards). Added to on the shards' executors, read by a scrape.
 */
public final class GroupCounters {
    /** {@code group-completed-rebalance-count}: a leader's SyncGroup made a group Stable. */
    final LongAdder completedRebalances = new LongAdder();
    /**
     * {@code offset-commit-count}: OffsetCommits and TxnOffsetCommits stored, one each however many
     * partitions it holds, as Apache counts its one append to {@code __consumer_offsets} per commit
     * (its description says offsets; {@code GroupMetadataManager} records the size of a one-entry map).
     */
    final LongAdder offsetCommits = new LongAdder();

    public long completedRebalances() {
        return completedRebalances.sum();
    }

    public long offsetCommits() {
        return offsetCommits.sum();
    }
}
