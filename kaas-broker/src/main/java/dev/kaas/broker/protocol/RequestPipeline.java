package dev.kaas.broker.protocol;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.auth.AccessControl;
import dev.kaas.broker.storage.FileSlice;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.jboss.logging.Logger;

/**
 * One connection's requests between the frame decoder and the socket: header and body decode,
 * dispatch, and responses written strictly in request order (clients match responses to requests
 * by order). At most {@code maxInFlight} requests are decoded and not yet answered; the
 * connection reads only while {@link #accepting()}. A frame that cannot be parsed closes the
 * connection without a word, as Apache does.
 *
 * <p>Runs on the connection's event loop; handler completions may arrive on any thread and hop
 * back through {@code loop} before touching this state.
 */
final class RequestPipeline {
    private static final Logger LOG = Logger.getLogger(RequestPipeline.class);

    /** What the pipeline needs from the socket; the Vert.x binding is {@link Connection}. */
    interface Transport {
        void write(ByteBuffer bytes);

        /** Writes the buffers in order, as one write to the socket (one system call where the transport can). */
        default void write(java.util.List<ByteBuffer> buffers) {
            buffers.forEach(this::write);
        }

        /** Sends segment bytes without a copy through the heap (sendfile), in order with the other writes. */
        void write(FileSlice slice);

        boolean writeQueueFull();

        /** The pipeline may take more frames (true) or not (false); the transport pauses or resumes reading. */
        void readable(boolean readable);

        void close();

        /** The peer as Apache reports it to group tools ({@code /127.0.0.1}). */
        String clientHost();

        /** Who the peer authenticated as: a TLS client certificate's mapped subject, else ANONYMOUS. */
        default org.apache.kafka.common.security.auth.KafkaPrincipal principal() {
            return org.apache.kafka.common.security.auth.KafkaPrincipal.ANONYMOUS;
        }

        default org.apache.kafka.common.security.auth.SecurityProtocol securityProtocol() {
            return org.apache.kafka.common.security.auth.SecurityProtocol.PLAINTEXT;
        }

        /** A failed authentication: read nothing more; after {@code delayMs} write {@code last} (may be empty), then close. */
        default void closeAfter(long delayMs, java.util.List<ByteBuffer> last) {
            last.forEach(this::write);
            close();
        }
    }

    private final Transport transport;
    private final Executor loop;
    private final ApiRegistry registry;
    private final String listenerName;
    private final int maxInFlight;
    private final RequestQuota requestQuota;
    /** The connection's SASL authentication, or null on a listener without SASL. */
    private final SaslSession sasl;
    private final long failedAuthenticationDelayMs;
    private final AccessControl access;
    private final RequestObserver observer;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private boolean closed;
    /** A request asked to close the connection: nothing more is read; earlier requests are still answered. */
    private boolean closing;

    /** When the frame being dispatched reached {@link #onFrame} (System.nanoTime): the start of its request's time. */
    private long frameArrived;
    /** The body size of the frame being dispatched, after its header (Apache's RequestBytes: sizeOfBodyInBytes). */
    private int frameBodyBytes;

    private final class Pending {
        final RequestHeader header;
        final AbstractRequest request;
        final short responseVersion;
        final FrameDecoder.Frame frame;
        boolean done;
        boolean closeAfter;
        /** A failed authentication: this response (if any) goes out after the delay, then the connection closes. */
        boolean failAfter;
        ApiMessage response;
        final RequestContext.Throttle throttle;
        /** When the request's frame reached the pipeline, before its header was parsed (System.nanoTime). */
        final long received = frameArrived;
        final int bodyBytes = frameBodyBytes;
        /** When its handler started and returned, and when what it returned completed (System.nanoTime). */
        long handlerStart = received;
        long handlerEnd = received;
        long completedAt = received;

        Pending(RequestHeader header, AbstractRequest request, short responseVersion, FrameDecoder.Frame frame) {
            this.header = header;
            this.request = request;
            this.responseVersion = responseVersion;
            this.frame = frame;
            // Apache's request.sizeInBytes: the frame without its size field.
            this.throttle = new RequestContext.Throttle(frame == null ? 0 : frame.buffer().limit(), header);
        }
    }

