package dev.kaas.broker.storage;

import java.nio.ByteBuffer;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Walks the records of an uncompressed v2 batch where they lie, reading only what compaction
 * decides on (offset, timestamp, key, whether a value follows) and where each record's key, value
 * and headers start, so the cleaner can keep a record by copying those bytes (it walks the headers'
 * lengths, never their contents). kafka-clients'
 * iterator decodes every record into an object with buffers for its key, value and headers; the
 * cleaner reads every record twice per pass, and once the key lookups were made cheap that
 * decoding was about a fifth of a pass's CPU (kaas-bench's {@code CleanerBench}, profiled).
 *
 * <p>The bytes come from a segment and are checked as untrusted, as kafka-clients checks them:
 * every length (record, key, value, header count, header key and value) against what remains of
 * its record and batch, every varint's length, the record filled exactly, the batch's record count
 * and its records filling it exactly. A batch that fails is corrupt ({@link InvalidRecordException},
 * as kafka-clients' iterator throws).
 *
 * <p>Not thread-safe: one per cleaner.
 */
final class RecordScan {
    private static final int BASE_TIMESTAMP_OFFSET = 27;

    private byte[] bytes;
    private int position;
    private int end;
    private int left;
    private long baseOffset;
    private long baseTimestamp;

    /** The current record: where it starts, where its key length starts, where it ends (array indices). */
    int recordStart;
    int tailStart;
    int recordEnd;
    /** -1 for a record without a key. */
    int keyLength;
    int keyStart;
    boolean hasValue;
    long offset;
    long timestamp;

    /** Whether {@link #open} walks {@code batch}: uncompressed data batches of magic 2. */
    static boolean walkable(RecordBatch batch) {
        return batch.magic() >= RecordBatch.MAGIC_VALUE_V2 && batch.compressionType() == CompressionType.NONE
                && !batch.isControlBatch();
    }

    /**
     * Starts on {@code batch}, which lies at {@code at} in {@code chunk}'s array (a heap buffer).
     * The batch must be {@link #walkable}.
     */
    void open(ByteBuffer chunk, int at, RecordBatch batch) {
        bytes = chunk.array();
        int start = chunk.arrayOffset() + at;
        position = start + DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
        end = start + batch.sizeInBytes();
        Integer count = batch.countOrNull();
        left = count == null ? -1 : count;
        // Every record takes at least 7 bytes: a count beyond the batch's bytes is corrupt, not an allocation to make.
        if (left < 0 || end > chunk.arrayOffset() + chunk.limit() || position > end || left > end - position) {
            throw corrupt(batch, "a record count of " + left + " or a size of " + batch.sizeInBytes());
        }
        baseOffset = batch.baseOffset();
        baseTimestamp = ByteBuffer.wrap(bytes, start + BASE_TIMESTAMP_OFFSET, 8).getLong();
    }

    /** Moves to the next record; false after the last. */
    boolean next() {
        if (left == 0) {
            if (position != end) {
                throw new InvalidRecordException("Found " + (end - position) + " bytes after the last record of a batch at offset " + baseOffset);
            }
            return false;
        }
        left--;
        recordStart = position;
        int length = varint(end);
        if (length < 1 || length > end - position) {
            throw new InvalidRecordException("Invalid record size " + length + " in the batch at offset " + baseOffset);
        }
        recordEnd = position + length;
        position++; // attributes: none are used
        long timestampDelta = varlong(recordEnd);
        int offsetDelta = varint(recordEnd);
        tailStart = position;
        keyLength = varint(recordEnd);
        if (keyLength < -1 || keyLength > recordEnd - position) {
            throw new InvalidRecordException("Invalid key size " + keyLength + " in the batch at offset " + baseOffset);
        }
        keyStart = position;
        position += Math.max(0, keyLength);
        int valueLength = varint(recordEnd);
        if (valueLength < -1 || valueLength > recordEnd - position) {
            throw new InvalidRecordException("Invalid value size " + valueLength + " in the batch at offset " + baseOffset);
        }
        hasValue = valueLength >= 0;
        position += Math.max(0, valueLength);
        skipHeaders();
        offset = baseOffset + offsetDelta;
        timestamp = baseTimestamp + timestampDelta;
        return true;
    }

    /** The headers are copied, never decoded, but they must fill the record exactly, as kafka-clients requires. */
    private void skipHeaders() {
        int count = varint(recordEnd);
        if (count < 0 || count > recordEnd - position) {
            throw new InvalidRecordException("Found invalid number of record headers " + count + " in the batch at offset " + baseOffset);
        }
        for (int i = 0; i < count; i++) {
            int keyLength = varint(recordEnd);
            if (keyLength < 0 || keyLength > recordEnd - position) {
                throw new InvalidRecordException("Invalid header key size " + keyLength + " in the batch at offset " + baseOffset);
            }
            position += keyLength;
            int valueLength = varint(recordEnd);
            if (valueLength < -1 || valueLength > recordEnd - position) {
                throw new InvalidRecordException("Invalid header value size " + valueLength + " in the batch at offset " + baseOffset);
            }
            position += Math.max(0, valueLength);
        }
        if (position != recordEnd) {
            throw new InvalidRecordException("Invalid record size: " + (recordEnd - position) + " bytes left after the headers of a record in the batch at offset " + baseOffset);
        }
    }

    byte[] bytes() {
        return bytes;
    }

    /** Kafka's zig-zag varint, at most 5 bytes, not past {@code limit}. */
    private int varint(int limit) {
        int raw = 0;
        for (int shift = 0; ; shift += 7) {
            if (position >= limit || shift > 28) {
                throw new InvalidRecordException("Invalid varint in the batch at offset " + baseOffset);
            }
            int b = bytes[position++];
            raw |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
    }

    /** Kafka's zig-zag varlong, at most 10 bytes, not past {@code limit}. */
    private long varlong(int limit) {
        long raw = 0;
        for (int shift = 0; ; shift += 7) {
            if (position >= limit || shift > 63) {
                throw new InvalidRecordException("Invalid varlong in the batch at offset " + baseOffset);
            }
            long b = bytes[position++];
            raw |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
    }

    private static InvalidRecordException corrupt(RecordBatch batch, String what) {
        return new InvalidRecordException("Invalid batch at offset " + batch.baseOffset() + ": " + what);
    }
}
