package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a compaction pass may clean and how it groups segments, decided without files. */
class CompactionTest {
    static final long NOW = 1_700_000_000_000L;

    /** Four 100-byte segments of 10 offsets, then the active one at 40. */
    static List<Compaction.Segment> fiveSegments(long... largestTimestamps) {
        return List.of(new Compaction.Segment(0, 0, 100, largestTimestamps[0]), new Compaction.Segment(0, 10, 100, largestTimestamps[1]),
                new Compaction.Segment(0, 20, 100, largestTimestamps[2]), new Compaction.Segment(0, 30, 100, largestTimestamps[3]),
                new Compaction.Segment(0, 40, 50, largestTimestamps[4]));
    }

    static final List<Compaction.Segment> OLD = fiveSegments(NOW - 5000, NOW - 4000, NOW - 3000, NOW - 2000, NOW - 1000);

    @Test
    void aNewLogIsDirtyUpToItsActiveSegment() {
        Compaction.Range r = Compaction.range(OLD, -1, 0, 45, 45, 0, Long.MAX_VALUE, NOW);

        assertThat(r.firstDirty()).isZero();
        assertThat(r.firstUncleanable()).isEqualTo(40);
        assertThat(r.cleanBytes()).isZero();
        assertThat(r.cleanableBytes()).isEqualTo(400);
        assertThat(r.cleanableRatio()).isEqualTo(1.0);
        assertThat(r.worthCleaning(0.5)).isTrue();
    }

    @Test
    void theCheckpointSplitsCleanFromDirtyAndTheRatioDecides() {
        Compaction.Range r = Compaction.range(OLD, 30, 0, 45, 45, 0, Long.MAX_VALUE, NOW);

        assertThat(r.cleanBytes()).isEqualTo(300);
        assertThat(r.cleanableBytes()).isEqualTo(100);
        assertThat(r.worthCleaning(0.5)).isFalse();
        assertThat(r.worthCleaning(0.2)).isTrue();
    }

    @Test
    void nothingAtOrPastTheLastStableOffsetIsCleaned() {
        // An open transaction at 25: the segment holding it and everything after stay as written.
        Compaction.Range r = Compaction.range(OLD, -1, 0, 45, 25, 0, Long.MAX_VALUE, NOW);

        assertThat(r.firstUncleanable()).isEqualTo(20);
        assertThat(r.cleanableBytes()).isEqualTo(200);
    }

    @Test
    void segmentsYoungerThanTheMinimumLagWait() {
        Compaction.Range r = Compaction.range(OLD, -1, 0, 45, 45, 3500, Long.MAX_VALUE, NOW);

        assertThat(r.firstUncleanable()).isEqualTo(20);
    }

    @Test
    void aCheckpointOutsideTheLogIsResetToItsStart() {
        Compaction.Range below = Compaction.range(OLD, 5, 10, 45, 45, 0, Long.MAX_VALUE, NOW);
        Compaction.Range above = Compaction.range(OLD, 99, 0, 45, 45, 0, Long.MAX_VALUE, NOW);

        assertThat(below.firstDirty()).isEqualTo(10);
        assertThat(below.checkpointReset()).isTrue();
        assertThat(above.firstDirty()).isZero();
        assertThat(above.checkpointReset()).isTrue();
    }

    @Test
    void theMaximumLagForcesAPassWhateverTheRatio() {
        Compaction.Range r = Compaction.range(OLD, 30, 0, 45, 45, 0, 1500, NOW);

        assertThat(r.needNow()).isTrue();
        assertThat(r.worthCleaning(0.99)).isTrue();
        assertThat(Compaction.range(OLD, 30, 0, 45, 45, 0, 2500, NOW).needNow()).isFalse();
    }

    @Test
    void groupsStayWithinTheSegmentSizeAndOneEpoch() {
        List<Compaction.Segment> segments = List.of(new Compaction.Segment(1, 0, 60, 0), new Compaction.Segment(1, 10, 30, 0),
                new Compaction.Segment(1, 20, 30, 0), new Compaction.Segment(2, 30, 10, 0), new Compaction.Segment(2, 40, 10, 0));

        assertThat(Compaction.group(segments, 100, 50)).containsExactly(List.of(0, 1), List.of(2), List.of(3, 4));
    }
}
