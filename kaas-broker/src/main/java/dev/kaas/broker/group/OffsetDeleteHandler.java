package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponsePartition;
import org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponseTopic;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.resource.ResourceType;

/** OffsetDelete v0: refused per partition while a live consumer group subscribes to the topic. */
@ApplicationScoped
public class OffsetDeleteHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public OffsetDeleteHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.OFFSET_DELETE;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        OffsetDeleteRequestData d = ((OffsetDeleteRequest) request).data();
        // Apache's handleOffsetDeleteRequest: DELETE on the group (the request's error), then READ on each topic,
        // before its existence; only what may be read reaches the coordinator.
        ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, d.groupId());
        java.util.Set<String> readable = ctx.access().filter(AclOperation.READ, ResourceType.TOPIC,
                d.topics().stream().map(t -> t.name()).toList());
        List<TopicPartition> tps = new ArrayList<>();
        d.topics().stream().filter(t -> readable.contains(t.name()))
                .forEach(t -> t.partitions().forEach(p -> tps.add(new TopicPartition(t.name(), p.partitionIndex()))));
        return coordinator.call(d.groupId(), shard -> shard.deleteOffsets(d.groupId(), tps))
                .exceptionally(e -> new GroupShard.OffsetDeleteResult(ErrorMapper.forCoordinator(e, d.groupId()), Map.of()))
                .thenApply(r -> {
                    OffsetDeleteResponseData resp = new OffsetDeleteResponseData().setThrottleTimeMs(0).setErrorCode(r.groupError().code());
                    if (r.groupError() != Errors.NONE) {
                        return resp;
                    }
                    for (var t : d.topics()) {
                        OffsetDeleteResponseTopic rt = new OffsetDeleteResponseTopic().setName(t.name());
                        for (var p : t.partitions()) {
                            Errors e = !readable.contains(t.name()) ? Errors.TOPIC_AUTHORIZATION_FAILED
                                    : r.partitions().getOrDefault(new TopicPartition(t.name(), p.partitionIndex()), Errors.NONE);
                            rt.partitions().add(new OffsetDeleteResponsePartition().setPartitionIndex(p.partitionIndex()).setErrorCode(e.code()));
                        }
                        resp.topics().add(rt);
                    }
                    return resp;
                });
    }
}
