package dev.kaas.broker.storage;

import java.nio.ByteBuffer;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.record.ConvertedRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordValidationStats;
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

    /**
     * Up-converts a legacy message set (each record's CRC checked) into one v2 batch with the
     * wrapper's compression, with Apache's LogValidator's conversion stats: the records converted,
     * and as temporary memory the decompressed records of a compressed set plus the new batch's
     * uncompressed bytes.
     */
    public static ConvertedRecords<MemoryRecords> upConvert(MemoryRecords legacy) {
        long started = System.nanoTime();
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
        long decompressed = 0;
        for (RecordBatch b : legacy.batches()) {
            for (Record r : b) {
                r.ensureValid();
                if (b.isCompressed()) {
                    decompressed += r.sizeInBytes();
                }
                long ts = b.magic() == RecordBatch.MAGIC_VALUE_V0 ? RecordBatch.NO_TIMESTAMP : r.timestamp();
                builder.append(ts, r.key(), r.value());
            }
        }
        MemoryRecords v2 = builder.build();
        return new ConvertedRecords<>(v2, new RecordValidationStats(decompressed + builder.uncompressedBytesWritten(), builder.numRecords(),
                System.nanoTime() - started));
    }

    /** The magic a Fetch version can read: v0–1 magic 0, v2–3 magic 1, later v2. */
    public static byte magicForFetchVersion(short version) {
        return version <= 1 ? RecordBatch.MAGIC_VALUE_V0 : version <= 3 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.MAGIC_VALUE_V2;
    }

    /**
     * {@code records} in message format {@code magic}, with what the conversion cost as Apache's
     * RecordsUtil counts it (records converted, temporary bytes, time); the records themselves and
     * {@link RecordValidationStats#EMPTY} when nothing needed converting.
     */
    public static ConvertedRecords<MemoryRecords> downConvert(MemoryRecords records, byte magic, long firstOffset) {
        if (magic >= RecordBatch.MAGIC_VALUE_V2 || records.sizeInBytes() == 0) {
            return new ConvertedRecords<>(records, RecordValidationStats.EMPTY);
        }
        ConvertedRecords<?> converted = records.downConvert(magic, firstOffset, Time.SYSTEM);
        return new ConvertedRecords<>((MemoryRecords) converted.records(), converted.recordConversionStats());
    }
}
