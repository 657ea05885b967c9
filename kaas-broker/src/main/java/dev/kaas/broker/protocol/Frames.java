package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/** Response framing: size prefix, the header version the API and version demand, then the body. */
public final class Frames {
    private Frames() {
    }

    /**
     * Encodes a response as parts to write in order: {@link ByteBuffer}s (the encoded fields, and
     * in-memory records as they are), and the {@link FileSlice}s of record batches that go from
     * segment files to the socket without a copy. Concatenated, the parts are the response frame:
     * size, header in the version the API demands, body.
     */
    public static List<Object> encodeResponseParts(ApiKeys key, short version, int correlationId, ApiMessage body) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        short headerVersion = key.responseHeaderVersion(version);
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
        int headerSize = header.size(cache, headerVersion);
        MessageSizeAccumulator size = new MessageSizeAccumulator();
        body.addSize(size, cache, version);
        ByteBuffer heap = ByteBuffer.allocate(4 + headerSize + size.sizeExcludingZeroCopy());
        heap.putInt(headerSize + size.totalSize());
        PartsWriter out = new PartsWriter(heap);
        header.write(out, cache, headerVersion);
        body.write(out, cache, version);
        return out.finish();
    }

    /** Writes fields into one heap buffer, as {@link ByteBufferAccessor}, but cuts a separate part for each records field. */
    private static final class PartsWriter extends ByteBufferAccessor {
        private final ByteBuffer buf;
        private final List<Object> parts = new ArrayList<>();
        private int cut;

        PartsWriter(ByteBuffer buf) {
            super(buf);
            this.buf = buf;
        }

        @Override
        public void writeRecords(BaseRecords records) {
            // The generated code wrote the length already. Records count as zero-copy bytes in the
            // size, so they are never copied into the heap buffer.
            cutHeap();
            if (records.sizeInBytes() == 0) {
                return;
            }
            if (records instanceof FileSlice slice) {
                parts.add(slice);
            } else if (records instanceof MemoryRecords memory) {
                parts.add(memory.buffer().duplicate());
            } else {
                throw new IllegalArgumentException("unsupported records " + records.getClass());
            }
        }

        private void cutHeap() {
            if (buf.position() > cut) {
                ByteBuffer part = buf.duplicate();
                part.position(cut).limit(buf.position());
                parts.add(part.slice());
                cut = buf.position();
            }
        }

        List<Object> finish() {
            cutHeap();
            return parts;
        }
    }
}
