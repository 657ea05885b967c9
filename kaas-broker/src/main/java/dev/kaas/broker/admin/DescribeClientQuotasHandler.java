package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.ClientQuota;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;

/**
 * DescribeClientQuotas (key 48) from the quotas this broker applied, as Apache's broker answers
 * from its metadata image (ClientQuotasImage.describe): components match an entity type exactly,
 * its default entity, or any entity of the type; strict asks for entities of exactly those types;
 * a bad filter is INVALID_REQUEST (an unknown type UNSUPPORTED_VERSION) for the whole request,
 * with Apache's messages.
 */
@ApplicationScoped
public class DescribeClientQuotasHandler implements ApiHandler {
    private final ClusterView view;

    public DescribeClientQuotasHandler(ClusterView view) {
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_CLIENT_QUOTAS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.DESCRIBE_CONFIGS);
        return CompletableFuture.completedFuture(describe(((DescribeClientQuotasRequest) request).data(), view.assignment().clientQuotas()));
    }

    static DescribeClientQuotasResponseData describe(DescribeClientQuotasRequestData request, List<ClientQuota> quotas) {
        Map<String, String> exact = new HashMap<>();
        Set<String> any = new HashSet<>();
        for (DescribeClientQuotasRequestData.ComponentData c : request.components()) {
            String type = c.entityType();
            if (type.isEmpty()) {
                return error(Errors.INVALID_REQUEST, "Invalid empty entity type.");
            }
            if (exact.containsKey(type) || any.contains(type)) {
                return error(Errors.INVALID_REQUEST, "Entity type " + type + " cannot appear more than once in the filter.");
            }
            if (!type.equals(ClientQuota.IP) && !type.equals(ClientQuota.USER) && !type.equals(ClientQuota.CLIENT_ID)) {
                return error(Errors.UNSUPPORTED_VERSION, "Unsupported entity type " + type);
            }
            switch (c.matchType()) {
                case DescribeClientQuotasRequest.MATCH_TYPE_EXACT -> {
                    if (c.match() == null) {
                        return error(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.");
                    }
                    exact.put(type, c.match());
                }
                case DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT -> {
                    if (c.match() != null) {
                        return error(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
                    }
                    exact.put(type, null);
                }
                case DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED -> {
                    if (c.match() != null) {
                        return error(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
                    }
                    any.add(type);
                }
                default -> {
                    return error(Errors.INVALID_REQUEST, "Unknown match type " + c.matchType());
                }
            }
        }
        boolean ip = exact.containsKey(ClientQuota.IP) || any.contains(ClientQuota.IP);
        boolean userOrClient = exact.containsKey(ClientQuota.USER) || any.contains(ClientQuota.USER)
                || exact.containsKey(ClientQuota.CLIENT_ID) || any.contains(ClientQuota.CLIENT_ID);
        if (ip && userOrClient) {
            return error(Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component should not be used with "
                    + "user or clientId filter component.");
        }
        DescribeClientQuotasResponseData out = new DescribeClientQuotasResponseData().setEntries(new java.util.ArrayList<>());
        for (ClientQuota q : quotas) {
            if (!matches(q.entity(), exact, any, request.strict())) {
                continue;
            }
            DescribeClientQuotasResponseData.EntryData e = new DescribeClientQuotasResponseData.EntryData();
            q.entity().forEach((type, name) -> e.entity().add(new DescribeClientQuotasResponseData.EntityData()
                    .setEntityType(type).setEntityName(name)));
            q.values().forEach((key, value) -> e.values().add(new DescribeClientQuotasResponseData.ValueData().setKey(key).setValue(value)));
            out.entries().add(e);
        }
        return out;
    }

    private static boolean matches(Map<String, String> entity, Map<String, String> exact, Set<String> any, boolean strict) {
        if (strict && entity.size() != exact.size() + any.size()) {
            return false;
        }
        for (Map.Entry<String, String> e : exact.entrySet()) {
            if (!entity.containsKey(e.getKey()) || !Objects.equals(entity.get(e.getKey()), e.getValue())) {
                return false;
            }
        }
        return entity.keySet().containsAll(any);
    }

    private static DescribeClientQuotasResponseData error(Errors error, String message) {
        return new DescribeClientQuotasResponseData().setErrorCode(error.code()).setErrorMessage(message).setEntries(null);
    }
}
