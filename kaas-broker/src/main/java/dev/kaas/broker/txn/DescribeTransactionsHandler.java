package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeTransactions v0 (KIP-664): the coordinator's view of each transactional id, with
 * Apache's state names; an id the coordinator does not know is TRANSACTIONAL_ID_NOT_FOUND.
 */
@ApplicationScoped
public class DescribeTransactionsHandler implements ApiHandler {
    private final TxnCoordinator coordinator;

    public DescribeTransactionsHandler(TxnCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_TRANSACTIONS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DescribeTransactionsRequestData d = ((DescribeTransactionsRequest) request).data();
        List<CompletableFuture<DescribeTransactionsResponseData.TransactionState>> all = new ArrayList<>();
        for (String id : d.transactionalIds()) {
            var base = new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id).setTransactionState("")
                    .setProducerId(-1).setProducerEpoch((short) -1).setTransactionStartTimeMs(-1);
            if (id == null || id.isEmpty()) {
                all.add(CompletableFuture.completedFuture(base.setTransactionalId("").setErrorCode(Errors.INVALID_REQUEST.code())));
                continue;
            }
            if (!ctx.allowed(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, id)) {
                all.add(CompletableFuture.completedFuture(base.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())));
                continue;
            }
            all.add(coordinator.call(id, slot -> slot.usable() ? CompletableFuture.completedFuture(slot.state().get(id))
                            : CompletableFuture.<TxnMetadata>failedFuture(new org.apache.kafka.common.errors.NotCoordinatorException(
                                    "transaction slot taken over")))
                    .thenApply(m -> m == null ? base.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code()) : describe(base, m))
                    .exceptionally(e -> base.setErrorCode(TxnRequests.coordinatorError(e, id).code())));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
            DescribeTransactionsResponseData resp = new DescribeTransactionsResponseData().setThrottleTimeMs(0);
            all.forEach(f -> resp.transactionStates().add(f.join()));
            // The transaction's topics the principal may not DESCRIBE are left out, silently, as Apache's.
            resp.transactionStates().forEach(st -> st.topics().removeIf(t -> !ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic())));
            return resp;
        });
    }

    private static DescribeTransactionsResponseData.TransactionState describe(DescribeTransactionsResponseData.TransactionState s,
                                                                             TxnMetadata m) {
        s.setErrorCode(Errors.NONE.code()).setTransactionState(m.state().apacheName()).setTransactionTimeoutMs(m.timeoutMs())
                .setTransactionStartTimeMs(m.startTimestamp()).setProducerId(m.producerId()).setProducerEpoch(m.producerEpoch());
        for (TopicPartition tp : m.partitionSet()) {
            var t = s.topics().find(tp.topic());
            if (t == null) {
                t = new DescribeTransactionsResponseData.TopicData().setTopic(tp.topic());
                s.topics().add(t);
            }
            t.partitions().add(tp.partition());
        }
        return s;
    }
}
