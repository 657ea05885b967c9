package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.resource.ResourceType;

/** ListGroups v0–v4: the groups this broker coordinates, filtered by state from v4 (names case-insensitive). */
@ApplicationScoped
public class ListGroupsHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public ListGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.LIST_GROUPS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ListGroupsRequestData d = ((ListGroupsRequest) request).data();
        Set<GroupState> states = EnumSet.noneOf(GroupState.class);
        boolean unknownState = false;
        if (ctx.apiVersion() >= 4) {
            for (String s : d.statesFilter()) {
                GroupState st = GroupState.fromWireName(s);
                if (st == null) {
                    unknownState = true;
                } else {
                    states.add(st);
                }
            }
        }
        boolean nothingMatches = unknownState && states.isEmpty();
        // Apache's: DESCRIBE on the cluster lists every group, else those the principal may DESCRIBE, silently.
        boolean all = ctx.access().allowedOnCluster(AclOperation.DESCRIBE);
        return coordinator.callAll(shard -> shard.list(states)).thenApply(lists -> {
            ListGroupsResponseData resp = new ListGroupsResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code());
            if (nothingMatches) {
                return resp;
            }
            lists.forEach(list -> list.forEach(g -> {
                if (!all && !ctx.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId())) {
                    return;
                }
                ListedGroup lg = new ListedGroup().setGroupId(g.groupId()).setProtocolType(g.protocolType());
                if (ctx.apiVersion() >= 4) {
                    lg.setGroupState(g.state().wireName());
                }
                resp.groups().add(lg);
            }));
            return resp;
        });
    }
}
