package dev.kaas.broker.protocol;

import java.nio.ByteBuffer;
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
