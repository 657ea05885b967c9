package dev.kaas.broker.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One segment file of a partition: {@code {leaderEpoch:08x}-{baseOffset:020d}.log}, a sequence of
 * v2 record batches exactly as producers sent them, with base offsets rewritten. The epoch in
 * the name is the leader epoch under which the file was written; a deposed leader can only ever
 * write into files of its own, dead, epoch (see ARCHITECTURE.md, "Fencing").
 *
 * <p>Beside it: {@code .index} (offset → position) and {@code .timeindex} (max timestamp →
 * position), both sparse and rebuildable.
 *
 * <p>Invariants: batches are contiguous from position 0 to {@link #size()}; offsets strictly
 * increase; {@code size()} only grows, except when recovery cuts off a torn tail.
 *
 * <p>Threading: appends from the partition's serial executor only; reads use positional reads
 * and may run concurrently on any worker.
 */
final class LogSegment implements AutoCloseable {
    private static final Pattern NAME = Pattern.compile("([0-9a-f]{8})-([0-9]{20})\\.log");

    private final Path logFile;
    private final int leaderEpoch;
    private final long baseOffset;
    private final FileChannel channel;
    private OffsetIndex offsetIndex;
    private OffsetIndex timeIndex;
    private volatile int size;
    private volatile long nextOffset;
    private volatile long maxTimestamp = -1;
    private int bytesSinceIndexEntry;
    private int indexIntervalBytes = 4096;
    private long firstAppendMs = -1;
    private long truncatedBytes;

    private LogSegment(Path logFile, int leaderEpoch, long baseOffset, FileChannel channel) {
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

    static LogSegment create(Path dir, int leaderEpoch, long baseOffset, int indexIntervalBytes) throws IOException {
        Path log = dir.resolve(fileName(leaderEpoch, baseOffset));
        FileChannel ch = FileChannel.open(log, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
        LogSegment s = new LogSegment(log, leaderEpoch, baseOffset, ch);
        s.indexIntervalBytes = indexIntervalBytes;
        s.offsetIndex = OffsetIndex.create(s.indexFile());
        s.timeIndex = OffsetIndex.create(s.timeIndexFile());
        return s;
    }

    /**
     * Opens an existing segment. With {@code recover}, scans every batch, truncates at the first
     * one that is torn, corrupt or out of sequence, and rebuilds both indexes; without, trusts the
     * bytes (they are below the recovery checkpoint) and loads the indexes, rebuilding any that
     * disagree with the log.
     */
    static LogSegment open(Path log, boolean recover, int indexIntervalBytes) throws IOException {
        long[] parsed = parseName(log.getFileName().toString());
        if (parsed == null) {
            throw new IOException("not a segment file: " + log);
        }
        FileChannel ch = FileChannel.open(log, StandardOpenOption.READ, StandardOpenOption.WRITE);
        LogSegment s = new LogSegment(log, (int) parsed[0], parsed[1], ch);
        s.indexIntervalBytes = indexIntervalBytes;
        int fileSize = (int) Math.min(Integer.MAX_VALUE, ch.size());
        if (!recover) {
            s.offsetIndex = OffsetIndex.load(s.indexFile(), fileSize, s.baseOffset);
            s.timeIndex = OffsetIndex.load(s.timeIndexFile(), fileSize, Long.MIN_VALUE);
        }
        if (recover || s.offsetIndex == null || s.timeIndex == null) {
            s.rebuild(fileSize);
        } else {
            s.size = fileSize;
            s.scanTailOffsets();
        }
        return s;
    }

    /** Largest batch recovery accepts: no valid batch exceeds a request, and a garbage length must not allocate gigabytes. */
    static final int MAX_BATCH_BYTES = 128 * 1024 * 1024;

    private void rebuild(int fileSize) throws IOException {
        if (offsetIndex != null) {
            offsetIndex.close();
        }
        if (timeIndex != null) {
            timeIndex.close();
        }
        offsetIndex = OffsetIndex.create(indexFile());
        timeIndex = OffsetIndex.create(timeIndexFile());
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
                    || BatchHeader.lastOffsetDelta(buf, at) < 0) {
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
            channel.truncate(pos);
        }
    }

    /** Bytes recovery cut off the end of this segment when it opened (torn or corrupt tail). */
    long truncatedBytes() {
        return truncatedBytes;
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

    /** Finds nextOffset and max timestamp when the index was trusted: scan from the last index entry. */
    private void scanTailOffsets() throws IOException {
        int pos = offsetIndex.floorPosition(Long.MAX_VALUE);
        ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
        while (pos + BatchHeader.SIZE <= size) {
            header.clear();
            readFully(header, pos);
            header.flip();
            nextOffset = BatchHeader.lastOffset(header, 0) + 1;
            pos += BatchHeader.totalSize(header, 0);
        }
        // The max timestamp is needed for ListOffsets MAX_TIMESTAMP and segment.ms; scan the time index tail batch.
        int tpos = timeIndex.floorPosition(Long.MAX_VALUE);
        if (timeIndex.entries() > 0) {
            header.clear();
            readFully(header, tpos);
            header.flip();
            maxTimestamp = BatchHeader.maxTimestamp(header, 0);
        }
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


    Path indexFile() {
        return logFile.resolveSibling(logFile.getFileName().toString().replace(".log", ".index"));
    }

    Path timeIndexFile() {
        return logFile.resolveSibling(logFile.getFileName().toString().replace(".log", ".timeindex"));
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
        offsetIndex.close();
        timeIndex.close();
        channel.close();
    }

    void deleteFiles() throws IOException {
        close();
        Files.deleteIfExists(logFile);
        Files.deleteIfExists(indexFile());
        Files.deleteIfExists(timeIndexFile());
    }
}
