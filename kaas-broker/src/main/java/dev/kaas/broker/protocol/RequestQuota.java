package dev.kaas.broker.protocol;

import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * The request quota of clients ({@code request_percentage}, KIP-124): the time the broker spent
 * handling a client's requests, as a percentage of one thread, over the quota window. Asked once
 * per answered request with the time its handling took.
 */
@FunctionalInterface
public interface RequestQuota {
    /** No quota anywhere. */
    RequestQuota NONE = (principal, clientId, threadNanos, nowMs) -> 0;

    /** Records {@code threadNanos} of handling for the client and answers how long it must wait (0 within its quota). */
    int recordAndGetThrottleTimeMs(KafkaPrincipal principal, String clientId, long threadNanos, long nowMs);
}
