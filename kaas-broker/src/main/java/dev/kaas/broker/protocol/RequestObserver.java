package dev.kaas.broker.protocol;

/**
 * Told of every request a connection finished: answered, or done without an answer (acks=0).
 * Called on the connection's event loop, so an implementation must be cheap and must not block
 * (the broker's metrics add to counters).
 */
@FunctionalInterface
public interface RequestObserver {
    /** {@code timing} is the connection's, refilled for its next request: read it now, keep nothing. */
    void done(RequestTiming timing);

    /**
     * A trace for the request whose frame arrived at {@code arrivedNanos} (System.nanoTime), or
     * null when it is not sampled (tracing off: always). Called on the event loop for each parsed
     * request before its handler runs; the trace is ended through {@link RequestTrace#end}.
     */
    default RequestTrace trace(org.apache.kafka.common.requests.RequestHeader header, long arrivedNanos, String listenerName,
                               String clientHost) {
        return null;
    }

    RequestObserver NONE = timing -> { };
}
