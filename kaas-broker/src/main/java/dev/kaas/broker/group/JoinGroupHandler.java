package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.resource.ResourceType;

/** JoinGroup v0–v9; the response completes when the rebalance does (it may wait up to the rebalance timeout). */
@ApplicationScoped
public class JoinGroupHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public JoinGroupHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.JOIN_GROUP;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, ((JoinGroupRequest) request).data().groupId());
        JoinGroupRequestData data = ((JoinGroupRequest) request).data();
        short version = ctx.apiVersion();
        // v0 has no rebalance timeout: JoinGroupRequest already set it to the session timeout, as Apache does.
        var joinCtx = new GroupShard.JoinContext(ctx.header().clientId(), ctx.clientHost(), version >= 4);
        CompletableFuture<JoinGroupResponseData> result = new CompletableFuture<>();
        coordinator.call(data.groupId(), shard -> {
            shard.join(data, joinCtx, result::complete);
            return null;
        }).exceptionally(e -> {
            result.complete(GroupShard.joinError(data.memberId(), ErrorMapper.forCoordinator(e, data.groupId())));
            return null;
        });
        return result.thenApply(r -> {
            if (version < 7 && r.protocolName() == null) {
                r.setProtocolName("");
            }
            return r;
        });
    }
}
