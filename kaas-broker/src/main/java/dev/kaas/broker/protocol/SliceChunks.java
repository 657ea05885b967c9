package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

/**
 * A Fetch response's segment bytes on their way through TLS, which cannot take a file region:
 * read {@link #CHUNK} bytes at a time into the heap on {@code reader} (a disk read must not block
 * the event loop), up to {@link #AHEAD} chunks ahead of what the channel has taken. A Netty
 * {@code ChunkedWriteHandler} in front of the TLS handler asks for chunks only while the channel
 * is writable, so a consumer that stops reading holds at most that window and the socket's
 * buffers, never its response: Apache's SSL transport sends file records through a small buffer
 * the same way.
 *
 * <p>Why a window and not one chunk: each hand-over to the reader and back costs a thread wake-up
 * (tens of microseconds on a VM), and with one chunk ahead the loop waited for those between
 * chunks, on the consumer's critical path. Reading starts when the slice is made, and one reader
 * task reads a window's chunks back to back. The slice the handler is sending (it has asked for a
 * chunk) may hold one chunk of its own; everything else read ahead, a slice's window beyond that
 * chunk and the chunks of the slices queued behind it (in the same response or pipelined ones),
 * is borrowed through the connection's {@link Share}: at most {@code AHEAD - 1} chunks per
 * connection, out of one allowance for all of them. So a connection holds at most a window
 * whatever it asked for, and a few stalled consumers cannot take the allowance from the rest.
 *
 * <p>Event-loop confined: the handler calls every method on the connection's loop, and a
 * finished read comes back to it through {@code loop} before it touches any field.
 */
final class SliceChunks implements ChunkedInput<ByteBuf> {
    static final int CHUNK = 128 * 1024;
    /** Chunks read ahead of the channel at most: 512 KiB. */
    static final int AHEAD = 4;

    /**
     * One connection's borrowing from the listeners' allowance: at most {@code AHEAD - 1} chunks
     * at once, however many slices its responses hold. Slices that found nothing to borrow wait
     * here in the order they were written, and what the connection gives back is offered to the
     * first of them, so the next slice starts reading while the one before it drains instead of
     * when the handler first asks it. Event-loop confined, as the slices.
     */
    static final class Share {
        private final Semaphore allowance;
        private int borrowed;
        private final ArrayDeque<SliceChunks> waiting = new ArrayDeque<>();

        Share(Semaphore allowance) {
            this.allowance = allowance;
        }

        private boolean tryBorrow() {
            if (borrowed >= AHEAD - 1 || !allowance.tryAcquire()) {
                return false;
            }
            borrowed++;
            return true;
        }

        private void giveBack(int permits) {
            borrowed -= permits;
            allowance.release(permits);
        }

        /** Lets the first waiting slice borrow what is free now; it keeps its place if it is still short. */
        private void offer() {
            while (borrowed < AHEAD - 1 && !waiting.isEmpty()) {
                SliceChunks first = waiting.poll();
                first.waiting = false;
                first.readAhead();
                if (first.waiting) {
                    waiting.removeLastOccurrence(first);
                    waiting.addFirst(first);
                    return;
                }
            }
        }

        /** Chunks borrowed now (for tests). */
        int borrowed() {
            return borrowed;
        }
    }

    private final FileSlice slice;
    private final Executor reader;
    private final Share share;
    private final Executor loop;
    /** Asks the handler for chunks again (it stops asking when a read answers nothing yet). */
    private final Runnable resume;
    /** The channel's allocator: chunks are read before the handler first asks (and passes its own). */
    private final ByteBufAllocator alloc;
    /** Bytes asked of the file so far, chunks being read and ready included. */
    private long requested;
    /** Bytes handed to the channel. */
    private long sent;
    private final ArrayDeque<ByteBuf> ready = new ArrayDeque<>();
    /** Chunks asked of the reader and not yet back. */
    private int reading;
    /** Permits borrowed through the share that this slice holds: one per chunk held (being read or ready), less one once {@link #asked} (that chunk is its own). */
    private int borrowed;
    /** The handler has asked for a chunk: this is the slice it is sending, and one chunk held is its own. */
    private boolean asked;
    private IOException failure;
    /** Read by the reader too: a task stops reading once the slice is closed. */
    private volatile boolean closed;
    /** In the share's queue: it stopped reading ahead for want of a permit. */
    private boolean waiting;

    /**
     * Starts reading at once, out of the share: the first chunks are then read while the loop
     * still encrypts what comes before them in the response.
     */
    SliceChunks(FileSlice slice, Executor reader, Share share, ByteBufAllocator alloc, Executor loop, Runnable resume) {
        this.slice = slice;
        this.reader = reader;
        this.share = share;
        this.alloc = alloc;
        this.loop = loop;
        this.resume = resume;
        readAhead();
    }

