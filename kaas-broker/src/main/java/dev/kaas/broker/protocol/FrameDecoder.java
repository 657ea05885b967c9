package dev.kaas.broker.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Splits one connection's byte stream into request frames (4-byte size, then that many bytes),
 * defensively as Apache's {@code NetworkReceive}: the size is checked against
 * {@code socket.request.max.bytes}, and the frame's whole size is reserved from the broker-wide
 * {@link RequestMemory} before its body buffer exists, as Apache reserves it, but only once the
 * frame has shown it is being sent: a frame of up to {@link #GRACE} bytes once all of it has
 * arrived, a larger one once its first {@link #GRACE} bytes have. Until then the bytes wait in the
 * connection's input (at most the grace and one read). So a slowloris client that announces the
 * largest frame and sends a few bytes holds none of the budget, and hundreds of them cannot stop
 * every other connection reading; and since a frame holds either none or all of its size, every
 * holder can complete and release it, whatever else is waiting (reserving bytes one by one as
 * they arrive would let partly received frames fill the budget and wait on each other forever).
 * Pull-based, so the connection takes frames only while it may have more requests in flight, and
 * testable without sockets.
 *
 * <p>The decoder owns what it is given: a received buffer (pooled, straight from the socket or the
 * TLS handler) is released once its last byte is in a frame, or when the decoder closes. So each
 * byte is copied once, into its frame's body. Small reads are copied into a heap tail (grown as
 * they arrive) at once and their buffer released, so a client dribbling bytes pins no pooled
 * memory; so is a read that fills less than half its buffer (the socket's read buffer is sized by
 * its recent reads, up to 64 KiB), and so is the rest of a read once frames have taken more than
 * half of it and the connection stops polling ({@link #trim}). So the bytes a connection holds
 * take at most about three times their size (a tail of at least 256 bytes beside each such read),
 * never a read buffer per few hundred bytes.
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
    private final ArrayDeque<ByteBuf> input = new ArrayDeque<>();
    private final ByteBuffer sizeField = ByteBuffer.allocate(4);
    /** What a frame may send before its size is reserved (see the class comment). */
    static final int GRACE = 64 * 1024;
    /** Below this a received buffer is copied into a spare-room tail, so a client dribbling bytes holds few objects. */
    private static final int SMALL = 512;
    private static final int TAIL_MIN = 256;
    private static final int TAIL_CAPACITY = 4096;
    private int announced = -1;
    private long inputBytes;
    /** The body of the current frame, made when its size is reserved; null before. */
    private ByteBuffer body;
    /** The last input buffer when it is a heap tail of ours, with room to append small reads in place. */
    private ByteBuf tail;
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

    /**
     * This connection in the budget's queue: one identity whatever the caller passes to
     * {@link #poll}, which runs the wake-up the last poll gave.
     */
    private final Runnable waiter = () -> {
        Runnable w = this.wake;
        if (w != null) {
            w.run();
        }
    };
    private volatile Runnable wake;

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

    /**
     * Takes received bytes and the caller's reference to them: the buffer is released once its
     * bytes are consumed, or at once when they are copied into the tail or the decoder is closed.
     */
    void append(ByteBuf bytes) {
        int n = bytes.readableBytes();
        if (closed || n == 0) {
            bytes.release();
            return;
        }
        inputBytes += n;
        if (tail != null && tail == input.peekLast() && tail.maxWritableBytes() >= n) {
            // Whatever its size, a read that fits the tail's spare room goes there, so the tail stays
            // last and small reads between larger ones do not each start a new one.
            copyAndRelease(bytes, tail);
            return;
        }
        if (n < SMALL) {
            tail = Unpooled.buffer(Math.max(n, TAIL_MIN), TAIL_CAPACITY);
            copyAndRelease(bytes, tail);
            input.add(tail);
            return;
        }
        input.add(sparse(bytes) ? exactCopy(bytes) : bytes);
    }

    /** Less than half of the buffer holds bytes still to be read. */
    private static boolean sparse(ByteBuf held) {
        return held.capacity() > 2L * held.readableBytes();
    }

    private static ByteBuf exactCopy(ByteBuf held) {
        int n = held.readableBytes();
        ByteBuf exact = Unpooled.buffer(n, n);
        copyAndRelease(held, exact);
        return exact;
    }

    /**
     * The caller stops polling for now (it needs more bytes, or its requests are in flight): frames
     * take input from its head only, so only the head can have become sparse; its rest is copied
     * out and the read buffer released (see the class comment).
     */
    void trim() {
        ByteBuf head = input.peek();
        if (head != null && head != tail && sparse(head)) {
            input.poll();
            input.addFirst(exactCopy(head));
        }
    }

    private static void copyAndRelease(ByteBuf from, ByteBuf to) {
        try {
            to.writeBytes(from);
        } finally {
            from.release();
        }
    }

    /** True while a frame's size is known but the budget cannot cover it yet. */
    boolean awaitingMemory() {
        return awaitingMemory;
    }

    /** Bytes received but not yet in a frame body: a frame within its grace, or what arrived while reading was pausing. */
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
        if (body == null) {
            if (buffered() < Math.min(announced, GRACE)) {
                return null;
            }
            wake = onMemory;
            if (!memory.tryReserve(announced, waiter)) {
                awaitingMemory = true;
                return null;
            }
            awaitingMemory = false;
            body = ByteBuffer.allocate(announced);
        }
        if (!fill(body)) {
            return null;
        }
        Frame frame = new Frame(body.flip(), memory);
        body = null;
        announced = -1;
        return frame;
    }

    /** The connection closed: gives back the reservation of a partly received frame. */
    void close(Runnable onMemory) {
        if (closed) {
            return;
        }
        closed = true;
        ByteBuf held;
        while ((held = input.poll()) != null) {
            held.release();
        }
        tail = null;
        inputBytes = 0;
        memory.cancel(waiter);
        if (body != null) {
            memory.release(body.capacity());
            body = null;
        }
    }

    private boolean fill(ByteBuffer target) {
        while (target.hasRemaining() && !input.isEmpty()) {
            ByteBuf head = input.peek();
            int n = Math.min(head.readableBytes(), target.remaining());
            int limit = target.limit();
            target.limit(target.position() + n);
            head.readBytes(target);
            target.limit(limit);
            inputBytes -= n;
            if (!head.isReadable()) {
                input.poll();
                if (head == tail) {
                    tail = null;
                }
                head.release();
            }
        }
        return !target.hasRemaining();
    }
}
