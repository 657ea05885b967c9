package dev.kaas.broker.protocol;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * SaslHandshake (key 17) where no authentication is under way: on a listener without SASL, or
 * after a connection authenticated (without re-authentication due). Apache's KafkaApis answers
 * ILLEGAL_SASL_STATE; the handshake itself is {@link SaslSession}'s.
 */
@ApplicationScoped
public class SaslHandshakeHandler implements ApiHandler {
    @Override
    public ApiKeys key() {
        return ApiKeys.SASL_HANDSHAKE;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request) {
        return CompletableFuture.completedFuture(new SaslHandshakeResponseData().setErrorCode(Errors.ILLEGAL_SASL_STATE.code()));
    }
}
