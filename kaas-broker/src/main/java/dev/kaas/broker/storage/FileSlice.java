package dev.kaas.broker.storage;

import java.nio.channels.FileChannel;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.RecordsSend;

/**
 * Whole record batches of a segment file, by position, that a Fetch response sends straight from
 * the file to the socket (zero-copy) instead of through the heap. The bytes below the high
 * watermark never change, so the region stays valid while the segment is open.
 */
public record FileSlice(FileChannel channel, long position, int size) implements BaseRecords {
    @Override
    public int sizeInBytes() {
        return size;
    }

    /** kaas writes responses through {@code Frames}, never through a kafka-clients {@code Send}. */
    @Override
    public RecordsSend<? extends BaseRecords> toSend() {
        throw new UnsupportedOperationException("FileSlice is written by the broker's own encoder");
    }
}
