package dev.kaas.broker.storage;

import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A sparse index of one segment: entries of (key, position) with strictly increasing keys. Used as
 * the offset index (key = absolute offset of a batch's first record, value = byte position of the
 * batch) and as the time index (key = max timestamp so far, value = position of the batch that
 * raised it; timestamps are not unique per batch, only increases are recorded).
 *
 * <p>File format ({@code .index} / {@code .timeindex}): a sequence of 12-byte entries
 * {@code key:int64, position:int32}, big-endian. Entries live in memory; the file is written
 * whole (and forced) when the segment is sealed or closed ({@link #persist}), never on the append
 * path: it is derivable from the log and rebuilt when it is missing or disagrees with it. Holding no file open is what keeps a
 * partition at one descriptor per segment, as Apache (issue: descriptors per partition).
 *
 * <p>Threading: one appender (the partition's serial executor), any number of concurrent readers.
 * Entries are published by a volatile size written after the entry, so a reader sees a
 * consistent prefix.
 */
final class OffsetIndex implements AutoCloseable {
    static final int ENTRY = 12;

    private record Entries(long[] keys, int[] positions) {
    }

    private final Disk disk;
    private volatile Path file;
    private volatile Entries entries = new Entries(new long[64], new int[64]);
    private volatile int size;
    private int persisted = -1;

    private OffsetIndex(Disk disk, Path file) {
        this.disk = disk;
        this.file = file;
    }

    /** A new, empty index; its file is written at the first {@link #persist}. */
    static OffsetIndex create(Disk disk, Path file) {
        return new OffsetIndex(disk, file);
    }

    /**
     * Loads an index file; returns null when it is missing or inconsistent (not a whole number of
     * entries, keys not increasing, a position at or past {@code logSize}), so the caller rebuilds.
     */
    static OffsetIndex load(Disk disk, Path file, int logSize, long minKey) throws IOException {
        if (!Files.exists(file)) {
            return null;
        }
        byte[] bytes = Files.readAllBytes(file);
        if (bytes.length % ENTRY != 0) {
            return null;
        }
        OffsetIndex idx = new OffsetIndex(disk, file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long lastKey = Long.MIN_VALUE;
        int lastPos = -1;
        while (b.hasRemaining()) {
            long key = b.getLong();
            int pos = b.getInt();
            if (key <= lastKey || pos <= lastPos || pos >= logSize || key < minKey) {
                return null;
            }
            idx.addInMemory(key, pos);
            lastKey = key;
            lastPos = pos;
        }
        idx.persisted = idx.size;
        return idx;
    }

    /** The file was renamed (a cleaned segment moved into place). */
    void moveTo(Path renamed) {
        this.file = renamed;
    }

    void add(long key, int position) {
        int n = size;
        if (n > 0 && key <= entries.keys()[n - 1]) {
            return;
        }
        addInMemory(key, position);
    }

    /**
     * Writes the whole index to its file when it changed since the last write, and forces it: once a
     * segment is sealed, a power loss leaves its index whole or missing (then rebuilt), never short.
     */
    void persist() throws IOException {
        int n = size;
        if (n == persisted) {
            return;
        }
        Entries e = entries;
        ByteBuffer b = ByteBuffer.allocate(n * ENTRY);
        for (int i = 0; i < n; i++) {
            b.putLong(e.keys()[i]).putInt(e.positions()[i]);
        }
        b.flip();
        try (FileChannel ch = disk.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        persisted = n;
    }

    private void addInMemory(long key, int position) {
        int n = size;
        Entries e = entries;
        if (n == e.keys().length) {
            long[] k = java.util.Arrays.copyOf(e.keys(), n * 2);
            int[] p = java.util.Arrays.copyOf(e.positions(), n * 2);
            e = new Entries(k, p);
            entries = e;
        }
        e.keys()[n] = key;
        e.positions()[n] = position;
        size = n + 1;
    }

    /** Index of the last entry whose key is {@code <= key}, or -1 when there is none. */
    private int floor(Entries e, int n, long key) {
        int lo = 0;
        int hi = n - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (e.keys()[mid] <= key) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Position of the last entry whose key is {@code <= key}, or 0 when there is none. */
    int floorPosition(long key) {
        // size before entries: a grow publishes the new arrays first, so the size read is never past them.
        int n = size;
        Entries e = entries;
        int found = floor(e, n, key);
        return found < 0 ? 0 : e.positions()[found];
    }

    /** Position of the first entry whose key is {@code >= key}'s floor: for the time index, where to start scanning. */
    int positionBefore(long key) {
        int n = size;
        Entries e = entries;
        int found = -1;
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (e.keys()[mid] < key) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? 0 : e.positions()[found];
    }

    /** Key of the last entry whose key is {@code <= key}, or {@code Long.MIN_VALUE} when there is none. */
    long floorKey(long key) {
        int n = size;
        Entries e = entries;
        int found = floor(e, n, key);
        return found < 0 ? Long.MIN_VALUE : e.keys()[found];
    }

    int entries() {
        return size;
    }



    @Override
    public void close() throws IOException {
        persist();
    }
}
