package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData.MemberResponse;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.resource.ResourceType;

/** LeaveGroup v0–v5: one member before v3, a batch (with static members and KIP-800 reasons) from v3. */
@ApplicationScoped
public class LeaveGroupHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public LeaveGroupHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.LEAVE_GROUP;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, ((LeaveGroupRequest) request).data().groupId());
        LeaveGroupRequestData d = ((LeaveGroupRequest) request).data();
        boolean batched = ctx.apiVersion() >= 3;
        List<GroupShard.Leaving> leaving = new ArrayList<>();
        if (batched) {
            d.members().forEach(m -> leaving.add(new GroupShard.Leaving(m.memberId(), m.groupInstanceId(), m.reason())));
        } else {
            leaving.add(new GroupShard.Leaving(d.memberId(), null, null));
        }
        return coordinator.call(d.groupId(), shard -> shard.leave(d.groupId(), leaving))
                .exceptionally(e -> Map.entry(ErrorMapper.forCoordinator(e, d.groupId()), List.of()))
                .thenApply(r -> {
                    LeaveGroupResponseData resp = new LeaveGroupResponseData().setThrottleTimeMs(0);
                    Errors top = r.getKey();
                    List<Errors> each = r.getValue();
                    if (!batched) {
                        Errors e = top != Errors.NONE || each.isEmpty() ? top : each.get(0);
                        return resp.setErrorCode(e.code());
                    }
                    resp.setErrorCode(top.code());
                    for (int i = 0; i < each.size(); i++) {
                        GroupShard.Leaving l = leaving.get(i);
                        resp.members().add(new MemberResponse().setMemberId(l.memberId()).setGroupInstanceId(l.groupInstanceId())
                                .setErrorCode(each.get(i).code()));
                    }
                    return resp;
                });
    }
}
