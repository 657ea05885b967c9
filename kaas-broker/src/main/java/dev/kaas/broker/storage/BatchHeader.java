package dev.kaas.broker.storage;

import java.nio.ByteBuffer;
import org.apache.kafka.common.utils.Crc32C;

/**
 * Field access to a v2 record batch header (the layout of {@code DefaultRecordBatch}) in a
 * buffer, by absolute position, without decoding records. The hot path and recovery need only
 * these fields; records stay byte-opaque.
 *
 * <pre>
 * 0 baseOffset:int64 | 8 length:int32 | 12 partitionLeaderEpoch:int32 | 16 magic:int8 |
 * 17 crc:uint32 | 21 attributes:int16 | 23 lastOffsetDelta:int32 | 27 baseTimestamp:int64 |
 * 35 maxTimestamp:int64 | 43 producerId:int64 | 51 producerEpoch:int16 | 53 baseSequence:int32 |
 * 57 recordsCount:int32 | 61 records…
 * </pre>
 */
final class BatchHeader {
    static final int SIZE = 61;
    /** Enough to know a batch's extent: baseOffset and length. */
    static final int LOG_OVERHEAD = 12;
    static final int MAGIC_OFFSET = 16;
    static final int CRC_OFFSET = 17;
    static final int ATTRIBUTES_OFFSET = 21;

    private BatchHeader() {
    }

    static long baseOffset(ByteBuffer b, int at) {
        return b.getLong(at);
    }

    /** Whole batch size including the 12-byte log overhead. */
    static int totalSize(ByteBuffer b, int at) {
        return b.getInt(at + 8) + LOG_OVERHEAD;
    }

    static byte magic(ByteBuffer b, int at) {
        return b.get(at + MAGIC_OFFSET);
    }

    static int lastOffsetDelta(ByteBuffer b, int at) {
        return b.getInt(at + 23);
    }

    static long lastOffset(ByteBuffer b, int at) {
        return baseOffset(b, at) + lastOffsetDelta(b, at);
    }

    static long maxTimestamp(ByteBuffer b, int at) {
        return b.getLong(at + 35);
    }

    static long producerId(ByteBuffer b, int at) {
        return b.getLong(at + 43);
    }

    static short producerEpoch(ByteBuffer b, int at) {
        return b.getShort(at + 51);
    }

    static int baseSequence(ByteBuffer b, int at) {
        return b.getInt(at + 53);
    }


    static short attributes(ByteBuffer b, int at) {
        return b.getShort(at + ATTRIBUTES_OFFSET);
    }

    static boolean isTransactional(ByteBuffer b, int at) {
        return (attributes(b, at) & 0x10) != 0;
    }

    static boolean isControl(ByteBuffer b, int at) {
        return (attributes(b, at) & 0x20) != 0;
    }


    /** True when the stored CRC matches the bytes from attributes to the end of the batch. */
    static boolean crcValid(ByteBuffer b, int at, int totalSize) {
        long stored = Integer.toUnsignedLong(b.getInt(at + CRC_OFFSET));
        long computed = Crc32C.compute(b, at + ATTRIBUTES_OFFSET, totalSize - ATTRIBUTES_OFFSET);
        return stored == computed;
    }
}
