package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.resource.ResourceType;

/** Heartbeat v0–v4. */
@ApplicationScoped
public class HeartbeatHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public HeartbeatHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.HEARTBEAT;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, ((HeartbeatRequest) request).data().groupId());
        HeartbeatRequestData d = ((HeartbeatRequest) request).data();
        return coordinator.call(d.groupId(), shard -> shard.heartbeat(d.groupId(), d.memberId(), d.groupInstanceId(), d.generationId()))
                .exceptionally(e -> ErrorMapper.forCoordinator(e, d.groupId()))
                .thenApply(e -> new HeartbeatResponseData().setErrorCode(e.code()));
    }
}
