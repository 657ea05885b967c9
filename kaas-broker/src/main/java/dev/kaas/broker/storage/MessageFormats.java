package dev.kaas.broker.storage;

import java.nio.ByteBuffer;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;

/**
 * The pre-0.11 message formats, as Apache 3.7 serves them: Produce v0–2 may carry magic 0/1
 * message sets, which are converted to one v2 batch before validation; Fetch v0–3 clients get
 * v2 batches down-converted to the magic they understand. Both happen off the event loop, and
 * only for those old clients: the v2 hot path never comes here.
 */
public final class MessageFormats {
    private MessageFormats() {
    }

    public static boolean hasLegacyBatches(MemoryRecords records) {
        for (RecordBatch b : records.batches()) {
            if (b.magic() < RecordBatch.MAGIC_VALUE_V2) {
                return true;
            }
        }
        return false;
    }

    /** Up-converts a legacy message set (each record's CRC checked) into one v2 batch with the wrapper's compression. */
    public static MemoryRecords upConvert(MemoryRecords legacy) {
        var compression = org.apache.kafka.common.record.CompressionType.NONE;
        int estimate = 64;
        for (RecordBatch b : legacy.batches()) {
            if (b.magic() >= RecordBatch.MAGIC_VALUE_V2) {
                throw new InvalidRecordException("A message set mixes v2 batches with legacy messages");
            }
            b.ensureValid();
            compression = b.compressionType();
            estimate += b.sizeInBytes() * 2;
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(estimate), RecordBatch.MAGIC_VALUE_V2,
                compression, TimestampType.CREATE_TIME, 0L);
        for (RecordBatch b : legacy.batches()) {
            for (Record r : b) {
                r.ensureValid();
                long ts = b.magic() == RecordBatch.MAGIC_VALUE_V0 ? RecordBatch.NO_TIMESTAMP : r.timestamp();
                builder.append(ts, r.key(), r.value());
            }
        }
        return builder.build();
    }

    /** The magic a Fetch version can read: v0–1 magic 0, v2–3 magic 1, later v2. */
    public static byte magicForFetchVersion(short version) {
        return version <= 1 ? RecordBatch.MAGIC_VALUE_V0 : version <= 3 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.MAGIC_VALUE_V2;
    }

    public static MemoryRecords downConvert(MemoryRecords records, byte magic, long firstOffset) {
        if (magic >= RecordBatch.MAGIC_VALUE_V2 || records.sizeInBytes() == 0) {
            return records;
        }
        return (MemoryRecords) records.downConvert(magic, firstOffset, Time.SYSTEM).records();
    }
}
