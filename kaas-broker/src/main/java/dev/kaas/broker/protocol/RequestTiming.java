package dev.kaas.broker.protocol;

import org.apache.kafka.common.protocol.ApiKeys;

/**
 * One finished request's times, in Apache's {@code RequestMetrics} parts, which add up to the
 * total: queue (frame off the socket to its handler: parsing, the session's rights), local (the
 * handler's own run on the event loop), remote (the wait for what the handler started: an fsync,
 * a long-polling Fetch, a coordinator), response queue (behind earlier responses of the same
 * connection, which go out in order), send (encoding the response and handing it to the socket,
 * whose write is asynchronous). One instance per connection, refilled for each request: an
 * observer reads it during {@link RequestObserver#done} and keeps nothing.
 */
public final class RequestTiming {
    public ApiKeys key;
    public short version;
    /** A Fetch from a replica (a replica id set), not a consumer's. */
    public boolean fromFollower;
    /**
     * The parts, in nanoseconds, in Apache's order: total, request queue, local, remote, response
     * queue, send ({@link #TOTAL} … {@link #SEND}).
     */
    public final long[] nanos = new long[6];
    public static final int TOTAL = 0;
    public static final int QUEUE = 1;
    public static final int LOCAL = 2;
    public static final int REMOTE = 3;
    public static final int RESPONSE_QUEUE = 4;
    public static final int SEND = 5;
    /** The quota delay the response carried (and the connection was muted for), as Apache's ThrottleTimeMs. */
    public int throttleMs;
    /** The request's body size (after its header), as Apache's RequestBytes. */
    public int requestBytes;
    /** Time spent converting records between message formats, and the bytes that took (Apache's MessageConversionsTimeMs, TemporaryMemoryBytes). */
    public long conversionNanos;
    public long temporaryMemoryBytes;
}
