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
 * <p>Not thread-safe: one per cleaner thread.
 */
final class OffsetMap {
    private static final int HASH = 16;
    private static final int ENTRY = HASH + 8;

    private final ByteBuffer bytes;
    private final int slots;
    private final MessageDigest md5;
    private final byte[] digest = new byte[HASH];
    private final byte[] probe = new byte[HASH];
    private int entries;
    /** Whether any slot may be non-zero: a fresh or just-cleared map need not be zeroed again (128 MiB by default). */
    private boolean used;
    private long latestOffset = -1;
    private long lookups;
    private long probes;

    OffsetMap(int memory) {
        this.slots = Math.max(1, memory / ENTRY);
        this.bytes = ByteBuffer.allocate(slots * ENTRY);
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
            Arrays.fill(bytes.array(), (byte) 0);
            used = false;
        }
        entries = 0;
        latestOffset = -1;
        lookups = 0;
        probes = 0;
    }

    /** Records {@code offset} as the latest for {@code key} (positioned to limit; not consumed). */
    void put(ByteBuffer key, long offset) {
        hash(key);
        for (int attempt = 0; attempt < slots + HASH; attempt++) {
            int pos = position(attempt);
            bytes.position(pos);
            bytes.get(probe);
            if (Arrays.equals(probe, digest)) {
                bytes.putLong(pos + HASH, offset);
                latestOffset = Math.max(latestOffset, offset);
                return;
            }
            if (isEmpty(probe)) {
                if (entries >= slots) {
                    break;
                }
                bytes.position(pos);
                bytes.put(digest);
                bytes.putLong(offset);
                entries++;
                used = true;
                latestOffset = Math.max(latestOffset, offset);
                return;
            }
        }
        throw new IllegalStateException("offset map is full: " + slots + " slots");
    }

    /** The latest offset recorded for {@code key}, or -1. */
    long get(ByteBuffer key) {
        hash(key);
        lookups++;
        for (int attempt = 0; attempt < slots + HASH; attempt++) {
            probes++;
            int pos = position(attempt);
            bytes.position(pos);
            bytes.get(probe);
            if (isEmpty(probe)) {
                return -1;
            }
            if (Arrays.equals(probe, digest)) {
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
        md5.update(key.duplicate());
        try {
            md5.digest(digest, 0, HASH);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException(e);
        }
        if (isEmpty(digest)) {
            digest[HASH - 1] = 1;
        }
    }

    /** Apache's probing: the first 4 digest bytes, then the next ones shifted, then linear from there. */
    private int position(int attempt) {
        int h = attempt < HASH - 3 ? intAt(attempt) : intAt(HASH - 4) + attempt - (HASH - 4);
        return Math.floorMod(h, slots) * ENTRY;
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
