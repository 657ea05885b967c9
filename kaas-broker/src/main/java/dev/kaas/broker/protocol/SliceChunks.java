package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A Fetch response's segment bytes on their way through TLS, which cannot take a file region:
 * read {@link #CHUNK} bytes at a time into the heap, each read on {@code reader} (a disk read must not block
 * the event loop), at most one chunk ahead of what the channel has taken. A Netty
 * {@code ChunkedWriteHandler} in front of the TLS handler asks for chunks only while the channel
 * is writable, so a consumer that stops reading holds one chunk and the socket's buffers, never
 * its response: Apache's SSL transport sends file records through a small buffer the same way.
 *
 * <p>Event-loop confined: the handler calls every method on the connection's loop, and a
 * finished read comes back to it through {@code loop} before it touches any field.
 */
final class SliceChunks implements ChunkedInput<ByteBuf> {
    static final int CHUNK = 128 * 1024;

    private final FileSlice slice;
    private final Executor reader;
    private final Executor loop;
    /** Asks the handler for chunks again (it stops asking when a read answers nothing yet). */
    private final Runnable resume;
    private ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    /** Bytes asked of the file so far, the chunk being read and the one ready included. */
    private long requested;
    /** Bytes handed to the channel. */
    private long sent;
    private ByteBuf ready;
    private boolean reading;
    private IOException failure;
    private boolean closed;

    SliceChunks(FileSlice slice, Executor reader, Executor loop, Runnable resume) {
        this.slice = slice;
        this.reader = reader;
        this.loop = loop;
        this.resume = resume;
    }

    @Override
    @Deprecated
    public ByteBuf readChunk(ChannelHandlerContext ctx) throws Exception {
        return readChunk(ctx.alloc());
    }

    /** The next chunk if it has been read, else null (the read is under way, and {@code resume} runs when it is done). */
    @Override
    public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
        this.alloc = allocator;
        if (failure != null) {
            throw failure;
        }
        ByteBuf chunk = ready;
        if (chunk != null) {
            ready = null;
            sent += chunk.readableBytes();
        }
        readAhead();
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

    /** The channel is done with this input (sent, failed or closed): a chunk read and not sent is freed. */
    @Override
    public void close() {
        closed = true;
        if (ready != null) {
            ready.release();
            ready = null;
        }
    }

    private void readAhead() {
        if (reading || ready != null || closed || requested == slice.size()) {
            return;
        }
        int n = (int) Math.min(CHUNK, slice.size() - requested);
        long offset = requested;
        requested += n;
        reading = true;
        ByteBufAllocator allocator = alloc;
        try {
            reader.execute(() -> {
                // On the heap: the JDK's SSLEngine encrypts from heap buffers (the TLS handler would copy a direct one on
                // the event loop); the copy out of the file happens here, off it.
                ByteBuf chunk = allocator.heapBuffer(n, n);
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
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            // Reported by readChunk, which is running now: resuming the handler from inside it would re-enter it.
            reading = false;
            failure = new IOException("the broker is stopping", shuttingDown);
        }
    }

    private void arrived(ByteBuf chunk, IOException error) {
        reading = false;
        if (closed) {
            if (chunk != null) {
                chunk.release();
            }
            return;
        }
        if (error != null) {
            failure = error;
        } else {
            ready = chunk;
        }
        resume.run();
    }

    /** Reads exactly {@code n} bytes {@code offset} into the slice; it lies below the high watermark, so a short file is an error. */
    private void fill(ByteBuf chunk, long offset, int n) throws IOException {
        slice.readFully(chunk.nioBuffer(chunk.writerIndex(), n), offset);
        chunk.writerIndex(chunk.writerIndex() + n);
    }
}
