package dev.kaas.broker.storage;

import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One segment file of a partition: {@code {leaderEpoch:08x}-{baseOffset:020d}.log}, a sequence of
 * v2 record batches exactly as producers sent them, with base offsets rewritten. The epoch in
 * the name is the leader epoch under which the file was written; a deposed leader can only ever
 * write into files of its own, dead, epoch (see ARCHITECTURE.md, "Fencing").
 *
 * <p>Beside it: {@code .index} (offset → position) and {@code .timeindex} (max timestamp →
 * position), both sparse and rebuildable; {@code .txnindex}, the aborted transactions whose marker
 * is in this segment ({@link TxnIndex}), present only once one was.
 *
 * <p>Invariants: batches are contiguous from position 0 to {@link #size()}; offsets strictly
 * increase; {@code size()} only grows, except when recovery cuts off a torn tail.
 *
 * <p>Threading: appends from the partition's serial executor only; reads use positional reads
 * and may run concurrently on any worker.
 */
final class LogSegment implements AutoCloseable {
    private static final Pattern NAME = Pattern.compile("([0-9a-f]{8})-([0-9]{20})\\.log");

    private final Disk disk;
    /** Where the log file is now: a cleaned segment is written under a staging name and renamed into place. */
    private volatile Path logFile;
    private final int leaderEpoch;
    private final long baseOffset;
    private final FileChannel channel;
    private OffsetIndex offsetIndex;
    private OffsetIndex timeIndex;
    private TxnIndex txnIndex;
    private volatile int size;
    private volatile long nextOffset;
    private volatile long maxTimestamp = -1;
    private int bytesSinceIndexEntry;
    private int indexIntervalBytes = 4096;
    private long firstAppendMs = -1;
    private long truncatedBytes;
    private boolean tornInside;
    /** The log file's identity (device and inode) when opened: a name is not an identity (see {@link #stillAt}). */
    private Object fileKey;
    /** Renamed aside by retention or compaction: its indexes are not written again (their names may be another segment's now). */
    private volatile boolean retired;

    private LogSegment(Disk disk, Path logFile, int leaderEpoch, long baseOffset, FileChannel channel) {
        this.disk = disk;
        this.logFile = logFile;
        this.leaderEpoch = leaderEpoch;
        this.baseOffset = baseOffset;
        this.channel = channel;
        this.nextOffset = baseOffset;
    }

    static String fileName(int leaderEpoch, long baseOffset) {
        return String.format("%08x-%020d.log", leaderEpoch, baseOffset);
    }

    /** Parses a segment file name; null if it is not one. */
    static long[] parseName(String name) {
        Matcher m = NAME.matcher(name);
        if (!m.matches()) {
            return null;
        }
        return new long[] {Long.parseLong(m.group(1), 16), Long.parseLong(m.group(2))};
    }

    static LogSegment create(Disk disk, Path dir, int leaderEpoch, long baseOffset, int indexIntervalBytes) throws IOException {
        return createAt(disk, dir.resolve(fileName(leaderEpoch, baseOffset)), leaderEpoch, baseOffset, indexIntervalBytes);
    }

    private static LogSegment createAt(Disk disk, Path log, int leaderEpoch, long baseOffset, int indexIntervalBytes) throws IOException {
        FileChannel ch = disk.open(log, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
        LogSegment s = new LogSegment(disk, log, leaderEpoch, baseOffset, ch);
        s.indexIntervalBytes = indexIntervalBytes;
        s.offsetIndex = OffsetIndex.create(disk, s.indexFile());
        s.timeIndex = OffsetIndex.create(disk, s.timeIndexFile());
        s.txnIndex = TxnIndex.create(disk, s.txnIndexFile());
        s.fileKey = fileKeyOf(log);
        return s;
    }

    /**
     * A new segment the cleaner writes: its files carry {@code suffix} after their final names
     * ({@code X.log.cleaned}, {@code X.index.cleaned}, …) until {@link #rename} moves them.
     */
    static LogSegment createStaged(Disk disk, Path dir, int leaderEpoch, long baseOffset, int indexIntervalBytes,
                                   String suffix) throws IOException {
        Path log = dir.resolve(fileName(leaderEpoch, baseOffset) + suffix);
        for (Path p : List.of(log, siblingOf(log, ".index"), siblingOf(log, ".timeindex"), siblingOf(log, ".txnindex"))) {
            // Left by a pass that did not finish.
            disk.delete(p);
        }
        return createAt(disk, log, leaderEpoch, baseOffset, indexIntervalBytes);
    }

    /**
     * Renames the segment's files from their names with suffix {@code from} to the names with
     * suffix {@code to} ({@code ""}: the final names): the indexes first and the log last, so the
     * log file's name is what says how far a rename got. Files not written (an empty index) are
     * skipped. The open descriptor is unaffected.
     */
    void rename(String from, String to) throws IOException {
        String finalName = fileName(leaderEpoch, baseOffset);
        Path dir = logFile.getParent();
        if (!stillAt(dir.resolve(finalName + from))) {
            // Someone else moved it (a successor's recovery finished this swap): its names are not this segment's to move.
            throw new IOException("segment " + finalName + from + " is no longer this segment's file");
        }
        for (String ext : List.of(".index", ".timeindex", ".txnindex", ".log")) {
            String name = finalName.replace(".log", ext);
            Path src = dir.resolve(name + from);
            if (Files.exists(src)) {
                disk.move(src, dir.resolve(name + to));
            }
        }
        logFile = dir.resolve(finalName + to);
        offsetIndex.moveTo(indexFile());
        timeIndex.moveTo(timeIndexFile());
        txnIndex.moveTo(txnIndexFile());
    }

    private static Object fileKeyOf(Path file) {
        try {
            return Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /** True when {@code path} is this segment's log file (the same device and inode), not another file now under its name. */
    boolean stillAt(Path path) {
        Object now = fileKeyOf(path);
        return now != null && (fileKey == null || now.equals(fileKey));
    }

    private static Path siblingOf(Path log, String ext) {
        return log.resolveSibling(log.getFileName().toString().replace(".log", ext));
    }

    /**
     * Opens an existing segment holding only offsets below {@code endOffset}: the start of the
     * next leader epoch, past which a deposed leader's late bytes may follow (they are cut off).
     *
     * <p>With {@code recover}, scans every batch, truncates at the first one that is torn, corrupt,
     * out of sequence or at/after {@code endOffset}, and rebuilds both indexes. Without, trusts the
     * bytes (they are below the recovery checkpoint): loads the indexes and checks only the tail,
     * from the index entry before {@code endOffset}; anything unexpected there (bytes past
     * {@code endOffset}, an index that does not match the log) falls back to the full scan.
     */
    static LogSegment open(Disk disk, Path log, boolean recover, int indexIntervalBytes, long endOffset) throws IOException {
        long[] parsed = parseName(log.getFileName().toString());
        if (parsed == null) {
            throw new IOException("not a segment file: " + log);
        }
        FileChannel ch = disk.open(log, StandardOpenOption.READ, StandardOpenOption.WRITE);
        LogSegment s = new LogSegment(disk, log, (int) parsed[0], parsed[1], ch);
        s.fileKey = fileKeyOf(log);
        s.indexIntervalBytes = indexIntervalBytes;
        int fileSize = (int) Math.min(Integer.MAX_VALUE, ch.size());
        if (!recover) {
            s.offsetIndex = OffsetIndex.load(disk, s.indexFile(), fileSize, s.baseOffset);
            s.timeIndex = OffsetIndex.load(disk, s.timeIndexFile(), fileSize, Long.MIN_VALUE);
        }
        if (recover || s.offsetIndex == null || s.timeIndex == null || !s.tailEndsCleanly(fileSize, endOffset)) {
            s.rebuild(fileSize, endOffset);
        }
        s.txnIndex = TxnIndex.load(disk, s.txnIndexFile(), s.nextOffset);
        return s;
    }

    /** Largest batch recovery accepts: no valid batch exceeds a request, and a garbage length must not allocate gigabytes. */
    static final int MAX_BATCH_BYTES = 128 * 1024 * 1024;

    private void rebuild(int fileSize, long endOffset) throws IOException {
        offsetIndex = OffsetIndex.create(disk, indexFile());
        timeIndex = OffsetIndex.create(disk, timeIndexFile());
        size = 0;
        bytesSinceIndexEntry = 0;
        ByteBuffer buf = ByteBuffer.allocate(Math.min(fileSize, 1 << 20) + BatchHeader.SIZE);
        long bufStart = 0;
        buf.limit(0);
        int pos = 0;
        long expected = baseOffset;
        while (true) {
            if (fileSize - pos < BatchHeader.SIZE) {
                break;
            }
            int at = (int) (pos - bufStart);
            if (at + BatchHeader.SIZE > buf.limit()) {
                bufStart = refill(buf, pos, fileSize);
                at = 0;
            }
            int total = BatchHeader.totalSize(buf, at);
            long batchBase = BatchHeader.baseOffset(buf, at);
            if (total < BatchHeader.SIZE || total > fileSize - pos || total > MAX_BATCH_BYTES
                    || BatchHeader.magic(buf, at) != 2 || batchBase < expected
                    || BatchHeader.lastOffsetDelta(buf, at) < 0 || BatchHeader.lastOffset(buf, at) >= endOffset) {
                break;
            }
            if (at + total > buf.limit()) {
                if (total > buf.capacity()) {
                    buf = ByteBuffer.allocate(total);
                    buf.limit(0);
                }
                bufStart = refill(buf, pos, fileSize);
                at = 0;
            }
            if (!BatchHeader.crcValid(buf, at, total)) {
                break;
            }
            indexBatch(buf, at, pos, total);
            expected = BatchHeader.lastOffset(buf, at) + 1;
            nextOffset = expected;
            pos += total;
        }
        size = pos;
        if (pos < fileSize) {
            truncatedBytes = fileSize - pos;
            // Cut at the epoch's end is the rule working; cut before it means bytes of the live range were lost.
            tornInside = nextOffset < endOffset;
            channel.truncate(pos);
        }
    }

    /**
     * Trusted open: the index is loaded; verify the tail from the last index entry below
     * {@code endOffset} to the end of the file, reading headers only. True when every batch there
     * is well formed and below {@code endOffset} and the file ends right after the last one.
     */
    private boolean tailEndsCleanly(int fileSize, long endOffset) throws IOException {
        long from = endOffset == Long.MAX_VALUE ? Long.MAX_VALUE : endOffset - 1;
        long anchor = offsetIndex.floorKey(from);
        boolean anchored = anchor != Long.MIN_VALUE;
        int pos = anchored ? offsetIndex.floorPosition(from) : 0;
        long expected = anchored ? anchor : baseOffset;
        ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
        boolean first = true;
        long sinceEntry = 0;
        long tailMaxTimestamp = -1;
        while (pos + BatchHeader.SIZE <= fileSize) {
            header.clear();
            readFully(header, pos);
            header.flip();
            int total = BatchHeader.totalSize(header, 0);
            long base = BatchHeader.baseOffset(header, 0);
            boolean indexMatches = !first || !anchored || base == expected;
            if (!indexMatches || BatchHeader.magic(header, 0) != 2 || total < BatchHeader.SIZE || total > fileSize - pos
                    || base < expected || BatchHeader.lastOffsetDelta(header, 0) < 0 || BatchHeader.lastOffset(header, 0) >= endOffset) {
                return false;
            }
            if (!first) {
                sinceEntry += total;
                // The writer adds an entry every index.interval.bytes: a tail this long without one means a
                // partial index (indexes are not fsynced; a power loss can leave one short or empty).
                if (sinceEntry >= indexIntervalBytes) {
                    return false;
                }
            }
            tailMaxTimestamp = Math.max(tailMaxTimestamp, BatchHeader.maxTimestamp(header, 0));
            expected = BatchHeader.lastOffset(header, 0) + 1;
            pos += total;
            first = false;
        }
        if (pos != fileSize || (fileSize > 0 && !anchored)) {
            return false;
        }
        if (tailMaxTimestamp >= 0 && (timeIndex.entries() == 0 || tailMaxTimestamp > timeIndex.floorKey(Long.MAX_VALUE))) {
            return false;
        }
        size = fileSize;
        nextOffset = Math.max(expected, baseOffset);
        if (timeIndex.entries() > 0) {
            header.clear();
            readFully(header, timeIndex.floorPosition(Long.MAX_VALUE));
            header.flip();
            maxTimestamp = BatchHeader.maxTimestamp(header, 0);
        }
        return true;
    }

    /** Bytes recovery cut off the end of this segment when it opened (torn, corrupt, or past its epoch's end). */
    long truncatedBytes() {
        return truncatedBytes;
    }

    /** True when recovery cut this segment short of its epoch's end: bytes inside its live range were torn or corrupt. */
    boolean tornInside() {
        return tornInside;
    }

    /** Refills {@code buf} with file bytes starting at {@code from}; returns the new buffer start position. */
    private long refill(ByteBuffer buf, long from, int fileSize) throws IOException {
        buf.clear();
        int want = (int) Math.min(buf.capacity(), fileSize - from);
        buf.limit(want);
        long p = from;
        while (buf.hasRemaining()) {
            int n = channel.read(buf, p);
            if (n < 0) {
                break;
            }
            p += n;
        }
        buf.flip();
        return from;
    }

    /**
     * Appends one or more batches that already carry their final offsets.
     *
     * @param batches positioned at the first batch, limit at the end of the last
     */
    void append(ByteBuffer batches, long nowMs) throws IOException {
        int start = size;
        int at = batches.position();
        int end = batches.limit();
        ByteBuffer dup = batches.duplicate();
        while (dup.hasRemaining()) {
            channel.write(dup, start + (dup.position() - at));
        }
        int p = at;
        while (p < end) {
            int total = BatchHeader.totalSize(batches, p);
            indexBatch(batches, p, start + (p - at), total);
            nextOffset = BatchHeader.lastOffset(batches, p) + 1;
            p += total;
        }
        if (firstAppendMs < 0) {
            firstAppendMs = nowMs;
        }
        size = start + (end - at);
    }

    private void indexBatch(ByteBuffer b, int at, int position, int total) throws IOException {
        bytesSinceIndexEntry += total;
        if (offsetIndex.entries() == 0 || bytesSinceIndexEntry >= indexIntervalBytes) {
            offsetIndex.add(BatchHeader.baseOffset(b, at), position);
            bytesSinceIndexEntry = 0;
        }
        long ts = BatchHeader.maxTimestamp(b, at);
        if (ts > maxTimestamp) {
            maxTimestamp = ts;
            timeIndex.add(ts, position);
        }
    }

    /** Byte position of the first batch containing an offset {@code >= offset}, or {@link #size()} if none. */
    int positionOf(long offset, int limitPosition) throws IOException {
        int pos = offsetIndex.floorPosition(offset);
        ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
        while (pos + BatchHeader.SIZE <= limitPosition) {
            header.clear();
            readFully(header, pos);
            header.flip();
            if (BatchHeader.lastOffset(header, 0) >= offset) {
                return pos;
            }
            pos += BatchHeader.totalSize(header, 0);
        }
        return limitPosition;
    }

    /** Start position for a search of the first batch whose max timestamp is {@code >= timestamp}. */
    int timeSearchStart(long timestamp) {
        return timeIndex.positionBefore(timestamp);
    }

    void readFully(ByteBuffer dst, long position) throws IOException {
        long p = position;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, p);
            if (n < 0) {
                throw new IOException("unexpected end of segment " + logFile + " at " + p);
            }
            p += n;
        }
    }

    FileChannel channel() {
        return channel;
    }

    void flush() throws IOException {
        channel.force(false);
    }

    /** No more appends: write the indexes, which a later trusted open loads instead of scanning. */
    void seal() throws IOException {
        offsetIndex.persist();
        timeIndex.persist();
        txnIndex.persist();
    }

    TxnIndex txnIndex() {
        return txnIndex;
    }


    Path indexFile() {
        return siblingOf(logFile, ".index");
    }

    Path timeIndexFile() {
        return siblingOf(logFile, ".timeindex");
    }

    Path txnIndexFile() {
        return siblingOf(logFile, ".txnindex");
    }

    Path file() {
        return logFile;
    }

    int leaderEpoch() {
        return leaderEpoch;
    }

    long baseOffset() {
        return baseOffset;
    }

    /** One past the last offset in this segment. */
    long nextOffset() {
        return nextOffset;
    }

    int size() {
        return size;
    }

    long maxTimestamp() {
        return maxTimestamp;
    }


    long firstAppendMs() {
        return firstAppendMs;
    }


    boolean isEmpty() {
        return size == 0;
    }

    @Override
    public void close() throws IOException {
        if (!retired) {
            offsetIndex.close();
            timeIndex.close();
        }
        channel.close();
    }

    /** What a retired segment's files are renamed to until they are deleted; recovery deletes leftovers. */
    static final String DELETED_SUFFIX = ".deleted";

    /**
     * Retention: moves the segment's files out of the log's names, still open for reads in flight
     * (Apache renames to {@code .deleted} and deletes after {@code file.delete.delay.ms}).
     *
     * @return the files as renamed
     */
    List<Path> renameAside() throws IOException {
        return renameAside("");
    }

    /**
     * As {@link #renameAside()}, with {@code tag} before the suffix: the cleaner replaces a segment
     * at the same base offset on every pass, and one pass's files must not take the names of the
     * last one's while those still wait for their delay.
     */
    List<Path> renameAside(String tag) throws IOException {
        retired = true;
        if (!stillAt(logFile)) {
            // Another file holds this segment's name now (a successor's recovery put it there): not ours to move.
            throw new IOException("segment " + logFile.getFileName() + " is no longer this segment's file");
        }
        List<Path> moved = new java.util.ArrayList<>(4);
        for (Path p : List.of(logFile, indexFile(), timeIndexFile(), txnIndexFile())) {
            if (Files.exists(p)) {
                Path to = p.resolveSibling(p.getFileName() + tag + DELETED_SUFFIX);
                disk.move(p, to);
                moved.add(to);
            }
        }
        return moved;
    }

    void deleteFiles() throws IOException {
        close();
        disk.delete(logFile);
        disk.delete(indexFile());
        disk.delete(timeIndexFile());
        disk.delete(txnIndexFile());
    }
}
