package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/** Response framing: size prefix, the header version the API and version demand, then the body. */
public final class Frames {
    private Frames() {
    }

    /**
     * Encodes a response as parts to write in order: {@link ByteBuffer}s (the encoded fields, and
     * in-memory records as they are), and the {@link FileSlice}s of record batches that go from
     * segment files to the socket without a copy. Concatenated, the parts are the bytes of
     * {@link #encodeResponse}.
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

    /** A {@link Writable} that copies everything into one heap buffer except records, where it cuts a part. */
    private static final class PartsWriter implements Writable {
        private final ByteBuffer buf;
        private final ByteBufferAccessor acc;
        private final List<Object> parts = new ArrayList<>();
        private int cut;

        PartsWriter(ByteBuffer buf) {
            this.buf = buf;
            this.acc = new ByteBufferAccessor(buf);
        }

        @Override
        public void writeRecords(BaseRecords records) {
            if (records instanceof FileSlice slice) {
                // The generated code wrote the length already; the bytes follow from the file.
                cutHeap();
                if (slice.sizeInBytes() > 0) {
                    parts.add(slice);
                }
            } else if (records instanceof MemoryRecords memory) {
                // Records count as zero-copy bytes in the size, so they are a part of their own, not in the heap buffer.
                cutHeap();
                if (memory.sizeInBytes() > 0) {
                    parts.add(memory.buffer().duplicate());
                }
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

        @Override
        public void writeByte(byte val) {
            acc.writeByte(val);
        }

        @Override
        public void writeShort(short val) {
            acc.writeShort(val);
        }

        @Override
        public void writeInt(int val) {
            acc.writeInt(val);
        }

        @Override
        public void writeLong(long val) {
            acc.writeLong(val);
        }

        @Override
        public void writeDouble(double val) {
            acc.writeDouble(val);
        }

        @Override
        public void writeByteArray(byte[] arr) {
            acc.writeByteArray(arr);
        }

        @Override
        public void writeUnsignedVarint(int i) {
            acc.writeUnsignedVarint(i);
        }

        @Override
        public void writeByteBuffer(ByteBuffer src) {
            acc.writeByteBuffer(src);
        }

        @Override
        public void writeVarint(int i) {
            acc.writeVarint(i);
        }

        @Override
        public void writeVarlong(long i) {
            acc.writeVarlong(i);
        }
    }

    /**
     * Encodes a complete response frame. Size and write share one serialization cache, as the
     * generated message classes require.
     */
    public static ByteBuffer encodeResponse(ApiKeys key, short version, int correlationId, ApiMessage body) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        short headerVersion = key.responseHeaderVersion(version);
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
        int headerSize = header.size(cache, headerVersion);
        int bodySize = body.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(4 + headerSize + bodySize);
        buf.putInt(headerSize + bodySize);
        ByteBufferAccessor out = new ByteBufferAccessor(buf);
        header.write(out, cache, headerVersion);
        body.write(out, cache, version);
        buf.flip();
        return buf;
    }
}
