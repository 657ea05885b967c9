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
    public long queueNanos;
    public long localNanos;
    public long remoteNanos;
    public long responseQueueNanos;
    public long sendNanos;
    public long totalNanos;
    /** The quota delay the response carried (and the connection was muted for), as Apache's ThrottleTimeMs. */
    public int throttleMs;
}
