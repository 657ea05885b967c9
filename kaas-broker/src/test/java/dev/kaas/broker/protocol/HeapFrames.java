package dev.kaas.broker.protocol;

import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/** Test helpers: the plain kafka-clients heap encoding as a reference, and the production parts joined into one frame. */
final class HeapFrames {
    private HeapFrames() {
    }

    /** A response frame as kafka-clients' message classes write it into one buffer. */
    static ByteBuffer reference(ApiKeys key, short version, int correlationId, ApiMessage body) {
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

    /** The production encoding ({@link Frames#encodeResponseParts}) joined; only heap parts expected. */
    static ByteBuffer joined(ApiKeys key, short version, int correlationId, ApiMessage body) {
        List<Object> parts = Frames.encodeResponseParts(key, version, correlationId, body);
        int size = parts.stream().mapToInt(p -> ((ByteBuffer) p).remaining()).sum();
        ByteBuffer out = ByteBuffer.allocate(size);
        parts.forEach(p -> out.put(((ByteBuffer) p).duplicate()));
        return out.flip();
    }

}
