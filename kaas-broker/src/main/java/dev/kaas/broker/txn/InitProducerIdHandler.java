package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;

/**
 * InitProducerId for idempotent producers: like Apache without a transactional id, every call
 * gets a fresh producer ID at epoch 0 (also the KIP-360 bump path). Transactional ids need the
 * transaction coordinator, which is a later issue: they get NOT_COORDINATOR (clients reach this
 * only after a FindCoordinator that kaas does not advertise yet).
 */
@ApplicationScoped
public class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdAllocator ids;

    public InitProducerIdHandler(ProducerIdAllocator ids) {
        this.ids = ids;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.INIT_PRODUCER_ID;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        InitProducerIdRequestData data = ((InitProducerIdRequest) request).data();
        if (data.transactionalId() != null) {
            return CompletableFuture.completedFuture(new InitProducerIdResponseData()
                    .setErrorCode(Errors.NOT_COORDINATOR.code()).setProducerId(-1).setProducerEpoch((short) -1));
        }
        return ids.nextId().thenApply(id -> new InitProducerIdResponseData()
                .setErrorCode(Errors.NONE.code()).setProducerId(id).setProducerEpoch((short) 0).setThrottleTimeMs(0));
    }
}
