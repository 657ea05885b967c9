package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.NetSocketInternal;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import org.jboss.logging.Logger;

/**
 * Binds one client socket to its {@link FrameDecoder} and {@link RequestPipeline}: bytes in,
 * frames to the pipeline while it accepts them, responses out, and reading paused whenever the
 * pipeline is full, the write queue is full or the request-memory budget is exhausted. Lives on
 * one event loop (see package-info).
 */
final class Connection implements RequestPipeline.Transport {
    private static final Logger LOG = Logger.getLogger(Connection.class);

    private final NetSocket socket;
    private final Context context;
    private final FrameDecoder decoder;
    private final RequestPipeline pipeline;
    private final Runnable onClosed;
    private final String clientHost;
    /** Registered with the memory budget while a frame waits for bytes; runs on the releasing thread. */
    private final Runnable memoryAvailable;
    private boolean paused;
    private boolean draining;
    private boolean closed;

    Connection(NetSocket socket, Context context, ApiRegistry registry, String listenerName, int maxFrameBytes,
            int maxInFlight, RequestMemory memory, Runnable onClosed) {
        this.socket = socket;
        this.context = context;
        this.onClosed = onClosed;
        this.clientHost = "/" + socket.remoteAddress().hostAddress();
        this.decoder = new FrameDecoder(maxFrameBytes, memory);
        Executor loop = task -> {
            if (Context.isOnEventLoopThread() && context == Vertx.currentContext()) {
                task.run();
            } else {
                context.runOnContext(v -> task.run());
            }
        };
        this.pipeline = new RequestPipeline(this, loop, registry, listenerName, maxInFlight);
        this.memoryAvailable = () -> context.runOnContext(v -> drain());
    }

    void start() {
        socket.handler(this::onBytes);
        socket.closeHandler(v -> {
            closed = true;
            pipeline.onClosed();
            decoder.close(memoryAvailable);
            onClosed.run();
        });
        socket.exceptionHandler(e -> {
            LOG.debugf(e, "connection error client=%s", clientHost);
            close();
        });
        socket.drainHandler(v -> pipeline.onWritable());
    }

    private void onBytes(Buffer bytes) {
        if (closed) {
            return;
        }
        // Vert.x hands over a copy of the bytes it read, so the decoder may keep the buffer.
        decoder.append(bytes.getByteBuf().nioBuffer());
        drain();
    }

    /** Hands complete frames to the pipeline while it accepts them, then reads only if it may. */
    private void drain() {
        if (draining || closed) {
            // A response written while draining asked for more: the loop below already continues.
            return;
        }
        draining = true;
        try {
            while (!closed && pipeline.accepting()) {
                FrameDecoder.Frame frame = decoder.poll(memoryAvailable);
                if (frame == null) {
                    break;
                }
                pipeline.onFrame(frame);
            }
        } catch (FrameDecoder.InvalidFrameException e) {
            LOG.debugf("closing connection: %s client=%s", e.getMessage(), clientHost);
            close();
        } finally {
            draining = false;
        }
        boolean read = !closed && pipeline.accepting() && !decoder.awaitingMemory();
        if (read && paused) {
            paused = false;
            socket.resume();
        } else if (!read && !paused && !closed) {
            paused = true;
            socket.pause();
        }
    }

    @Override
    public void readable(boolean readable) {
        if (readable) {
            drain();
        } else if (!paused && !closed) {
            paused = true;
            socket.pause();
        }
    }

    @Override
    public void write(ByteBuffer bytes) {
        socket.write(Buffer.buffer(Unpooled.wrappedBuffer(bytes)));
    }

    @Override
    public void write(java.util.List<ByteBuffer> buffers) {
        // One composite buffer: Netty gathers it into a single writev.
        socket.write(Buffer.buffer(Unpooled.wrappedBuffer(buffers.toArray(ByteBuffer[]::new))));
    }

    @Override
    public void write(FileSlice slice) {
        // Zero-copy: the kernel moves segment bytes to the socket (sendfile), in order with the
        // buffers around it. Vert.x 4's public API only sends files by path (NetSocket.sendFile
        // opens the file again on every call, and a segment may be deleted by retention after
        // its slice was read); writing a Netty FileRegion over the segment's open channel needs
        // NetSocketInternal.writeMessage. This cast is the only use of a Vert.x internal type.
        ((NetSocketInternal) socket).writeMessage(new SegmentRegion(slice));
    }

    @Override
    public boolean writeQueueFull() {
        return socket.writeQueueFull();
    }

    @Override
    public String clientHost() {
        return clientHost;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            pipeline.onClosed();
            decoder.close(memoryAvailable);
            socket.close();
        }
    }

    /** A file region over a segment's channel that must not close it: the segment owns the channel. */
    private static final class SegmentRegion extends DefaultFileRegion {
        SegmentRegion(FileSlice slice) {
            super(slice.channel(), slice.position(), slice.size());
        }

        @Override
        protected void deallocate() {
            // The segment closes its channel when the partition closes.
        }
    }
}