    @Override
    @Deprecated
    public ByteBuf readChunk(ChannelHandlerContext ctx) throws Exception {
        return readChunk(ctx.alloc());
    }

    /** The next chunk if it has been read, else null (the read is under way, and {@code resume} runs when it is done). */
    @Override
    public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
        if (failure != null) {
            throw failure;
        }
        asked = true;
        ByteBuf chunk = ready.poll();
        if (chunk != null) {
            sent += chunk.readableBytes();
        }
        giveBack();
        readAhead();
        if (requested == slice.size()) {
            // Only once this slice has nothing more to read: while it has, what it gives back is its next refill's.
            share.offer();
        }
        if (chunk == null && failure != null) {
            // The read could not even start (the broker is stopping): nothing will resume the handler.
            throw failure;
        }
        return chunk;
    }

    @Override
    public boolean isEndOfInput() {
        return sent == slice.size();
    }

    @Override
    public long length() {
        return slice.size();
    }

    @Override
    public long progress() {
        return sent;
    }

    /** The channel is done with this input (sent, failed or closed): chunks read and not sent are freed, borrowed permits returned. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ByteBuf b; (b = ready.poll()) != null; ) {
            b.release();
        }
        if (waiting) {
            share.waiting.remove(this);
            waiting = false;
        }
        share.giveBack(borrowed);
        borrowed = 0;
        share.offer();
    }

    /** Chunks held now: being read or ready. */
    private int held() {
        return reading + ready.size();
    }

    /** Returns the permits no longer needed for the chunks held. */
    private void giveBack() {
        int surplus = borrowed - (asked ? Math.max(0, held() - 1) : held());
        if (surplus > 0) {
            share.giveBack(surplus);
            borrowed -= surplus;
        }
    }

    /**
     * Asks the reader for the chunks that fit in the window, in one task, while no task is
     * under way (so chunks come back in order, and a task's chunks are read back to back).
     */
    private void readAhead() {
        if (reading > 0 || closed || failure != null || requested == slice.size()) {
            return;
        }
        int count = 0;
        while (requested + (long) count * CHUNK < slice.size() && ready.size() + count < AHEAD) {
            boolean own = asked && ready.size() + count == 0;
            if (!own) {
                if (!share.tryBorrow()) {
                    if (!waiting) {
                        waiting = true;
                        share.waiting.add(this);
                    }
                    break;
                }
                borrowed++;
            }
            count++;
        }
        if (count == 0) {
            return;
        }
        long from = requested;
        int n = count;
        requested = Math.min(slice.size(), from + (long) count * CHUNK);
        reading = count;
        try {
            reader.execute(() -> readChunks(from, n));
        } catch (RejectedExecutionException shuttingDown) {
            // Reported by readChunk: resuming the handler from inside it (or before it ever ran) would re-enter it.
            reading = 0;
            giveBack();
            failure = new IOException("the broker is stopping", shuttingDown);
        }
    }

    /**
     * On the reader: {@code count} chunks from {@code from}, each handed to the loop as soon as it
     * is read; stops at a failed read (the loop fails the slice) or once the slice is closed.
     */
    private void readChunks(long from, int count) {
        for (int i = 0; i < count && !closed; i++) {
            long offset = from + (long) i * CHUNK;
            int n = (int) Math.min(CHUNK, slice.size() - offset);
            // On the heap: the JDK's SSLEngine encrypts from heap buffers (the TLS handler would copy a direct one on
            // the event loop); the copy out of the file happens here, off it.
            ByteBuf chunk = alloc.heapBuffer(n, n);
            IOException error = null;
            try {
                fill(chunk, offset, n);
            } catch (IOException | RuntimeException e) {
                chunk.release();
                chunk = null;
                error = e instanceof IOException io ? io : new IOException(e);
            }
            ByteBuf done = chunk;
            IOException failed = error;
            try {
                loop.execute(() -> arrived(done, failed));
            } catch (RejectedExecutionException loopGone) {
                if (done != null) {
                    done.release();
                }
                return;
            }
            if (failed != null) {
                return;
            }
        }
    }

    /** On the loop: one chunk of the task back, or its failure (the task reads no further). */
    private void arrived(ByteBuf chunk, IOException error) {
        if (closed) {
            if (chunk != null) {
                chunk.release();
            }
            return;
        }
        if (error != null) {
            // Its earlier chunks came back before it (the loop runs tasks in order): none is being read now.
            reading = 0;
            giveBack();
            failure = error;
        } else {
            reading--;
            ready.add(chunk);
        }
        resume.run();
    }

    /** Reads exactly {@code n} bytes {@code offset} into the slice; it lies below the high watermark, so a short file is an error. */
    private void fill(ByteBuf chunk, long offset, int n) throws IOException {
        slice.readFully(chunk.nioBuffer(chunk.writerIndex(), n), offset);
        chunk.writerIndex(chunk.writerIndex() + n);
    }
}
