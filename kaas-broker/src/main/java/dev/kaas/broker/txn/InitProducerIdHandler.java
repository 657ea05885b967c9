package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * InitProducerId v0–v4. Without a transactional id, as Apache: a fresh producer id at epoch 0
 * every time (also the idempotent KIP-360 bump). With one, the transaction coordinator of its
 * slot answers (KIP-98 fencing, KIP-360 epoch bumps with {@code producer_id}/{@code producer_epoch},
 * rotation at an exhausted epoch); below v4, PRODUCER_FENCED is INVALID_PRODUCER_EPOCH.
 */
@ApplicationScoped
public class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdAllocator ids;
    private final TxnCoordinator coordinator;

    public InitProducerIdHandler(ProducerIdAllocator ids, TxnCoordinator coordinator) {
        this.ids = ids;
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.INIT_PRODUCER_ID;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        InitProducerIdRequestData data = ((InitProducerIdRequest) request).data();
        // Apache's handleInitProducerIdRequest, before the request's own checks: WRITE on the transactional id;
        // without one, IDEMPOTENT_WRITE on the cluster or WRITE on any topic (KIP-679).
        if (data.transactionalId() != null) {
            if (!ctx.allowed(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId())) {
                return CompletableFuture.completedFuture(error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
            }
        } else if (!ctx.access().allowedOnCluster(AclOperation.IDEMPOTENT_WRITE)
                && !ctx.access().allowedOnAny(AclOperation.WRITE, ResourceType.TOPIC)) {
            return CompletableFuture.completedFuture(error(Errors.CLUSTER_AUTHORIZATION_FAILED));
        }
        boolean noPid = data.producerId() == RecordBatch.NO_PRODUCER_ID;
        boolean noEpoch = data.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH;
        if (noPid != noEpoch) {
            // As Apache: either both or neither.
            return CompletableFuture.completedFuture(error(Errors.INVALID_REQUEST));
        }
        String id = data.transactionalId();
        if (id == null) {
            return ids.nextId().thenApply(pid -> new InitProducerIdResponseData()
                    .setErrorCode(Errors.NONE.code()).setProducerId(pid).setProducerEpoch((short) 0).setThrottleTimeMs(0));
        }
        short version = ctx.apiVersion();
        return coordinator.call(id, slot -> slot.initProducerId(id, data.transactionTimeoutMs(), data.producerId(), data.producerEpoch()))
                .<ApiMessage>thenApply(r -> r.error() == Errors.NONE
                        ? new InitProducerIdResponseData().setErrorCode(Errors.NONE.code()).setProducerId(r.producerId())
                                .setProducerEpoch(r.epoch()).setThrottleTimeMs(0)
                        : error(TxnRequests.forVersion(r.error(), version, (short) 4)))
                .exceptionally(e -> error(TxnRequests.coordinatorError(e, id)));
    }

    private static InitProducerIdResponseData error(Errors e) {
        return new InitProducerIdResponseData().setErrorCode(e.code()).setProducerId(-1).setProducerEpoch((short) -1).setThrottleTimeMs(0);
    }
}
