package dev.kaas.broker.storage;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
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

    /**
     * Fills {@code target}'s remaining bytes from the slice, starting {@code offset} bytes into
     * it; a segment that ends first (truncated under the reader) is an {@link EOFException}.
     */
    public void readFully(ByteBuffer target, long offset) throws IOException {
        if (offset < 0 || offset + target.remaining() > size) {
            throw new IllegalArgumentException("reading " + target.remaining() + " bytes at " + offset + " of a " + size + "-byte slice");
        }
        long at = position + offset;
        while (target.hasRemaining()) {
            int r = channel.read(target, at);
            if (r < 0) {
                throw new EOFException("segment ended " + target.remaining() + " bytes before the fetched slice");
            }
            at += r;
        }
    }

    /** kaas writes responses through {@code Frames}, never through a kafka-clients {@code Send}. */
    @Override
    public RecordsSend<? extends BaseRecords> toSend() {
        throw new UnsupportedOperationException("FileSlice is written by the broker's own encoder");
    }
}
