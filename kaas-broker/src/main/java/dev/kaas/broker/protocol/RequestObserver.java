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

    RequestObserver NONE = timing -> { };
}
