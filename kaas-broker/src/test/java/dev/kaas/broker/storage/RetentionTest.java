package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Apache 3.7's deleteOldSegments decisions on handmade segment lists: which prefix goes, and why. */
class RetentionTest {
    static final long NOW = 1_000_000_000L;
    static final long HOUR = 3_600_000L;

    /** Four segments of 100 bytes, 10 offsets each, the oldest written 4 hours ago, the active one now. */
    static final List<Retention.Segment> FOUR = List.of(
            new Retention.Segment(0, 10, 100, NOW - 4 * HOUR),
            new Retention.Segment(10, 20, 100, NOW - 3 * HOUR),
            new Retention.Segment(20, 30, 100, NOW - 2 * HOUR),
            new Retention.Segment(30, 40, 100, NOW));

    static Retention.Decision decide(List<Retention.Segment> s, long logStart, long hw, long retentionMs, long retentionBytes,
                                     boolean delete) {
        return Retention.decide(s, logStart, hw, s.get(s.size() - 1).nextOffset(), retentionMs, retentionBytes, delete, NOW);
    }

    @Test
    void byTimeEverySegmentWhoseLargestTimestampIsOlderThanRetentionMs() {
        assertThat(decide(FOUR, 0, 40, (long) (2.5 * HOUR), -1, true).count()).isEqualTo(2);
        assertThat(decide(FOUR, 0, 40, 2 * HOUR, -1, true).count()).as("exactly retention.ms old stays").isEqualTo(2);
        assertThat(decide(FOUR, 0, 40, -1, -1, true).count()).as("-1: forever").isZero();
    }

    @Test
    void bySizeTheOldestSegmentsUntilTheRestFits() {
        assertThat(decide(FOUR, 0, 40, -1, 200, true).count()).as("400 bytes, limit 200: two go").isEqualTo(2);
        // As Apache: never below the limit, so 250 leaves 300 bytes rather than 200.
        assertThat(decide(FOUR, 0, 40, -1, 250, true).count()).isEqualTo(1);
        assertThat(decide(FOUR, 0, 40, -1, 300, true).count()).isEqualTo(1);
        assertThat(decide(FOUR, 0, 40, -1, 400, true).count()).isZero();
    }

    @Test
    void belowTheLogStartOffsetWhateverThePolicy() {
        var d = decide(FOUR, 25, 40, -1, -1, false);
        assertThat(d.count()).as("segments wholly below offset 25").isEqualTo(2);
        assertThat(d.reason()).contains("log start offset");
        assertThat(decide(FOUR, 20, 40, -1, -1, false).count()).as("a segment ending exactly at the start goes").isEqualTo(2);
    }

    @Test
    void compactedTopicsKeepEverythingAboveTheLogStart() {
        assertThat(decide(FOUR, 0, 40, 1, 1, false).count()).isZero();
    }

    @Test
    void nothingThatReachesAboveTheHighWatermark() {
        assertThat(decide(FOUR, 0, 15, 0, -1, true).count()).as("the segment 10..20 is not all below 15").isEqualTo(1);
        assertThat(decide(FOUR, 0, 39, 0, -1, true).count()).as("the active segment holds unacknowledged offsets").isEqualTo(3);
        assertThat(decide(FOUR, 0, 40, 0, -1, true).count()).as("the active one was written this instant").isEqualTo(3);
        List<Retention.Segment> allOld = List.of(FOUR.get(0), FOUR.get(1), new Retention.Segment(20, 30, 100, NOW - HOUR));
        assertThat(decide(allOld, 0, 30, 0, -1, true).count()).as("everything, the active one too (the caller rolls first)").isEqualTo(3);
    }

    @Test
    void neverTheLastSegmentWhenItIsEmpty() {
        List<Retention.Segment> s = List.of(new Retention.Segment(0, 10, 100, NOW - 4 * HOUR), new Retention.Segment(10, 10, 0, -1));
        assertThat(decide(s, 0, 10, 0, -1, true).count()).isEqualTo(1);
    }

    @Test
    void theRulesApplyInApachesOrderEachToWhatThePreviousLeft() {
        // Log start retires the first; size then sees 300 bytes against 150 and retires one more.
        var d = decide(FOUR, 10, 40, (long) (2.5 * HOUR), 150, true);
        assertThat(d.count()).isEqualTo(2);
        assertThat(d.reason()).contains("retention.bytes");
        // With a shorter retention.ms, time takes the third.
        d = decide(FOUR, 10, 40, (long) (1.5 * HOUR), 150, true);
        assertThat(d.count()).isEqualTo(3);
        assertThat(d.reason()).contains("retention.ms");
    }
}
