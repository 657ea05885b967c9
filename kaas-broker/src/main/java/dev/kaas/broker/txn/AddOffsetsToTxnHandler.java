package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.Slots;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * AddOffsetsToTxn v0–v3: the group's offsets join the transaction as Apache's
 * {@code __consumer_offsets-<slot of the group>}, so the transaction's marker reaches the group
 * coordinator, which then commits or drops the offsets TxnOffsetCommit left pending.
 */
@ApplicationScoped
public class AddOffsetsToTxnHandler implements ApiHandler {
    private final TxnCoordinator coordinator;

    public AddOffsetsToTxnHandler(TxnCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ADD_OFFSETS_TO_TXN;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        AddOffsetsToTxnRequestData d = ((AddOffsetsToTxnRequest) request).data();
        String id = d.transactionalId() == null ? "" : d.transactionalId();
        // Apache's: WRITE on the transactional id, then READ on the group.
        if (!ctx.allowed(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, id)) {
            return CompletableFuture.completedFuture(answer(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        }
        if (!ctx.allowed(AclOperation.READ, ResourceType.GROUP, d.groupId() == null ? "" : d.groupId())) {
            return CompletableFuture.completedFuture(answer(Errors.GROUP_AUTHORIZATION_FAILED));
        }
        if (d.groupId() == null || d.groupId().isEmpty()) {
            return CompletableFuture.completedFuture(answer(Errors.INVALID_GROUP_ID));
        }
        TopicPartition offsets = new TopicPartition(TxnStateMachine.GROUP_OFFSETS, Slots.slotFor(d.groupId()));
        short version = ctx.apiVersion();
        return coordinator.call(id, slot -> slot.addPartitions(id, d.producerId(), d.producerEpoch(), Set.of(offsets)))
                .<ApiMessage>thenApply(e -> answer(TxnRequests.forVersion(e, version, (short) 2)))
                .exceptionally(e -> answer(TxnRequests.coordinatorError(e, id)));
    }

    private static AddOffsetsToTxnResponseData answer(Errors e) {
        return new AddOffsetsToTxnResponseData().setErrorCode(e.code()).setThrottleTimeMs(0);
    }
}
