package dev.kaas.broker.protocol;

import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.NetSocketInternal;
import io.vertx.core.parsetools.RecordParser;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.jboss.logging.Logger;

/**
 * One client connection: framing, decode, dispatch, ordered responses. Lives on one event loop
 * (see package-info). Framing is defensive as Apache's {@code NetworkReceive}: the 4-byte size
 * is checked against {@code socket.request.max.bytes} before any body buffer exists, and a
 * frame that cannot be parsed closes the connection without a word, as Apache does.
 */
final class Connection {
    private static final Logger LOG = Logger.getLogger(Connection.class);
    private static final int HEADER_MIN = 8;

    private final NetSocket socket;
    private final Context context;
    private final ApiRegistry registry;
    private final String listenerName;
    private final int maxFrameBytes;
    private final int maxInFlight;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private RecordParser parser;
    private boolean readingSize = true;
    private boolean paused;
    private boolean closed;

    private static final class Pending {
        final RequestHeader header;
        final AbstractRequest request;
        final short responseVersion;
        boolean done;
        ApiMessage response;

        Pending(RequestHeader header, AbstractRequest request, short responseVersion) {
            this.header = header;
            this.request = request;
            this.responseVersion = responseVersion;
        }
    }

    Connection(NetSocket socket, Context context, ApiRegistry registry, String listenerName, int maxFrameBytes, int maxInFlight) {
        this.socket = socket;
        this.context = context;
        this.registry = registry;
        this.listenerName = listenerName;
        this.maxFrameBytes = maxFrameBytes;
        this.maxInFlight = maxInFlight;
    }

    void start() {
        parser = RecordParser.newFixed(4, this::onChunk);
        socket.handler(parser);
        socket.closeHandler(v -> closed = true);
        socket.exceptionHandler(e -> {
            LOG.debugf(e, "connection error client=%s", socket.remoteAddress());
            close();
        });
        socket.drainHandler(v -> maybeResume());
    }

    private void onChunk(Buffer chunk) {
        if (closed) {
            return;
        }
        if (readingSize) {
            int size = chunk.getInt(0);
            if (size < HEADER_MIN || size > maxFrameBytes) {
                LOG.debugf("closing connection: invalid frame size %d (max %d) client=%s", size, maxFrameBytes, socket.remoteAddress());
                close();
                return;
            }
            readingSize = false;
            parser.fixedSizeMode(size);
        } else {
            readingSize = true;
            parser.fixedSizeMode(4);
            onFrame(chunk.getByteBuf().nioBuffer());
        }
    }

    private void onFrame(ByteBuffer frame) {
        short keyId = frame.getShort(0);
        short version = frame.getShort(2);
        if (!ApiKeys.hasId(keyId)) {
            LOG.debugf("closing connection: unknown api key %d client=%s", keyId, socket.remoteAddress());
            close();
            return;
        }
        ApiKeys key = ApiKeys.forId(keyId);
        RequestHeader header;
        try {
            header = RequestHeader.parse(frame);
        } catch (RuntimeException e) {
            LOG.debugf("closing connection: bad request header for %s client=%s: %s", key, socket.remoteAddress(), e.getMessage());
            close();
            return;
        }
        if (!registry.supports(key, version)) {
            if (key == ApiKeys.API_VERSIONS) {
                // KIP-511: answer in v0 with the ranges we serve, so the client can pick one.
                Pending p = new Pending(header, null, (short) 0);
                p.done = true;
                p.response = ApiVersionsHandler.response(registry, Errors.UNSUPPORTED_VERSION);
                pending.add(p);
                flushResponses();
                return;
            }
            LOG.debugf("closing connection: %s v%d is not served client=%s", key, version, socket.remoteAddress());
            close();
            return;
        }
        AbstractRequest request;
        try {
            request = AbstractRequest.parseRequest(key, version, frame).request;
        } catch (RuntimeException e) {
            LOG.debugf("closing connection: unparsable %s v%d client=%s: %s", key, version, socket.remoteAddress(), e.getMessage());
            close();
            return;
        }
        Pending p = new Pending(header, request, version);
        pending.add(p);
        if (pending.size() >= maxInFlight && !paused) {
            paused = true;
            socket.pause();
        }
        CompletionStage<ApiMessage> stage;
        try {
            stage = registry.handler(key).handle(new RequestContext(header, listenerName, "/" + socket.remoteAddress().hostAddress()), request);
        } catch (Throwable t) {
            stage = CompletableFuture.failedFuture(t);
        }
        stage.whenComplete((msg, err) -> {
            if (Context.isOnEventLoopThread() && context == io.vertx.core.Vertx.currentContext()) {
                complete(p, msg, err);
            } else {
                context.runOnContext(v -> complete(p, msg, err));
            }
        });
    }

    private void complete(Pending p, ApiMessage msg, Throwable err) {
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        if (cause instanceof CloseConnection) {
            LOG.debugf("closing connection: %s client=%s", cause.getMessage(), socket.remoteAddress());
            // Answer what came before, then close: later requests on this connection are dropped with it.
            p.done = true;
            p.response = null;
            flushResponses();
            close();
            return;
        }
        p.done = true;
        if (err != null) {
            p.response = errorResponse(p, err);
        } else {
            p.response = msg;
        }
        flushResponses();
    }

    private ApiMessage errorResponse(Pending p, Throwable err) {
        Throwable cause = err;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (!(cause instanceof ApiException)) {
            LOG.errorf(cause, "request failed api=%s version=%d correlation=%d client=%s",
                    p.header.apiKey(), p.header.apiVersion(), p.header.correlationId(), socket.remoteAddress());
        }
        return p.request.getErrorResponse(0, cause).data();
    }

    private void flushResponses() {
        while (!pending.isEmpty() && pending.peek().done) {
            Pending p = pending.poll();
            if (p.response == null || closed) {
                continue;
            }
            try {
                for (Object part : Frames.encodeResponseParts(p.header.apiKey(), p.responseVersion, p.header.correlationId(), p.response)) {
                    if (part instanceof FileSlice slice) {
                        // Zero-copy: the kernel moves segment bytes to the socket (sendfile), in order with the buffers around it.
                        ((NetSocketInternal) socket).writeMessage(new SegmentRegion(slice));
                    } else {
                        socket.write(Buffer.buffer(Unpooled.wrappedBuffer((ByteBuffer) part)));
                    }
                }
            } catch (RuntimeException e) {
                LOG.errorf(e, "could not encode response api=%s version=%d", p.header.apiKey(), p.responseVersion);
                close();
                return;
            }
        }
        maybeResume();
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

    private void maybeResume() {
        if (paused && !closed && pending.size() < maxInFlight && !socket.writeQueueFull()) {
            paused = false;
            socket.resume();
        } else if (!paused && socket.writeQueueFull()) {
            paused = true;
            socket.pause();
        }
    }

    private void close() {
        if (!closed) {
            closed = true;
            socket.close();
        }
    }
}
