package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.resource.ResourceType;

/** SyncGroup v0–v5; a follower's response waits for the leader's assignment. */
@ApplicationScoped
public class SyncGroupHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public SyncGroupHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.SYNC_GROUP;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, ((SyncGroupRequest) request).data().groupId());
        SyncGroupRequestData data = ((SyncGroupRequest) request).data();
        CompletableFuture<SyncGroupResponseData> result = new CompletableFuture<>();
        coordinator.call(data.groupId(), shard -> {
            shard.sync(data, result::complete);
            return null;
        }).exceptionally(e -> {
            result.complete(new SyncGroupResponseData().setErrorCode(ErrorMapper.forCoordinator(e, data.groupId()).code()));
            return null;
        });
        return result.thenApply(r -> r);
    }
}
