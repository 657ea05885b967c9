package dev.kaas.broker.txn;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * ListTransactions v0 (KIP-664): the transactional ids of the slots this broker coordinates,
 * filtered by state name and producer id as Apache; state names it does not know come back in
 * {@code unknown_state_filters}.
 */
@ApplicationScoped
public class ListTransactionsHandler implements ApiHandler {
    private final TxnCoordinator coordinator;

    public ListTransactionsHandler(TxnCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.LIST_TRANSACTIONS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ListTransactionsRequestData d = ((ListTransactionsRequest) request).data();
        Set<TxnState> states = new HashSet<>();
        List<String> unknown = new ArrayList<>();
        for (String name : d.stateFilters()) {
            TxnState s = TxnState.forApacheName(name);
            if (s == null) {
                unknown.add(name);
            } else {
                states.add(s);
            }
        }
        Set<Long> pids = new HashSet<>(d.producerIdFilters());
        return coordinator.callAll(slot -> (slot.usable() ? slot.state().all() : List.<TxnMetadata>of()).stream()
                        .filter(m -> (d.stateFilters().isEmpty() || states.contains(m.state()))
                                && (pids.isEmpty() || pids.contains(m.producerId())))
                        .map(m -> new ListTransactionsResponseData.TransactionState().setTransactionalId(m.transactionalId())
                                .setProducerId(m.producerId()).setTransactionState(m.state().apacheName()))
                        .toList())
                .thenApply(lists -> {
                    ListTransactionsResponseData resp = new ListTransactionsResponseData().setThrottleTimeMs(0)
                            .setErrorCode(Errors.NONE.code()).setUnknownStateFilters(unknown);
                    // Those the principal may DESCRIBE, silently, as Apache's.
                    lists.forEach(list -> list.stream()
                            .filter(st -> ctx.allowed(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, st.transactionalId()))
                            .forEach(resp.transactionStates()::add));
                    return resp;
                });
    }
}
