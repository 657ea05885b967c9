package dev.kaas.broker.protocol;

import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * One Kafka API. Called on the connection's event loop; must not block. A completion with
 * {@code null} means "send no response" (Produce with acks=0). A failed completion becomes
 * the API's error response through {@link AbstractRequest#getErrorResponse}.
 */
public interface ApiHandler {
    ApiKeys key();

    /** Lowest version served; Apache 3.7's by default. */
    default short minVersion() {
        return key().oldestVersion();
    }

    /** Highest version served; Apache 3.7's stable maximum by default. */
    default short maxVersion() {
        return key().latestVersion(false);
    }

    CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request);
}
