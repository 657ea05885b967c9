package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.resource.ResourceType;

/** DeleteGroups v0–v2: only empty groups; their offsets file goes with them. */
@ApplicationScoped
public class DeleteGroupsHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public DeleteGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DELETE_GROUPS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DeleteGroupsRequestData d = ((DeleteGroupsRequest) request).data();
        List<CompletableFuture<DeletableGroupResult>> all = new ArrayList<>();
        for (String groupId : d.groupsNames()) {
            if (!ctx.allowed(AclOperation.DELETE, ResourceType.GROUP, groupId)) {
                all.add(CompletableFuture.completedFuture(new DeletableGroupResult().setGroupId(groupId)
                        .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
                continue;
            }
            all.add(coordinator.call(groupId, shard -> shard.deleteGroup(groupId))
                    .exceptionally(e -> ErrorMapper.forCoordinator(e, groupId))
                    .thenApply(e -> new DeletableGroupResult().setGroupId(groupId).setErrorCode(e.code())));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
            DeleteGroupsResponseData resp = new DeleteGroupsResponseData().setThrottleTimeMs(0);
            all.forEach(f -> resp.results().add(f.join()));
            return resp;
        });
    }
}
