package dev.kaas.broker.group;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.Slots;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * FindCoordinator (v0–v4, batched keys from v4): a group's or transactional id's coordinator is
 * the owner of its group or transaction slot {@code abs(hash(id)) % 50} in the applied
 * assignment, reported with the endpoint of the listener the request came in on.
 */
@ApplicationScoped
public class FindCoordinatorHandler implements ApiHandler {
    private final ClusterView view;

    public FindCoordinatorHandler(ClusterView view) {
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.FIND_COORDINATOR;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        FindCoordinatorRequestData data = ((FindCoordinatorRequest) request).data();
        FindCoordinatorResponseData resp = new FindCoordinatorResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 4) {
            for (String key : data.coordinatorKeys()) {
                resp.coordinators().add(find(ctx, key, data.keyType()));
            }
        } else {
            Coordinator c = find(ctx, data.key(), data.keyType());
            resp.setErrorCode(c.errorCode()).setErrorMessage(ctx.apiVersion() >= 1 ? c.errorMessage() : null)
                    .setNodeId(c.nodeId()).setHost(c.host()).setPort(c.port());
        }
        return CompletableFuture.completedFuture(resp);
    }

    private Coordinator find(RequestContext ctx, String key, byte keyType) {
        String listener = ctx.listenerName();
        Coordinator c = new Coordinator().setKey(key).setNodeId(-1).setHost("").setPort(-1);
        CoordinatorType type;
        try {
            type = CoordinatorType.forId(keyType);
        } catch (IllegalArgumentException e) {
            return c.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unknown coordinator type " + keyType);
        }
        // Apache's getCoordinator: DESCRIBE on the group or transactional id, before anything else about the key;
        // the batched form (v4+) carries no message with it.
        ResourceType resource = type == CoordinatorType.GROUP ? ResourceType.GROUP : ResourceType.TRANSACTIONAL_ID;
        if (!ctx.allowed(AclOperation.DESCRIBE, resource, key == null ? "" : key)) {
            Errors denied = Access.denial(resource);
            return c.setErrorCode(denied.code()).setErrorMessage(ctx.apiVersion() >= 4 ? null : denied.message());
        }
        if (type == CoordinatorType.TRANSACTION && (key == null || key.isEmpty())) {
            return c.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Transactional id must not be empty");
        }
        Assignment a = view.assignment();
        int slot = Slots.slotFor(key == null ? "" : key);
        List<SlotAssignment> slots = type == CoordinatorType.GROUP ? a.groupSlots() : a.txnSlots();
        SlotAssignment owner = slots.stream().filter(s -> s.slot() == slot).findFirst().orElse(null);
        BrokerInfo broker = owner == null ? null : a.broker(owner.broker()).orElse(null);
        EndpointInfo endpoint = broker == null ? null : endpoint(broker.endpoints(), listener);
        if (endpoint == null) {
            return c.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()).setErrorMessage(Errors.COORDINATOR_NOT_AVAILABLE.message());
        }
        return c.setErrorCode(Errors.NONE.code()).setErrorMessage(null).setNodeId(broker.id()).setHost(endpoint.host()).setPort(endpoint.port());
    }

    private static EndpointInfo endpoint(List<EndpointInfo> endpoints, String listener) {
        return endpoints.stream().filter(e -> e.listener().equals(listener)).findFirst().orElse(null);
    }
}
