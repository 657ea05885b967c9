package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * EndTxn v0–v3: answered once PrepareCommit/PrepareAbort is durable in the slot file; the markers
 * follow asynchronously, as Apache. A retry of a decided transaction gets the first answer.
 */
@ApplicationScoped
public class EndTxnHandler implements ApiHandler {
    private final TxnCoordinator coordinator;

    public EndTxnHandler(TxnCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.END_TXN;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        EndTxnRequestData d = ((EndTxnRequest) request).data();
        String id = d.transactionalId() == null ? "" : d.transactionalId();
        if (!ctx.allowed(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, id)) {
            return CompletableFuture.completedFuture(answer(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        }
        short version = ctx.apiVersion();
        return coordinator.call(id, slot -> CompletableFuture.completedFuture(
                        slot.endTxn(id, d.producerId(), d.producerEpoch(), d.committed())))
                .<ApiMessage>thenApply(e -> answer(TxnRequests.forVersion(e, version, (short) 2)))
                .exceptionally(e -> answer(TxnRequests.coordinatorError(e, id)));
    }

    private static EndTxnResponseData answer(Errors e) {
        return new EndTxnResponseData().setErrorCode(e.code()).setThrottleTimeMs(0);
    }
}
