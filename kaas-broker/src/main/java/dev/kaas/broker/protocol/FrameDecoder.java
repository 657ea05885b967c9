package dev.kaas.broker.protocol;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Splits one connection's byte stream into request frames (4-byte size, then that many bytes),
 * defensively as Apache's {@code NetworkReceive}: the size is checked against
 * {@code socket.request.max.bytes}, and a frame's bytes are reserved from the broker-wide
 * {@link RequestMemory} as they arrive, not when the size announces them (as Apache does). So a
 * slowloris client that announces the largest frame and sends a few bytes holds a few bytes of
 * the budget, not the frame's size: hundreds of them cannot use up the budget and stop every
 * other connection from reading. The body buffer is made once the whole frame has arrived.
 * Pull-based, so the connection takes frames only while it may have more requests in flight,
 * and testable without sockets.
 *
 * <p>Not thread-safe: one per connection, used on its event loop.
 */
final class FrameDecoder {
    /** api key, api version and correlation id: the least a request header holds. */
    static final int HEADER_MIN = 8;

    /** Lowered before a SASL connection authenticates (Apache's sasl.server.max.receive.size). */
    private int maxFrameBytes;
    private int minFrameBytes = HEADER_MIN;
    private final RequestMemory memory;
    private final ArrayDeque<ByteBuffer> input = new ArrayDeque<>();
    private final ByteBuffer sizeField = ByteBuffer.allocate(4);
    /** Below this a received buffer is merged into the previous one, so a client dribbling bytes holds few objects. */
    private static final int SMALL = 512;
    private static final int MERGED_MAX = 4096;
    private int announced = -1;
    private long inputBytes;
    /** Bytes of the current frame's body reserved from the budget: those received so far. */
    private int held;
    private boolean awaitingMemory;
    private boolean closed;

    FrameDecoder(int maxFrameBytes, RequestMemory memory) {
        this.maxFrameBytes = maxFrameBytes;
        this.memory = memory;
    }

    /** A frame's bytes, which hold {@link #reserved} bytes of the budget until {@link #release()}. */
    static final class Frame {
        private final ByteBuffer buffer;
        private final RequestMemory memory;
        private boolean released;

        Frame(ByteBuffer buffer, RequestMemory memory) {
            this.buffer = buffer;
            this.memory = memory;
        }

        ByteBuffer buffer() {
            return buffer;
        }

        int reserved() {
            return buffer.capacity();
        }

        /** Idempotent: the request is done with its bytes. */
        void release() {
            if (!released) {
                released = true;
                memory.release(buffer.capacity());
            }
        }
    }

    /** A size no request can have: the connection must close, as Apache's {@code InvalidReceiveException}. */
    /** The largest frame read from now on. */
    void maxFrameBytes(int bytes) {
        this.maxFrameBytes = bytes;
    }

    /** Frames are SASL tokens (after a SaslHandshake v0), which may be shorter than a request header. */
    void rawTokens(boolean raw) {
        this.minFrameBytes = raw ? 0 : HEADER_MIN;
    }

    static final class InvalidFrameException extends Exception {
        InvalidFrameException(String message) {
            super(message, null, false, false);
        }
    }

    /** Takes received bytes (the buffer is kept, not copied, until its bytes are consumed). */
    void append(ByteBuffer bytes) {
        if (closed || !bytes.hasRemaining()) {
            return;
        }
        inputBytes += bytes.remaining();
        ByteBuffer tail = input.peekLast();
        if (bytes.remaining() < SMALL && tail != null && tail.remaining() + bytes.remaining() <= MERGED_MAX) {
            input.pollLast();
            input.add(ByteBuffer.allocate(tail.remaining() + bytes.remaining()).put(tail).put(bytes).flip());
            return;
        }
        input.add(bytes);
    }

    /** True while a frame's size is known but the budget cannot cover it yet. */
    boolean awaitingMemory() {
        return awaitingMemory;
    }

    /** Bytes received but not yet part of a frame (held only while reading is paused). */
    long buffered() {
        return inputBytes;
    }

    /**
     * The next complete frame, or null when more bytes are needed or the budget is exhausted
     * (then {@code onMemory} runs once when bytes are released, and the caller polls again).
     */
    Frame poll(Runnable onMemory) throws InvalidFrameException {
        if (closed) {
            return null;
        }
        if (announced < 0) {
            if (!fill(sizeField)) {
                return null;
            }
            sizeField.flip();
            int size = sizeField.getInt();
            sizeField.clear();
            if (size < minFrameBytes || size > maxFrameBytes) {
                throw new InvalidFrameException("invalid frame size " + size + " (max " + maxFrameBytes + ")");
            }
            announced = size;
        }
        int received = (int) Math.min(buffered(), announced);
        if (received > held) {
            if (!memory.tryReserve(received - held, onMemory)) {
                awaitingMemory = true;
                return null;
            }
            held = received;
        }
        awaitingMemory = false;
        if (received < announced) {
            return null;
        }
        ByteBuffer body = ByteBuffer.allocate(announced);
        fill(body);
        Frame frame = new Frame(body.flip(), memory);
        held = 0;
        announced = -1;
        return frame;
    }

    /** The connection closed: gives back the reservation of a partly received frame. */
    void close(Runnable onMemory) {
        if (closed) {
            return;
        }
        closed = true;
        input.clear();
        inputBytes = 0;
        memory.cancel(onMemory);
        if (held > 0) {
            memory.release(held);
            held = 0;
        }
    }

    private boolean fill(ByteBuffer target) {
        while (target.hasRemaining() && !input.isEmpty()) {
            ByteBuffer head = input.peek();
            int n = Math.min(head.remaining(), target.remaining());
            ByteBuffer part = head.slice();
            part.limit(n);
            target.put(part);
            head.position(head.position() + n);
            inputBytes -= n;
            if (!head.hasRemaining()) {
                input.poll();
            }
        }
        return !target.hasRemaining();
    }
}
