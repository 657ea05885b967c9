package dev.kaas.broker.protocol;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * SaslAuthenticate (key 36) where no authentication is under way: Apache's KafkaApis answers
 * ILLEGAL_SASL_STATE with its message; the exchange itself is {@link SaslSession}'s.
 */
@ApplicationScoped
public class SaslAuthenticateHandler implements ApiHandler {
    @Override
    public ApiKeys key() {
        return ApiKeys.SASL_AUTHENTICATE;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request) {
        return CompletableFuture.completedFuture(new SaslAuthenticateResponseData().setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
                .setErrorMessage("SaslAuthenticate request received after successful authentication").setAuthBytes(new byte[0]));
    }
}
