package dev.kaas.broker.storage;

import java.util.List;

/**
 * Which of a log's oldest segments may go, as Apache 3.7's {@code UnifiedLog.deleteOldSegments}
 * decides it, in its order: segments wholly below the log start offset (DeleteRecords), then,
 * with {@code cleanup.policy} containing {@code delete}, what exceeds {@code retention.bytes},
 * then segments whose largest timestamp is older than {@code retention.ms}. Each rule removes a
 * prefix of what the previous left. A segment may go only when all of it is below the high
 * watermark, and never when it is the last segment and empty. Deleting every segment is allowed:
 * the caller rolls a new active segment first, as Apache does. Pure: no I/O, no clock.
 */
final class Retention {
    private Retention() {
    }

    /** What the decision needs of a segment; {@code largestTimestamp} is the records' largest, else the file's mtime (Apache). */
    record Segment(long baseOffset, long nextOffset, long sizeBytes, long largestTimestamp) {
    }

    /** How many of the oldest segments go, and the rule that took the last of them. */
    record Decision(int count, String reason) {
        static final Decision NONE = new Decision(0, "");
    }

    static Decision decide(List<Segment> segments, long logStartOffset, long highWatermark, long logEndOffset,
                           long retentionMs, long retentionBytes, boolean deletePolicy, long nowMs) {
        int gone = 0;
        String reason = "";
        int n = prefix(segments, gone, highWatermark, logEndOffset, (s, next) -> next != null && next.baseOffset() <= logStartOffset);
        if (n > gone) {
            gone = n;
            reason = "log start offset " + logStartOffset;
        }
        if (deletePolicy && retentionBytes >= 0) {
            long total = 0;
            for (int i = gone; i < segments.size(); i++) {
                total += segments.get(i).sizeBytes();
            }
            long[] excess = {total - retentionBytes};
            if (excess[0] > 0) {
                n = prefix(segments, gone, highWatermark, logEndOffset, (s, next) -> {
                    if (excess[0] - s.sizeBytes() >= 0) {
                        excess[0] -= s.sizeBytes();
                        return true;
                    }
                    return false;
                });
                if (n > gone) {
                    gone = n;
                    reason = "retention.bytes " + retentionBytes;
                }
            }
        }
        if (deletePolicy && retentionMs >= 0) {
            n = prefix(segments, gone, highWatermark, logEndOffset, (s, next) -> nowMs - s.largestTimestamp() > retentionMs);
            if (n > gone) {
                gone = n;
                reason = "retention.ms " + retentionMs;
            }
        }
        return gone == 0 ? Decision.NONE : new Decision(gone, reason);
    }

    private interface Rule {
        boolean test(Segment s, Segment next);
    }

    /** Apache's {@code deletableSegments}: from {@code from}, the segments the rule takes in a row, each wholly below the high watermark. */
    private static int prefix(List<Segment> segments, int from, long highWatermark, long logEndOffset, Rule rule) {
        int i = from;
        while (i < segments.size()) {
            Segment s = segments.get(i);
            Segment next = i + 1 < segments.size() ? segments.get(i + 1) : null;
            boolean lastAndEmpty = next == null && s.sizeBytes() == 0;
            long upperBound = next != null ? next.baseOffset() : logEndOffset;
            if (lastAndEmpty || upperBound > highWatermark || !rule.test(s, next)) {
                break;
            }
            i++;
        }
        return i;
    }
}
