package dev.kaas.broker.storage;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The aborted transactions whose ABORT marker lies in one segment ({@code .txnindex}, Apache's
 * {@code TransactionIndex}): what a READ_COMMITTED fetch returns as {@code aborted_transactions}
 * so the consumer drops those producers' records between {@code firstOffset} and the marker.
 *
 * <p>File format, Apache's {@code AbortedTxn} layout: entries of 34 bytes, big-endian,
 * {@code version:int16 (0), producerId:int64, firstOffset:int64, lastOffset:int64,
 * lastStableOffset:int64}, in marker order. {@code lastOffset} is the marker's offset and
 * {@code lastStableOffset} the partition's LSO right after it (a fetch bounded below it needs no
 * later entry).
 *
 * <p>Durability: entries live in memory and the file is written whole (temp, fsync, rename) when
 * the segment is sealed or the log closed, never on the append path and never holding a
 * descriptor. After a crash, the entries from the producer-state snapshot's offset on are rebuilt
 * from the markers in the log ({@link #truncateFrom}, then re-added), and everything below that
 * offset was persisted by the close that wrote the snapshot or the seal before the recovery
 * checkpoint moved past the segment.
 *
 * <p>Threading: one writer (the partition's serial executor), concurrent readers (fetches).
 */
final class TxnIndex {
    static final int ENTRY = 34;

    record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {
    }

    private final Disk disk;
    private volatile Path file;
    private final CopyOnWriteArrayList<AbortedTxn> entries = new CopyOnWriteArrayList<>();
    private boolean dirty;

    private TxnIndex(Disk disk, Path file) {
        this.disk = disk;
        this.file = file;
    }

    /** The file was renamed (a cleaned segment moved into place). */
    void moveTo(Path renamed) {
        this.file = renamed;
    }

    static TxnIndex create(Disk disk, Path file) {
        return new TxnIndex(disk, file);
    }

    /**
     * Loads the file, keeping the whole, version-0, in-order entries whose marker lies below
     * {@code endOffset} (what the segment still holds); a torn or foreign tail is dropped and the
     * file rewritten at the next persist.
     */
    static TxnIndex load(Disk disk, Path file, long endOffset) throws IOException {
        TxnIndex index = new TxnIndex(disk, file);
        if (!Files.exists(file)) {
            return index;
        }
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long last = -1;
        while (b.remaining() >= ENTRY) {
            short version = b.getShort();
            AbortedTxn t = new AbortedTxn(b.getLong(), b.getLong(), b.getLong(), b.getLong());
            if (version != 0 || t.lastOffset() >= endOffset || t.lastOffset() <= last || t.firstOffset() > t.lastOffset()) {
                index.dirty = true;
                break;
            }
            index.entries.add(t);
            last = t.lastOffset();
        }
        index.dirty |= bytes.length != index.entries.size() * ENTRY;
        return index;
    }

    /** Records an abort; a marker at or below the last entry's is one recovery already saw, and is skipped. */
    void add(AbortedTxn t) {
        if (!entries.isEmpty() && entries.get(entries.size() - 1).lastOffset() >= t.lastOffset()) {
            return;
        }
        entries.add(t);
        dirty = true;
    }

    /** Drops the entries whose marker is at or past {@code offset}: recovery re-adds them from the log. */
    void truncateFrom(long offset) {
        if (entries.removeIf(t -> t.lastOffset() >= offset)) {
            dirty = true;
        }
    }

    /**
     * Adds to {@code out} the aborted transactions that overlap {@code [fetchOffset, upperBound)}
     * (Apache's {@code collectAbortedTxns}).
     *
     * @return true when an entry's stable offset reaches {@code upperBound}: no later segment can add one
     */
    boolean collect(long fetchOffset, long upperBound, List<AbortedTxn> out) {
        for (AbortedTxn t : entries) {
            if (t.lastOffset() >= fetchOffset && t.firstOffset() < upperBound) {
                out.add(t);
            }
            if (t.lastStableOffset() >= upperBound) {
                return true;
            }
        }
        return false;
    }

    List<AbortedTxn> entries() {
        return List.copyOf(entries);
    }

    /** Writes the file whole when it changed: temp, fsync, rename, directory fsync. */
    void persist() throws IOException {
        if (!dirty) {
            return;
        }
        List<AbortedTxn> now = new ArrayList<>(entries);
        if (now.isEmpty()) {
            disk.delete(file);
            disk.fsyncDirectory(file.toAbsolutePath().getParent());
        } else {
            ByteBuffer b = ByteBuffer.allocate(now.size() * ENTRY);
            for (AbortedTxn t : now) {
                b.putShort((short) 0).putLong(t.producerId()).putLong(t.firstOffset()).putLong(t.lastOffset())
                        .putLong(t.lastStableOffset());
            }
            AtomicFiles.write(disk, file, b.array());
        }
        dirty = false;
    }

    void delete() throws IOException {
        disk.delete(file);
    }
}