    RequestPipeline(Transport transport, Executor loop, ApiRegistry registry, String listenerName, int maxInFlight) {
        this(transport, loop, registry, listenerName, maxInFlight, null, 0);
    }

    RequestPipeline(Transport transport, Executor loop, ApiRegistry registry, String listenerName, int maxInFlight, SaslSession sasl,
                    long failedAuthenticationDelayMs) {
        this(transport, loop, registry, listenerName, maxInFlight, sasl, failedAuthenticationDelayMs, AccessControl.NONE);
    }

    RequestPipeline(Transport transport, Executor loop, ApiRegistry registry, String listenerName, int maxInFlight, SaslSession sasl,
                    long failedAuthenticationDelayMs, AccessControl access) {
        this(transport, loop, registry, listenerName, maxInFlight, sasl, failedAuthenticationDelayMs, access, RequestQuota.NONE);
    }

    RequestPipeline(Transport transport, Executor loop, ApiRegistry registry, String listenerName, int maxInFlight, SaslSession sasl,
                    long failedAuthenticationDelayMs, AccessControl access, RequestQuota requestQuota) {
        this(transport, loop, registry, listenerName, maxInFlight, sasl, failedAuthenticationDelayMs, access, requestQuota, RequestObserver.NONE);
    }

    RequestPipeline(Transport transport, Executor loop, ApiRegistry registry, String listenerName, int maxInFlight, SaslSession sasl,
                    long failedAuthenticationDelayMs, AccessControl access, RequestQuota requestQuota, RequestObserver observer) {
        this.observer = observer;
        this.requestQuota = requestQuota;
        this.access = access;
        this.sasl = sasl;
        this.failedAuthenticationDelayMs = failedAuthenticationDelayMs;
        this.transport = transport;
        this.loop = loop;
        this.registry = registry;
        this.listenerName = listenerName;
        this.maxInFlight = maxInFlight;
    }

    /** True while another request may be read: fewer than the limit in flight, the socket's write queue has room, no quota delay. */
    boolean accepting() {
        return !closed && !closing && pending.size() < maxInFlight && !transport.writeQueueFull() && !throttled();
    }

    /** Reading stops until this time (System.nanoTime) after a response that carried a quota delay (KIP-219). */
    private long throttledUntilNanos;
    private boolean throttleTimerSet;

    private boolean throttled() {
        return throttledUntilNanos != 0 && System.nanoTime() - throttledUntilNanos < 0;
    }

