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
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroupMember;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.resource.ResourceType;

/** DescribeGroups v0–v5; an unknown group is reported Dead with no error, as Apache. */
@ApplicationScoped
public class DescribeGroupsHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public DescribeGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_GROUPS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DescribeGroupsRequestData d = ((DescribeGroupsRequest) request).data();
        List<CompletableFuture<DescribedGroup>> all = new ArrayList<>();
        boolean withOperations = ctx.apiVersion() >= 3 && d.includeAuthorizedOperations();
        for (String groupId : d.groups()) {
            // DESCRIBE on each group (Apache's handleDescribeGroupsRequest), with Apache's empty group on a denial.
            if (!ctx.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
                all.add(CompletableFuture.completedFuture(new DescribedGroup().setGroupId(groupId)
                        .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setGroupState("").setProtocolType("").setProtocolData("")));
                continue;
            }
            all.add(coordinator.call(groupId, shard -> shard.describe(groupId))
                    .thenApply(DescribeGroupsHandler::described)
                    .thenApply(g -> withOperations ? g.setAuthorizedOperations(ctx.access().authorizedOperations(ResourceType.GROUP, groupId)) : g)
                    .exceptionally(e -> new DescribedGroup().setGroupId(groupId).setErrorCode(ErrorMapper.forCoordinator(e, groupId).code())
                            .setGroupState("").setProtocolType("").setProtocolData("")));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
            DescribeGroupsResponseData resp = new DescribeGroupsResponseData().setThrottleTimeMs(0);
            all.forEach(f -> resp.groups().add(f.join()));
            return resp;
        });
    }

    private static DescribedGroup described(GroupShard.GroupDescription g) {
        DescribedGroup out = new DescribedGroup().setGroupId(g.groupId()).setErrorCode(Errors.NONE.code())
                .setGroupState(g.state().wireName()).setProtocolType(g.protocolType())
                .setProtocolData(g.protocolName() == null ? "" : g.protocolName());
        for (GroupShard.MemberDescription m : g.members()) {
            out.members().add(new DescribedGroupMember().setMemberId(m.memberId()).setGroupInstanceId(m.groupInstanceId())
                    .setClientId(m.clientId()).setClientHost(m.clientHost()).setMemberMetadata(m.metadata())
                    .setMemberAssignment(m.assignment()));
        }
        return out;
    }
}
