package dev.kaas.broker.protocol;

import org.apache.kafka.common.protocol.ApiKeys;

/**
 * Told of every request a connection finished: answered, or done without an answer (acks=0).
 * Called on the connection's event loop, so an implementation must be cheap and must not block
 * (the broker's metrics add to counters).
 */
@FunctionalInterface
public interface RequestObserver {
    /**
     * @param fromFollower a Fetch from a replica (a replica id set), not a consumer's
     * @param nanos        from the request's frame taken off the socket to its response handed to it
     */
    void done(ApiKeys key, short version, boolean fromFollower, long nanos);

    RequestObserver NONE = (key, version, fromFollower, nanos) -> { };
}
