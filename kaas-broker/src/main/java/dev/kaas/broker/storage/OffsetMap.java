package dev.kaas.broker.storage;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The cleaner's key → latest offset map, as Apache's {@code SkimpyOffsetMap}: a fixed block of
 * memory ({@code log.cleaner.dedupe.buffer.size} shared by the cleaner threads) holding, per key,
 * its MD5 digest and the offset of its latest record, with open addressing. Keys are never
 * stored, so the memory a pass needs does not depend on key sizes; two keys with one digest
 * (2^-128) would lose the older one's records, as in Apache.
 *
 * <p>Entry layout: 16-byte digest, 8-byte offset. An all-zero digest marks an empty slot (a key
 * whose digest is all zero is given one set bit, which costs at most a second such collision).
 *
 * <p>Beyond Apache: the map also remembers, for the offsets of a range the pass names
 * ({@link #plan}), which were put and which of those are still their key's latest (a put that
 * replaces an offset clears it). The copy then decides a record of that range with a bit test
 * ({@link #latest}) instead of a second digest and a lookup: each lookup in a map of 128 MiB is a
 * cache and TLB miss, and the two digests and lookups per record were most of a pass's CPU
 * (kaas-bench's {@code CleanerBench}, profiled). Clearing zeroes only the slots used when they
 * were few, rather than all 128 MiB.
 *
 * <p>Not thread-safe: one per cleaner thread.
 */
final class OffsetMap {
    private static final int HASH = 16;
    private static final int ENTRY = HASH + 8;
    /** Offsets a pass may track: two bits each, 2 MiB at most. */
    static final int TRACKED_MAX = 1 << 23;
    /** Fewest slots a planned pass uses. */
    private static final int MIN_ACTIVE = 1 << 12;
    /** Slots remembered for {@link #clear}: past this many it zeroes the whole map. */
    private static final int FILLED_MAX = 1 << 20;

    private final ByteBuffer bytes;
    private final int slots;
    private final MessageDigest md5;
    private final byte[] digest = new byte[HASH];
    private int entries;
    /** Whether any slot may be non-zero: a fresh or just-cleared map need not be zeroed again (128 MiB by default). */
    private boolean used;
    private long latestOffset = -1;
    private long lookups;
    private long probes;
    /** Slots in use this pass: a map sized for the pass probes less memory (fewer cache and TLB misses). */
    private int active;
    private long trackedFrom;
    private int tracked;
    /** Per tracked offset: put into the map, and still its key's latest. */
    private long[] putBits = new long[0];
    private long[] latestBits = new long[0];
    /** Set when a key's offsets came out of order: {@link #latest} then answers nothing. */
    private boolean outOfOrder;
    /** Positions of the slots filled since the last clear, while they fit. */
    private int[] filled = new int[1024];
    private int filledCount;
    private boolean filledOverflow;

    OffsetMap(int memory) {
        this.slots = Math.max(1, memory / ENTRY);
        this.bytes = ByteBuffer.allocate(slots * ENTRY);
        this.active = slots;
        try {
            this.md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no MD5", e);
        }
    }

    int slots() {
        return slots;
    }

    int size() {
        return entries;
    }

    /** The highest offset offered to the map (Apache's {@code latestOffset}); -1 when empty. */
    long latestOffset() {
        return latestOffset;
    }

    void updateLatestOffset(long offset) {
        latestOffset = Math.max(latestOffset, offset);
    }

    /** Share of the slots in use. */
    double utilization() {
        return (double) entries / slots;
    }

    void clear() {
        if (used) {
            if (filledOverflow) {
                Arrays.fill(bytes.array(), (byte) 0);
            } else {
                for (int i = 0; i < filledCount; i++) {
                    // A slot is empty when its digest is: the offset after it is written with the next digest.
                    Arrays.fill(bytes.array(), filled[i], filled[i] + HASH, (byte) 0);
                }
            }
            used = false;
        }
        filledCount = 0;
        filledOverflow = false;
        entries = 0;
        latestOffset = -1;
        lookups = 0;
        probes = 0;
        track(0, 0);
        active = slots;
    }

    /**
     * Empties the map for a pass that puts only offsets in {@code [from, to)}: remembers, for the
     * first {@link #TRACKED_MAX} of them, which are put and which of those stay their key's latest,
     * and uses only as many slots as twice their number (a map at most half full), so a pass over a
     * few hundred thousand records probes a few megabytes rather than all 128 MiB.
     */
    void plan(long from, long to) {
        clear();
        track(from, to);
        active = (int) Math.max(Math.min(slots, MIN_ACTIVE), Math.min(slots, 2 * Math.max(0, to - from)));
    }

    /** The slots this pass uses: what {@link #plan} chose, all of them otherwise. */
    int capacity() {
        return active;
    }

    private void track(long from, long to) {
        int n = (int) Math.max(0, Math.min(TRACKED_MAX, to - from));
        int words = (n + 63) >>> 6;
        if (putBits.length < words) {
            putBits = new long[words];
            latestBits = new long[words];
        } else {
            Arrays.fill(putBits, 0, Math.min(putBits.length, (tracked + 63) >>> 6), 0L);
            Arrays.fill(latestBits, 0, Math.min(latestBits.length, (tracked + 63) >>> 6), 0L);
        }
        trackedFrom = from;
        tracked = n;
        outOfOrder = false;
    }

    /**
     * Whether {@code offset} is its key's latest, when the map knows without the key: 1 yes, 0 no
     * (a later record of its key was put), -1 unknown (not tracked, never put, or some key's
     * offsets were put out of order). Exactly {@code offset >= get(key)} whenever it answers.
     */
    int latest(long offset) {
        long i = offset - trackedFrom;
        if (outOfOrder || i < 0 || i >= tracked || (putBits[(int) (i >>> 6)] & 1L << i) == 0) {
            return -1;
        }
        return (latestBits[(int) (i >>> 6)] & 1L << i) != 0 ? 1 : 0;
    }

    private void tracked(long offset, long replaced) {
        if (replaced >= offset) {
            // Offsets of one key out of order (a corrupt segment): the bits could no longer answer as get() does.
            outOfOrder = true;
            return;
        }
        long i = offset - trackedFrom;
        if (i >= 0 && i < tracked) {
            putBits[(int) (i >>> 6)] |= 1L << i;
            latestBits[(int) (i >>> 6)] |= 1L << i;
        }
        long r = replaced - trackedFrom;
        if (replaced >= 0 && r >= 0 && r < tracked) {
            latestBits[(int) (r >>> 6)] &= ~(1L << r);
        }
    }

    /** Records {@code offset} as the latest for {@code key} (positioned to limit; not consumed). */
    void put(ByteBuffer key, long offset) {
        hash(key);
        put(offset);
    }

    /** Records {@code offset} as the latest for the key in {@code key[from, from + length)}. */
    void put(byte[] key, int from, int length, long offset) {
        hash(key, from, length);
        put(offset);
    }

    /** The latest offset recorded for {@code key}, or -1. */
    long get(ByteBuffer key) {
        hash(key);
        return get();
    }

    /** The latest offset recorded for the key in {@code key[from, from + length)}, or -1. */
    long get(byte[] key, int from, int length) {
        hash(key, from, length);
        return get();
    }

    /** Puts the digest last hashed. */
    private void put(long offset) {
        byte[] table = bytes.array();
        for (int attempt = 0; attempt < active + HASH; attempt++) {
            int pos = position(attempt);
            if (Arrays.equals(table, pos, pos + HASH, digest, 0, HASH)) {
                tracked(offset, bytes.getLong(pos + HASH));
                bytes.putLong(pos + HASH, offset);
                latestOffset = Math.max(latestOffset, offset);
                return;
            }
            if (emptyAt(pos)) {
                if (entries >= active) {
                    break;
                }
                System.arraycopy(digest, 0, table, pos, HASH);
                bytes.putLong(pos + HASH, offset);
                entries++;
                used = true;
                remember(pos);
                tracked(offset, -1);
                latestOffset = Math.max(latestOffset, offset);
                return;
            }
        }
        throw new IllegalStateException("offset map is full: " + active + " slots");
    }

    private void remember(int pos) {
        if (filledOverflow) {
            return;
        }
        if (filledCount == filled.length) {
            if (filled.length >= FILLED_MAX) {
                filledOverflow = true;
                return;
            }
            filled = Arrays.copyOf(filled, filled.length * 2);
        }
        filled[filledCount++] = pos;
    }

    /** Looks up the digest last hashed. */
    private long get() {
        byte[] table = bytes.array();
        lookups++;
        for (int attempt = 0; attempt < active + HASH; attempt++) {
            probes++;
            int pos = position(attempt);
            if (emptyAt(pos)) {
                return -1;
            }
            if (Arrays.equals(table, pos, pos + HASH, digest, 0, HASH)) {
                return bytes.getLong(pos + HASH);
            }
        }
        return -1;
    }

    /** Mean slots read per lookup (Apache reports it as the collision rate). */
    double probesPerLookup() {
        return lookups == 0 ? 0 : (double) probes / lookups;
    }

    private void hash(ByteBuffer key) {
        if (key.hasArray()) {
            hash(key.array(), key.arrayOffset() + key.position(), key.remaining());
        } else {
            md5.update(key.duplicate());
            digest();
        }
    }

    private void hash(byte[] key, int from, int length) {
        md5.update(key, from, length);
        digest();
    }

    private void digest() {
        try {
            md5.digest(digest, 0, HASH);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException(e);
        }
        if (isEmpty(digest)) {
            digest[HASH - 1] = 1;
        }
    }

    private boolean emptyAt(int pos) {
        return bytes.getLong(pos) == 0 && bytes.getLong(pos + 8) == 0;
    }

    /** Apache's probing: the first 4 digest bytes, then the next ones shifted, then linear from there. */
    private int position(int attempt) {
        int h = attempt < HASH - 3 ? intAt(attempt) : intAt(HASH - 4) + attempt - (HASH - 4);
        return Math.floorMod(h, active) * ENTRY;
    }

    private int intAt(int i) {
        return (digest[i] & 0xff) << 24 | (digest[i + 1] & 0xff) << 16 | (digest[i + 2] & 0xff) << 8 | (digest[i + 3] & 0xff);
    }

    private static boolean isEmpty(byte[] d) {
        for (byte b : d) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
