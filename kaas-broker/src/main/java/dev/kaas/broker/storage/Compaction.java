package dev.kaas.broker.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * What a compaction pass of one log may clean, as Apache 3.7's {@code LogCleanerManager}
 * decides it, and how the cleaned segments are grouped ({@code LogCleaner.groupSegmentsBySize}).
 * Pure: no I/O, no clock.
 *
 * <p>The log is {@code [logStart, firstDirty)} already cleaned (the cleaner checkpoint) and
 * {@code [firstDirty, firstUncleanable)} dirty and cleanable. Nothing at or past the first
 * uncleanable offset is touched: the active segment, anything at or past the last stable
 * offset (so undecided transactions and records not yet durable and owned stay as written),
 * and segments whose largest timestamp is younger than {@code min.compaction.lag.ms}.
 */
final class Compaction {
    private Compaction() {
    }

    /** What the decision needs of a segment. {@code epoch} is the leader epoch in its name. */
    record Segment(int epoch, long baseOffset, long sizeBytes, long largestTimestamp) {
    }

    /**
     * The cleanable range of a log, in whole segments: {@code firstUncleanable} is the base of the
     * segment holding the first offset that may not be cleaned. {@code cleanableRatio} is Apache's dirty ratio (dirty bytes
     * over all bytes below the first uncleanable segment); {@code needNow} when
     * {@code max.compaction.lag.ms} has passed for the oldest dirty record; {@code checkpointReset}
     * when the stored first dirty offset was outside the log and had to be reset.
     */
    record Range(long firstDirty, long firstUncleanable, long cleanBytes, long cleanableBytes, boolean needNow,
                 boolean checkpointReset) {
        double cleanableRatio() {
            long total = cleanBytes + cleanableBytes;
            return total == 0 ? 0 : (double) cleanableBytes / total;
        }

        /** Apache's selection: a dirty ratio above the minimum, or a compaction lag past its maximum with something to clean. */
        boolean worthCleaning(double minCleanableRatio) {
            return cleanBytes + cleanableBytes > 0
                    && ((needNow && cleanableBytes > 0) || cleanableRatio() > minCleanableRatio);
        }
    }

    /**
     * Apache's {@code cleanableOffsets} and {@code calculateCleanableBytes}.
     *
     * @param segments         the log's segments in offset order, the active one last
     * @param checkpoint       the first dirty offset the last pass recorded, or -1 for none
     * @param lastStableOffset the log's last stable offset (never above its high watermark)
     */
    static Range range(List<Segment> segments, long checkpoint, long logStartOffset, long logEndOffset,
                       long lastStableOffset, long minCompactionLagMs, long maxCompactionLagMs, long nowMs) {
        long firstDirty = checkpoint < 0 ? logStartOffset : checkpoint;
        boolean reset = false;
        if (firstDirty < logStartOffset || firstDirty > logEndOffset) {
            firstDirty = logStartOffset;
            reset = checkpoint >= 0;
        }
        long activeBase = segments.isEmpty() ? logEndOffset : segments.get(segments.size() - 1).baseOffset();
        long uncleanable = Math.min(lastStableOffset, activeBase);
        if (minCompactionLagMs > 0) {
            for (int i = 0; i + 1 < segments.size(); i++) {
                Segment s = segments.get(i);
                long next = segments.get(i + 1).baseOffset();
                if (next > firstDirty && s.largestTimestamp() > nowMs - minCompactionLagMs) {
                    uncleanable = Math.min(uncleanable, s.baseOffset());
                    break;
                }
            }
        }
        uncleanable = Math.max(firstDirty, uncleanable);
        // Only whole segments are cleaned: the first uncleanable segment is the one holding that offset.
        long firstUncleanableSegment = activeBase;
        for (Segment s : segments) {
            if (s.baseOffset() <= uncleanable) {
                firstUncleanableSegment = s.baseOffset();
            }
        }
        long clean = 0;
        long cleanable = 0;
        for (int i = 0; i < segments.size(); i++) {
            Segment s = segments.get(i);
            long next = i + 1 < segments.size() ? segments.get(i + 1).baseOffset() : logEndOffset;
            if (s.baseOffset() >= firstUncleanableSegment) {
                break;
            }
            if (next <= firstDirty) {
                clean += s.sizeBytes();
            } else {
                cleanable += s.sizeBytes();
            }
        }
        boolean needNow = false;
        if (maxCompactionLagMs > 0 && maxCompactionLagMs < Long.MAX_VALUE) {
            // Apache's maxCompactionDelay: the first dirty segment's oldest timestamp is what ages;
            // kaas keeps each segment's largest only, which is the later bound (compacts no sooner).
            for (int i = 0; i + 1 < segments.size(); i++) {
                Segment s = segments.get(i);
                if (segments.get(i + 1).baseOffset() > firstDirty && s.baseOffset() < firstUncleanableSegment) {
                    needNow = s.largestTimestamp() >= 0 && nowMs - s.largestTimestamp() > maxCompactionLagMs;
                    break;
                }
            }
        }
        return new Range(firstDirty, Math.max(firstDirty, firstUncleanableSegment), clean, cleanable, needNow, reset);
    }

    /**
     * Apache's {@code groupSegmentsBySize}: consecutive segments whose total log size stays within
     * {@code maxBytes} (the topic's {@code segment.bytes}) and whose offsets span less than
     * {@code Integer.MAX_VALUE} become one cleaned segment. kaas also never groups segments of two
     * leader epochs: the names are the epoch history, and a cleaned segment keeps its first
     * source's name.
     *
     * @param segments   the segments to clean, in offset order
     * @param endOffset  one past the last offset a pass covers (bounds the last group's span)
     * @return each group as indexes into {@code segments}, in order
     */
    static List<List<Integer>> group(List<Segment> segments, long maxBytes, long endOffset) {
        List<List<Integer>> groups = new ArrayList<>();
        int i = 0;
        while (i < segments.size()) {
            List<Integer> group = new ArrayList<>();
            Segment first = segments.get(i);
            long size = first.sizeBytes();
            group.add(i);
            i++;
            while (i < segments.size()) {
                Segment s = segments.get(i);
                long lastOffset = i + 1 < segments.size() ? segments.get(i + 1).baseOffset() - 1 : endOffset - 1;
                if (s.epoch() != first.epoch() || size + s.sizeBytes() > maxBytes
                        || lastOffset - first.baseOffset() > Integer.MAX_VALUE) {
                    break;
                }
                size += s.sizeBytes();
                group.add(i);
                i++;
            }
            groups.add(group);
        }
        return groups;
    }
}
