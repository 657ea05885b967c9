package dev.kaas.broker.protocol;

import dev.kaas.broker.auth.Access;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * What a handler knows about the request besides its body.
 *
 * @param listenerName the listener the connection arrived on: Metadata answers with that listener's advertised endpoints
 * @param clientHost the peer address as Apache reports it to group tools ({@code /127.0.0.1})
 * @param principal who the connection authenticated as (ANONYMOUS on a PLAINTEXT listener, or a
 *                  TLS one without a client certificate)
 * @param securityProtocol the listener's protocol
 * @param throttle the request's size, and how long a handler found the client must wait (a quota)
 * @param access what the principal may do (the ACLs), asked where Apache's KafkaApis asks its authorizer
 */
public record RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                             SecurityProtocol securityProtocol, Throttle throttle, Access access) {
    public RequestContext(RequestHeader header, String listenerName, String clientHost) {
        this(header, listenerName, clientHost, KafkaPrincipal.ANONYMOUS, SecurityProtocol.PLAINTEXT);
    }

    public RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                          SecurityProtocol securityProtocol) {
        this(header, listenerName, clientHost, principal, securityProtocol, new Throttle(0));
    }

    public RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                          SecurityProtocol securityProtocol, Throttle throttle) {
        this(header, listenerName, clientHost, principal, securityProtocol, throttle, Access.ALL);
    }

    /**
     * A quota's verdict on one request (KIP-219): the handler sets the delay and puts it in its
     * response's {@code throttle_time_ms}; the connection then reads nothing more from the client
     * for that long once the response is written (or at once, when there is none: acks=0).
     */
    public static final class Throttle {
        private final int requestBytes;
        private volatile int ms;
        /** The request whose handler is running on this thread: work it hands to other threads is charged to it. */
        private static final ThreadLocal<Throttle> HANDLING = new ThreadLocal<>();

        private final java.util.concurrent.atomic.AtomicLong threadNanos = new java.util.concurrent.atomic.AtomicLong();
        private volatile boolean requestQuotaRecorded;
        /** The request's header, for the log lines its handler writes (null: unknown). */
        private final RequestHeader header;
        /** The request's trace when it was sampled, else null; set before its handler runs. */
        private RequestTrace trace;

        public Throttle(int requestBytes) {
            this(requestBytes, null);
        }

        public Throttle(int requestBytes, RequestHeader header) {
            this.requestBytes = requestBytes;
            this.header = header;
        }

        /** The request's trace, or null: not sampled (see {@link RequestObserver#trace}). */
        public RequestTrace trace() {
            return trace;
        }

        /** Set on the event loop before the handler runs: the handler's threads see it through the handoff to them. */
        public void trace(RequestTrace trace) {
            this.trace = trace;
        }

        /** The header of the request this throttle belongs to, or null. */
        public RequestHeader header() {
            return header;
        }

        /** The request's size without its size field (Apache's request.sizeInBytes), as Apache's produce quota counts it. */
        public int requestBytes() {
            return requestBytes;
        }

        public void throttle(int delayMs) {
            ms = Math.max(ms, delayMs);
        }

        public int ms() {
            return ms;
        }

        /**
         * Time a thread spent on the request: the handler's own call, a partition writer's append.
         * Waits (a long poll, an fsync, the controller) are not counted, as Apache's request-time
         * leaves out a request's time in purgatory.
         */
        public void addThreadNanos(long nanos) {
            threadNanos.addAndGet(Math.max(0, nanos));
        }

        public long threadNanos() {
            return threadNanos.get();
        }

        // Field updaters, not two more objects per request: almost no request converts anything.
        private static final java.util.concurrent.atomic.AtomicLongFieldUpdater<Throttle> CONVERSION_NANOS =
                java.util.concurrent.atomic.AtomicLongFieldUpdater.newUpdater(Throttle.class, "conversionNanos");
        private static final java.util.concurrent.atomic.AtomicLongFieldUpdater<Throttle> TEMPORARY_BYTES =
                java.util.concurrent.atomic.AtomicLongFieldUpdater.newUpdater(Throttle.class, "temporaryMemoryBytes");
        private volatile long conversionNanos;
        private volatile long temporaryMemoryBytes;

        /** Records converted between message formats for this request (partition writers may add concurrently). */
        public void addConversion(long nanos, long bytes) {
            CONVERSION_NANOS.addAndGet(this, Math.max(0, nanos));
            TEMPORARY_BYTES.addAndGet(this, Math.max(0, bytes));
        }

        public long conversionNanos() {
            return conversionNanos;
        }

        public long temporaryMemoryBytes() {
            return temporaryMemoryBytes;
        }

        /**
         * The request whose handler is running on the calling thread, or null: a coordinator that
         * queues work for a request takes it here and adds the work's time to it.
         */
        public static Throttle handling() {
            return HANDLING.get();
        }

        /** Marks this request as the one handled on the calling thread ({@code on}), or no longer. */
        public void handling(boolean on) {
            if (on) {
                HANDLING.set(this);
            } else {
                HANDLING.remove();
            }
        }

        /** The handler recorded the request quota itself (a throttled Fetch is answered empty): the connection does not again. */
        public void requestQuotaRecorded() {
            requestQuotaRecorded = true;
        }

        public boolean isRequestQuotaRecorded() {
            return requestQuotaRecorded;
        }
    }

    /** Whether the principal may do {@code operation} on the resource (Apache's AuthHelper.authorize). */
    public boolean allowed(org.apache.kafka.common.acl.AclOperation operation, org.apache.kafka.common.resource.ResourceType type, String name) {
        return access.allowed(operation, type, name);
    }

    /**
     * Apache's AuthHelper.authorizeClusterOperation: a principal without {@code operation} on the
     * cluster gets the request's error response with CLUSTER_AUTHORIZATION_FAILED.
     */
    public void authorizeCluster(org.apache.kafka.common.acl.AclOperation operation) {
        if (!access.allowedOnCluster(operation)) {
            throw new org.apache.kafka.common.errors.ClusterAuthorizationException("Request " + header.apiKey() + " v" + header.apiVersion()
                    + " of " + principal + " from " + clientHost + " is not authorized.");
        }
    }

    /**
     * A check whose denial is the request's error response: the resource type's authorization
     * error (Apache's AclEntry.authorizationError) with its default message, as KafkaApis sends it.
     */
    public void authorize(org.apache.kafka.common.acl.AclOperation operation, org.apache.kafka.common.resource.ResourceType type, String name) {
        if (!access.allowed(operation, type, name)) {
            throw Access.denial(type).exception();
        }
    }

    public String clientId() {
        return header.clientId() == null ? "" : header.clientId();
    }

    public short apiVersion() {
        return header.apiVersion();
    }
}
