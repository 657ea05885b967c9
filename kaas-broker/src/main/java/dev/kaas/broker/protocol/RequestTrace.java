package dev.kaas.broker.protocol;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * One sampled request's trace: a span from its frame's arrival to its response's hand-off to the
 * socket, with child spans for the parts of its work (src/docs/operations.md#tracing). Handlers
 * find it on the request's {@link RequestContext.Throttle#trace()}, null for a request not
 * sampled, and add what they timed; any thread may. Nothing here blocks: spans are queued for export.
 */
public interface RequestTrace {
    /**
     * A child span, from {@code startNanos} to {@code endNanos} (System.nanoTime), on a partition
     * ({@code partition} null: none), with one numeric attribute ({@code attribute} null: none).
     * Never throws: it is called from the middle of an append whose outcome it must not change.
     */
    void span(String name, long startNanos, long endNanos, TopicPartition partition, String attribute, long value);

    default void span(String name, long startNanos, long endNanos, TopicPartition partition) {
        span(name, startNanos, endNanos, partition, null, 0);
    }

    /**
     * The request is done: answered ({@code response}), or done without an answer (null: acks=0,
     * or its connection closed). Called once, on the connection's event loop, with the times the
     * metrics read; {@code timing} is reused afterwards, so it is read now.
     */
    void end(RequestTiming timing, AbstractRequest request, ApiMessage response);
}
