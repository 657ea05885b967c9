package dev.kaas.broker.protocol;

import dev.kaas.broker.auth.AccessControl;
import dev.kaas.broker.auth.SaslEndpoint;
import dev.kaas.broker.auth.TlsEndpoint;
import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.NetSocketInternal;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import javax.net.ssl.SSLEngine;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
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
    private final TlsEndpoint tls;
    /** The connection's SASL authentication, or null on a listener without SASL. */
    private final SaslSession sasl;
    private final int maxFrameBytes;
    private final Executor loop;
    /** Where a TLS connection's segment reads run (they block; the loop must not). */
    private final Executor sliceReader;
    /** This connection's borrowing from the listeners' allowance of chunks read ahead; null unless TLS. */
    private final SliceChunks.Share sliceReadAhead;
    /** On a TLS connection, streams segment bytes through the TLS handler as the socket takes them; null otherwise. */
    private final ChunkedWriteHandler chunks;
    /** Set when the TLS handshake completes, before any request can be read; ANONYMOUS on plaintext. */
    private KafkaPrincipal principal = KafkaPrincipal.ANONYMOUS;
    private boolean paused;
    /** TLS slices written and not yet fully sent. */
    private int streaming;
    private boolean draining;
    private boolean closed;

    /**
     * @param tls  the listener's TLS side, or null for a listener without TLS
     * @param sasl the listener's SASL side, or null for a listener without SASL
     */
    Connection(NetSocket socket, Context context, ApiRegistry registry, String listenerName, int maxFrameBytes,
            int maxInFlight, RequestMemory memory, Runnable onClosed, TlsEndpoint tls, SaslEndpoint sasl, AccessControl access,
            RequestQuota requestQuota, Executor sliceReader, Semaphore sliceReadAhead, RequestObserver observer) {
        this.tls = tls;
        this.sasl = sasl == null ? null : new SaslSession(sasl, System::nanoTime);
        this.maxFrameBytes = maxFrameBytes;
        this.socket = socket;
        this.context = context;
        this.onClosed = onClosed;
        this.clientHost = "/" + socket.remoteAddress().hostAddress();
        // Until it authenticates, a SASL connection's frames are bounded by sasl.server.max.receive.size, as Apache's.
        this.decoder = new FrameDecoder(sasl == null ? maxFrameBytes : Math.min(maxFrameBytes, sasl.maxReceiveSize()), memory);
        Executor loop = task -> {
            if (Context.isOnEventLoopThread() && context == Vertx.currentContext()) {
                task.run();
            } else {
                context.runOnContext(v -> task.run());
            }
        };
        this.pipeline = new RequestPipeline(this, loop, registry, listenerName, maxInFlight, this.sasl,
                sasl == null ? 0 : sasl.failedAuthenticationDelayMs(), access, requestQuota, observer);
        this.memoryAvailable = () -> context.runOnContext(v -> drain());
        this.loop = loop;
        this.sliceReader = sliceReader;
        this.sliceReadAhead = tls == null ? null : new SliceChunks.Share(sliceReadAhead);
        this.chunks = tls == null ? null : new ChunkedWriteHandler();
    }

    void start() {
        if (tls != null) {
            startTls();
        }
        // The received buffers themselves, not Vert.x's copy of each (NetSocket.handler copies every
        // read into a fresh heap buffer): the decoder copies them once, into frame bodies, and
        // releases them. Reading is then paused at the channel (see pauseReading).
        ((NetSocketInternal) socket).messageHandler(message -> {
            if (message instanceof ByteBuf bytes) {
                onBytes(bytes);
            } else {
                ReferenceCountUtil.release(message);
            }
        });
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

    /**
     * Puts TLS in front of the connection before a byte is read: an engine from the listener's
     * {@link TlsEndpoint} in a Netty {@link SslHandler} at the head of the channel's pipeline
     * (Vert.x's own TLS takes only its key and trust options, while this engine is Apache's,
     * built from its {@code ssl.*} settings). Requests arrive only after the handshake, whose
     * completion sets the principal; a failed handshake closes the connection.
     */
    private void startTls() {
        SSLEngine engine = tls.newEngine(socket.remoteAddress().hostAddress(), socket.remoteAddress().port());
        SslHandler handler = new SslHandler(engine);
        // Apache gives a handshake no deadline of its own; connections.max.idle.ms (the socket's idle timeout) bounds it.
        handler.setHandshakeTimeoutMillis(0);
        io.netty.channel.ChannelPipeline channel = ((NetSocketInternal) socket).channelHandlerContext().pipeline();
        channel.addFirst("kaas-tls", handler);
        // Behind the TLS handler: segment bytes go out as SliceChunks, in order with the buffers around them.
        channel.addAfter("kaas-tls", "kaas-chunks", chunks);
        handler.handshakeFuture().addListener(done -> {
            if (!done.isSuccess()) {
                LOG.debugf("TLS handshake failed listener=%s client=%s: %s", tls.listener(), clientHost, done.cause());
                close();
                return;
            }
            try {
                principal = tls.principal(engine.getSession());
            } catch (RuntimeException e) {
                // Apache fails the authentication of a certificate its mapping rules do not map.
                LOG.infof("closing connection: %s client=%s", e.getMessage(), clientHost);
                close();
            }
        });
    }

    /** On a SASL listener the SASL identity (over SASL_SSL too, as Apache's principal builder), else the TLS one. */
    @Override
    public KafkaPrincipal principal() {
        return sasl != null ? sasl.principal() : principal;
    }

    @Override
    public org.apache.kafka.common.security.auth.SecurityProtocol securityProtocol() {
        if (sasl != null) {
            return tls == null ? SecurityProtocol.SASL_PLAINTEXT : SecurityProtocol.SASL_SSL;
        }
        return tls == null ? SecurityProtocol.PLAINTEXT : SecurityProtocol.SSL;
    }

    @Override
    public void closeAfter(long delayMs, java.util.List<ByteBuffer> last) {
        if (closed) {
            return;
        }
        pauseReading();
        Runnable end = () -> {
            if (!closed) {
                if (!last.isEmpty()) {
                    write(last);
                }
                close();
            }
        };
        if (delayMs <= 0) {
            end.run();
        } else {
            context.owner().setTimer(delayMs, id -> context.runOnContext(v -> end.run()));
        }
    }

    private void onBytes(ByteBuf bytes) {
        if (closed) {
            bytes.release();
            return;
        }
        decoder.append(bytes);
        drain();
    }

    /**
     * Stops the channel reading. What it has read already still arrives (the rest of a read loop,
     * what the TLS handler decrypts from it) and waits in the decoder: at most the grace and one
     * read, as Vert.x's own inbound queue would have held it.
     */
    private void pauseReading() {
        paused = true;
        channel().config().setAutoRead(false);
    }

    private void resumeReading() {
        paused = false;
        channel().config().setAutoRead(true);
    }

    private io.netty.channel.Channel channel() {
        return ((NetSocketInternal) socket).channelHandlerContext().channel();
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
                if (sasl != null) {
                    // The frames after a SaslHandshake v0 are raw tokens; after authentication, requests of any size.
                    decoder.rawTokens(sasl.raw());
                    if (sasl.authenticated()) {
                        decoder.maxFrameBytes(maxFrameBytes);
                    }
                }
            }
            // Polling stops (more bytes needed, or the pipeline full): what waits holds no mostly-read socket buffer.
            decoder.trim();
        } catch (FrameDecoder.InvalidFrameException e) {
            LOG.debugf("closing connection: %s client=%s", e.getMessage(), clientHost);
            close();
        } finally {
            draining = false;
        }
        boolean read = !closed && pipeline.accepting() && !decoder.awaitingMemory();
        if (read && paused) {
            resumeReading();
        } else if (!read && !paused && !closed) {
            pauseReading();
        }
    }

    @Override
    public void readable(boolean readable) {
        if (readable) {
            drain();
        } else if (!paused && !closed) {
            pauseReading();
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
        if (tls != null) {
            // TLS encrypts in the heap: the slice is read a chunk at a time, off the loop, as the socket takes it.
            streaming++;
            ((NetSocketInternal) socket).writeMessage(new SliceChunks(slice, sliceReader, sliceReadAhead,
                    ((NetSocketInternal) socket).channelHandlerContext().alloc(), loop, chunks::resumeTransfer)).onComplete(done -> {
                streaming--;
                if (done.failed()) {
                    // Part of the response may be out: the connection cannot go on (the client refetches). Closed now, as a
                    // failed sendfile closes it: Vert.x's close would first send what is queued behind the slice.
                    LOG.debugf("closing connection: a fetched slice could not be sent client=%s: %s", clientHost, done.cause().toString());
                    closeNow();
                } else if (streaming == 0) {
                    pipeline.onWritable();
                }
            });
            return;
        }
        // Zero-copy: the kernel moves segment bytes to the socket (sendfile), in order with the
        // buffers around it. Vert.x 4's public API only sends files by path (NetSocket.sendFile
        // opens the file again on every call, and a segment may be deleted by retention after
        // its slice was read); writing a Netty FileRegion over the segment's open channel needs
        // NetSocketInternal.writeMessage (Vert.x's internal type, as for the TLS handlers above).
        ((NetSocketInternal) socket).writeMessage(new SegmentRegion(slice));
    }

    /**
     * Full while a slice is being streamed through TLS, too: what is written behind it waits in
     * the chunked writer's queue, which the channel's writability does not count, so without this
     * a client could have responses queued there without bound.
     */
    @Override
    public boolean writeQueueFull() {
        return streaming > 0 || socket.writeQueueFull();
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

    /** Closes the channel at once, dropping whatever is queued to be written. */
    private void closeNow() {
        if (!closed) {
            closed = true;
            pipeline.onClosed();
            decoder.close(memoryAvailable);
        }
        channel().close();
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