    /** Stops reading for {@code ms} from now, as Apache mutes a throttled channel once its response is sent. */
    private void throttle(int ms) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        if (throttledUntilNanos == 0 || until - throttledUntilNanos > 0) {
            throttledUntilNanos = until;
        }
        transport.readable(false);
        if (!throttleTimerSet) {
            throttleTimerSet = true;
            // Looks again at least every second, so a connection closed meanwhile is not kept for a long delay.
            CompletableFuture.delayedExecutor(Math.min(ms, 1000), TimeUnit.MILLISECONDS, loop).execute(this::throttleEnded);
        }
    }

    private void throttleEnded() {
        throttleTimerSet = false;
        if (closed) {
            return;
        }
        long left = throttledUntilNanos - System.nanoTime();
        if (left > 0) {
            // A later response extended the delay.
            throttle((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            return;
        }
        throttledUntilNanos = 0;
        transport.readable(accepting());
    }

    int inFlight() {
        return pending.size();
    }

    /** Takes one frame; its memory is released once its response is decided. */
    void onFrame(FrameDecoder.Frame frame) {
        frameArrived = System.nanoTime();
        frameBodyBytes = 0;
        if (closed || closing) {
            frame.release();
            return;
        }
        ByteBuffer buf = frame.buffer();
        if (sasl != null && sasl.raw()) {
            rawToken(frame);
            return;
        }
        short keyId = buf.getShort(0);
        short version = buf.getShort(2);
        if (!ApiKeys.hasId(keyId)) {
            closeFor(frame, "unknown api key " + keyId);
            return;
        }
        ApiKeys key = ApiKeys.forId(keyId);
        RequestHeader header;
        try {
            header = RequestHeader.parse(buf);
            frameBodyBytes = buf.remaining();
        } catch (RuntimeException e) {
            closeFor(frame, "bad request header for " + key + ": " + e.getMessage());
            return;
        }
        boolean supported = registry.supports(key, version);
        if (sasl != null) {
            SaslSession.Verdict verdict = sasl.admit(key, supported);
            if (verdict == SaslSession.Verdict.CLOSE) {
                if (sasl.authenticated()) {
                    // An expired session: Apache's SocketServer closes at once.
                    closeFor(frame, key + " on an expired SASL session");
                } else {
                    frame.release();
                    LOG.debugf("authentication failed listener=%s client=%s: %s before authentication", listenerName,
                            transport.clientHost(), key);
                    closing = true;
                    closed = true;
                    transport.closeAfter(failedAuthenticationDelayMs, java.util.List.of());
                }
                return;
            }
            if (verdict == SaslSession.Verdict.REFUSE) {
                refuseDuringAuthentication(header, key, version, frame, buf);
                return;
            }
            if (verdict == SaslSession.Verdict.SASL) {
                authenticate(header, key, version, frame, buf);
                return;
            }
        }
        if (!supported) {
            if (key == ApiKeys.API_VERSIONS) {
                // KIP-511: answer in v0 with the ranges we serve, so the client can pick one.
                Pending p = new Pending(header, null, (short) 0, frame);
                pending.add(p);
                exemptBeforeAuthentication(p);
                complete(p, ApiVersionsHandler.response(registry, Errors.UNSUPPORTED_VERSION), null);
                return;
            }
            closeFor(frame, key + " v" + version + " is not served");
            return;
        }
        AbstractRequest request;
        try {
            request = AbstractRequest.parseRequest(key, version, buf).request;
        } catch (RuntimeException e) {
            closeFor(frame, "unparsable " + key + " v" + version + ": " + e.getMessage());
            return;
        }
        Pending p = new Pending(header, request, version, frame);
        pending.add(p);
        exemptBeforeAuthentication(p);
        startTrace(p);
        if (!accepting()) {
            transport.readable(false);
        }
        CompletionStage<ApiMessage> stage;
        try {
            KafkaPrincipal principal = transport.principal();
            String host = transport.clientHost();
            // ACL hosts name the address alone, as Apache's clientAddress().getHostAddress().
            Access rights = access.session(principal, host.startsWith("/") ? host.substring(1) : host);
            if (!rights.ready() && key != ApiKeys.API_VERSIONS) {
                // No ACLs known yet (no assignment applied): Apache's listeners wait for its authorizer's first load,
                // so its clients see a delay. A closed connection is what a client retries; a refusal would be final.
                stage = CompletableFuture.failedFuture(new CloseConnection("the authorizer has no ACLs yet"));
            } else {
                long started = System.nanoTime();
                p.handlerStart = started;
                p.throttle.handling(true);
                try {
                    stage = registry.handler(key).handle(new RequestContext(header, listenerName, host, principal,
                            transport.securityProtocol(), p.throttle, rights), request);
                } finally {
                    p.throttle.handling(false);
                    long ended = System.nanoTime();
                    p.handlerEnd = ended;
                    p.throttle.addThreadNanos(ended - started);
                }
            }
        } catch (Throwable t) {
            stage = CompletableFuture.failedFuture(t);
        }
        stage.whenComplete((msg, err) -> loop.execute(() -> complete(p, msg, err)));
    }

    private void startTrace(Pending p) {
        try {
            p.throttle.trace(observer.trace(p.header, p.received, listenerName, transport.clientHost()));
        } catch (RuntimeException e) {
            // A trace is never worth a request.
            LOG.debugf("trace not started api=%s: %s", p.header.apiKey(), e.toString());
        }
    }

    /** A SaslHandshake or SaslAuthenticate of the connection's authentication, answered in order with everything else. */
    private void authenticate(RequestHeader header, ApiKeys key, short version, FrameDecoder.Frame frame, ByteBuffer body) {
        AbstractRequest request;
        try {
            request = AbstractRequest.parseRequest(key, version, body).request;
        } catch (RuntimeException e) {
            closeFor(frame, "unparsable " + key + " v" + version + ": " + e.getMessage());
            return;
        }
        Pending p = new Pending(header, request, version, frame);
        pending.add(p);
        try {
            p.handlerStart = System.nanoTime();
            ApiMessage answer;
            try {
                answer = key == ApiKeys.SASL_HANDSHAKE
                        ? sasl.handshake(((org.apache.kafka.common.requests.SaslHandshakeRequest) request).data(), version)
                        : sasl.authenticate(((org.apache.kafka.common.requests.SaslAuthenticateRequest) request).data());
            } finally {
                p.handlerEnd = System.nanoTime();
            }
            // Apache authenticates on its network threads, outside any request quota.
            p.throttle.requestQuotaRecorded();
            complete(p, answer, null);
        } catch (SaslSession.Failure f) {
            LOG.debugf("authentication failed listener=%s client=%s: %s", listenerName, transport.clientHost(), f.getMessage());
            p.frame.release();
            p.done = true;
            p.failAfter = true;
            p.response = f.response;
            closing = true;
            flushResponses();
        }
    }

    /** Another request amid the SaslAuthenticate exchange: its own error response, ILLEGAL_SASL_STATE, after the delay; then close. */
    private void refuseDuringAuthentication(RequestHeader header, ApiKeys key, short version, FrameDecoder.Frame frame, ByteBuffer body) {
        AbstractRequest request = null;
        try {
            request = AbstractRequest.parseRequest(key, version, body).request;
        } catch (RuntimeException e) {
            // Unparsable: nothing to answer; closed after the delay all the same.
        }
        Pending p = new Pending(header, request, version, frame);
        pending.add(p);
        p.frame.release();
        p.done = true;
        p.failAfter = true;
        p.response = request == null ? null : request.getErrorResponse(0, new org.apache.kafka.common.errors.IllegalSaslStateException(
                "Unexpected Kafka request of type " + key + " during SASL authentication.")).data();
        closing = true;
        LOG.debugf("authentication failed listener=%s client=%s: %s during SASL authentication", listenerName, transport.clientHost(), key);
        flushResponses();
    }

    /** A raw token after SaslHandshake v0 (KIP-43): its challenge goes back size-prefixed, without a response header. */
    private void rawToken(FrameDecoder.Frame frame) {
        ByteBuffer buf = frame.buffer();
        byte[] token = new byte[buf.remaining()];
        buf.get(token);
        frame.release();
        try {
            byte[] challenge = sasl.rawToken(token);
            if (challenge != null) {
                transport.write(ByteBuffer.allocate(4 + challenge.length).putInt(challenge.length).put(challenge).flip());
            }
        } catch (SaslSession.Failure f) {
            LOG.debugf("authentication failed listener=%s client=%s: %s", listenerName, transport.clientHost(), f.getMessage());
            closing = true;
            closed = true;
            transport.closeAfter(failedAuthenticationDelayMs, java.util.List.of());
        }
    }

    /** The socket's write queue drained. */
    void onWritable() {
        if (accepting()) {
            transport.readable(true);
        }
    }

    /** The socket closed: nothing more is written; requests still running release their memory when they end. */
    void onClosed() {
        closed = true;
    }

    private void closeFor(FrameDecoder.Frame frame, String reason) {
        frame.release();
        LOG.debugf("closing connection: %s client=%s", reason, transport.clientHost());
        close();
    }

    private void complete(Pending p, ApiMessage msg, Throwable err) {
        p.completedAt = System.nanoTime();
        p.frame.release();
        p.done = true;
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        if (cause instanceof CloseConnection) {
            LOG.debugf("closing connection: %s client=%s", cause.getMessage(), transport.clientHost());
            // Answer what came before, then close: later requests on this connection are dropped with it.
            p.response = null;
            p.closeAfter = true;
            closing = true;
            flushResponses();
            return;
        }
        if (msg != null || err != null) {
            recordRequestQuota(p);
        }
        try {
            if (err != null) {
                p.response = errorResponse(p, err);
            } else {
                p.response = msg == null ? null : ThrottleTimes.raise(msg, p.throttle.ms());
            }
        } catch (RuntimeException e) {
            // The request's own error response could not be made (a request Apache's would fail on too): no
            // answer at all would shift every later one onto the wrong request, so the connection closes.
            LOG.debugf("closing connection: no error response for api=%s: %s client=%s", p.header.apiKey(), e, transport.clientHost());
            p.response = null;
            p.closeAfter = true;
            closing = true;
        }
        flushResponses();
    }

    private ApiMessage errorResponse(Pending p, Throwable err) {
        Throwable cause = ErrorMapper.unwrap(err);
        if (cause instanceof java.io.IOException || cause instanceof java.io.UncheckedIOException) {
            // A disk failure is retriable for the client (as ErrorMapper maps it), never UNKNOWN_SERVER_ERROR.
            LOG.warnf("request failed on storage api=%s error=%s", p.header.apiKey(), cause.toString());
            cause = new org.apache.kafka.common.errors.KafkaStorageException(cause.getMessage(), cause);
        } else if (!(cause instanceof ApiException)) {
            LOG.errorf(cause, "request failed api=%s version=%d correlation=%d client=%s",
                    p.header.apiKey(), p.header.apiVersion(), p.header.correlationId(), transport.clientHost());
        }
        return p.request.getErrorResponse(p.throttle.ms(), cause).data();
    }

    /**
     * Apache's request quota, recorded as the response is made (sendResponseMaybeThrottle): the
     * delay goes into the response's throttle time when longer than a handler's own (a byte rate)
     * and holds the connection's reads. Not for a request without a response (acks=0 Produce, as
     * Apache exempts it), nor for WriteTxnMarkers, which Apache exempts as a cluster action.
     */
    private void recordRequestQuota(Pending p) {
        if (p.throttle.isRequestQuotaRecorded() || p.header.apiKey() == ApiKeys.WRITE_TXN_MARKERS) {
            return;
        }
        try {
            p.throttle.throttle(requestQuota.recordAndGetThrottleTimeMs(transport.principal(), p.header.clientId(),
                    p.throttle.threadNanos(), System.currentTimeMillis()));
        } catch (RuntimeException e) {
            // The answer matters more than the measurement: it goes out unthrottled.
            LOG.warnf(e, "could not record the request quota api=%s client=%s", p.header.apiKey(), transport.clientHost());
        }
    }

    /** The ApiVersions a SASL client sends before it authenticates: Apache answers it on its network threads, outside any quota. */
    private void exemptBeforeAuthentication(Pending p) {
        if (sasl != null && !sasl.authenticated()) {
            p.throttle.requestQuotaRecorded();
        }
    }

    /**
     * Writes every response that is next in order. Responses that complete together (one group
     * commit acknowledges several produce requests) go out as one socket write, not one each.
     */
    private void flushResponses() {
        java.util.List<ByteBuffer> heap = new java.util.ArrayList<>();
        while (!pending.isEmpty() && pending.peek().done) {
            Pending p = pending.poll();
            if (p.failAfter) {
                writeHeap(heap);
                java.util.List<ByteBuffer> last = new java.util.ArrayList<>();
                if (p.response != null && !closed) {
                    try {
                        for (Object part : Frames.encodeResponseParts(p.header.apiKey(), p.responseVersion, p.header.correlationId(), p.response)) {
                            last.add((ByteBuffer) part);
                        }
                    } catch (RuntimeException e) {
                        LOG.debugf("could not encode the failed authentication's response api=%s: %s", p.header.apiKey(), e.toString());
                        last.clear();
                    }
                }
                if (!closed) {
                    closed = true;
                    transport.closeAfter(failedAuthenticationDelayMs, last);
                }
                return;
            }
            if (p.closeAfter) {
                writeHeap(heap);
                endUnanswered(p);
                close();
                return;
            }
            int delay = p.throttle.ms();
            long dequeued = System.nanoTime();
            if (p.response == null || closed) {
                observe(p, dequeued, dequeued, delay);
                if (delay > 0 && !closed) {
                    // acks=0 gets no response, and is still held to its quota.
                    throttle(delay);
                }
                continue;
            }
            try {
                for (Object part : Frames.encodeResponseParts(p.header.apiKey(), p.responseVersion, p.header.correlationId(), p.response)) {
                    if (part instanceof FileSlice slice) {
                        writeHeap(heap);
                        transport.write(slice);
                    } else {
                        heap.add((ByteBuffer) part);
                    }
                }
            } catch (RuntimeException e) {
                LOG.errorf(e, "could not encode response api=%s version=%d", p.header.apiKey(), p.responseVersion);
                writeHeap(heap);
                endUnanswered(p);
                close();
                return;
            }
            observe(p, dequeued, System.nanoTime(), delay);
            if (delay > 0) {
                throttle(delay);
            }
        }
        writeHeap(heap);
        transport.readable(accepting());
    }

    /** The connection's timing, refilled per request (the loop is its only thread). */
    private final RequestTiming timing = new RequestTiming();

    /** Parsed requests only: a SASL token or a refused frame is not one of Apache's request types. */
    private void observe(Pending p, long dequeued, long sent, int throttleMs) {
        if (p.request == null) {
            return;
        }
        RequestTiming t = fillTiming(p, dequeued, sent, throttleMs);
        observer.done(t);
        endTrace(p, t, closed ? null : p.response);
    }

    /**
     * A request the connection closes on instead of answering (its handler asked to close, or its
     * response could not be encoded): not a finished request for the metrics, but its trace ends,
     * unanswered, so that the spans its work already made have their parent.
     */
    private void endUnanswered(Pending p) {
        if (p.request != null && p.throttle.trace() != null) {
            long now = System.nanoTime();
            endTrace(p, fillTiming(p, now, now, p.throttle.ms()), null);
        }
    }

    private void endTrace(Pending p, RequestTiming t, ApiMessage response) {
        RequestTrace trace = p.throttle.trace();
        if (trace != null) {
            try {
                trace.end(t, p.request, response);
            } catch (RuntimeException e) {
                LOG.debugf("trace not ended api=%s: %s", p.header.apiKey(), e.toString());
            }
        }
    }

    private RequestTiming fillTiming(Pending p, long dequeued, long sent, int throttleMs) {
        RequestTiming t = timing;
        t.key = p.header.apiKey();
        t.version = p.header.apiVersion();
        t.fromFollower = p.request instanceof org.apache.kafka.common.requests.FetchRequest f && f.isFromFollower();
        long[] n = t.nanos;
        n[RequestTiming.QUEUE] = p.handlerStart - p.received;
        n[RequestTiming.LOCAL] = p.handlerEnd - p.handlerStart;
        // A request answered without a handler (a refusal) completes before "handlerEnd" is ever set.
        n[RequestTiming.REMOTE] = Math.max(0, p.completedAt - p.handlerEnd);
        n[RequestTiming.RESPONSE_QUEUE] = Math.max(0, dequeued - p.completedAt);
        n[RequestTiming.SEND] = sent - dequeued;
        n[RequestTiming.TOTAL] = sent - p.received;
        t.throttleMs = throttleMs;
        t.requestBytes = p.bodyBytes;
        t.conversionNanos = p.throttle.conversionNanos();
        t.temporaryMemoryBytes = p.throttle.temporaryMemoryBytes();
        return t;
    }

    private void writeHeap(java.util.List<ByteBuffer> heap) {
        if (heap.isEmpty() || closed) {
            heap.clear();
            return;
        }
        if (heap.size() == 1) {
            transport.write(heap.get(0));
        } else {
            transport.write(java.util.List.copyOf(heap));
        }
        heap.clear();
    }

    private void close() {
        if (!closed) {
            closed = true;
            transport.close();
        }
    }
}
