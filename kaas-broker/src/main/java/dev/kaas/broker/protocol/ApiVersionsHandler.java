package dev.kaas.broker.protocol;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;

/** ApiVersions: exactly the registry's table. An unsupported version is answered by {@link Connection} in v0. */
@ApplicationScoped
public class ApiVersionsHandler implements ApiHandler {
    @Inject
    Provider<ApiRegistry> registry;

    @Override
    public ApiKeys key() {
        return ApiKeys.API_VERSIONS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request) {
        ApiVersionsRequest req = (ApiVersionsRequest) request;
        if (!req.isValid()) {
            return CompletableFuture.completedFuture(new ApiVersionsResponseData().setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        return CompletableFuture.completedFuture(response(registry.get(), Errors.NONE));
    }

    static ApiVersionsResponseData response(ApiRegistry registry, Errors error) {
        return new ApiVersionsResponseData().setErrorCode(error.code()).setApiKeys(registry.apiVersions()).setThrottleTimeMs(0);
    }
}
