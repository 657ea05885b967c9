package dev.kaas.it;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

/** A bare Kafka protocol client on a socket, for sending what real clients never would. */
final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int correlation;

    RawClient(int port) throws IOException {
        this(new Socket("127.0.0.1", port));
    }

    /** Over a socket the caller opened (a TLS one). */
    RawClient(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(15_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    static ByteBuffer frame(ApiKeys key, short version, int correlationId, ApiMessage body) {
        RequestHeader header = new RequestHeader(key, version, "raw-client", correlationId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int hs = header.data().size(cache, header.headerVersion());
        int bs = body.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(4 + hs + bs);
        buf.putInt(hs + bs);
        ByteBufferAccessor acc = new ByteBufferAccessor(buf);
        header.data().write(acc, cache, header.headerVersion());
        body.write(acc, cache, version);
        buf.flip();
        return buf;
    }

    AbstractResponse send(ApiKeys key, short version, ApiMessage body) throws IOException {
        int id = ++correlation;
        ByteBuffer f = frame(key, version, id, body);
        writeRaw(f.array());
        ByteBuffer resp = readFrame();
        return AbstractResponse.parseResponse(resp, new RequestHeader(key, version, "raw-client", id));
    }

    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    ByteBuffer readFrame() throws IOException {
        int size = in.readInt();
        byte[] body = new byte[size];
        in.readFully(body);
        return ByteBuffer.wrap(body);
    }

    /** True when the broker neither answered nor closed the connection for {@code quiet}. */
    boolean silentFor(java.time.Duration quiet) throws IOException {
        int before = socket.getSoTimeout();
        socket.setSoTimeout((int) quiet.toMillis());
        try {
            in.read();
            return false;
        } catch (SocketTimeoutException quietAsExpected) {
            return true;
        } catch (IOException reset) {
            return false;
        } finally {
            socket.setSoTimeout(before);
        }
    }

    /** True when the broker closed the connection (EOF or reset) within the socket timeout. */
    boolean closedByPeer() throws IOException {
        return closedByPeer(in);
    }

    /** As {@link #closedByPeer()}, for a socket opened without a RawClient (e.g. from a chosen local address). */
    static boolean closedByPeer(java.io.InputStream in) throws IOException {
        try {
            return in.read() < 0;
        } catch (EOFException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
