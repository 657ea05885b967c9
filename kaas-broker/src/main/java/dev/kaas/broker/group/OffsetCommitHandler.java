package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponsePartition;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponseTopic;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * OffsetCommit v0–v8: answered once the group's offsets file is durable and the slot still ours.
 * Before v1 there is no member or generation (a simple group); v2–v4 carry a retention time.
 */
@ApplicationScoped
public class OffsetCommitHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public OffsetCommitHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.OFFSET_COMMIT;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        OffsetCommitRequestData d = ((OffsetCommitRequest) request).data();
        short v = ctx.apiVersion();
        int generation = v >= 1 ? d.generationIdOrMemberEpoch() : -1;
        String memberId = v >= 1 ? d.memberId() : GroupShard.UNKNOWN_MEMBER_ID;
        long retention = v >= 2 && v <= 4 ? d.retentionTimeMs() : -1;
        // Apache's handleOffsetCommitRequest: READ on the group (every partition refused), then READ on each
        // topic, before its existence; only what may be read reaches the coordinator.
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, d.groupId());
        java.util.Set<String> readable = ctx.access().filter(AclOperation.READ, ResourceType.TOPIC,
                d.topics().stream().map(t -> t.name()).toList());
        Map<TopicPartition, Errors> denied = new java.util.HashMap<>();
        List<GroupShard.OffsetToCommit> offsets = new ArrayList<>();
        for (var t : d.topics()) {
            for (var p : t.partitions()) {
                if (!readable.contains(t.name())) {
                    denied.put(new TopicPartition(t.name(), p.partitionIndex()), Errors.TOPIC_AUTHORIZATION_FAILED);
                    continue;
                }
                offsets.add(new GroupShard.OffsetToCommit(new TopicPartition(t.name(), p.partitionIndex()), p.committedOffset(),
                        v >= 6 ? p.committedLeaderEpoch() : -1, p.committedMetadata()));
            }
        }
        CompletableFuture<Map<TopicPartition, Errors>> committed = offsets.isEmpty() && !denied.isEmpty()
                ? CompletableFuture.completedFuture(Map.of())
                : coordinator.call(d.groupId(), shard -> shard.commit(d.groupId(), memberId, d.groupInstanceId(), generation, offsets, retention));
        return committed
                .exceptionally(e -> {
                    // As Apache's getErrorResponse: the coordinator's error on every partition, refused ones too.
                    Errors err = ErrorMapper.forCoordinator(e, d.groupId());
                    Map<TopicPartition, Errors> all = new java.util.LinkedHashMap<>();
                    d.topics().forEach(t -> t.partitions().forEach(p -> all.put(new TopicPartition(t.name(), p.partitionIndex()), err)));
                    return all;
                })
                .thenApply(result -> {
                    OffsetCommitResponseData resp = new OffsetCommitResponseData().setThrottleTimeMs(0);
                    for (var t : d.topics()) {
                        OffsetCommitResponseTopic rt = new OffsetCommitResponseTopic().setName(t.name());
                        for (var p : t.partitions()) {
                            TopicPartition tp = new TopicPartition(t.name(), p.partitionIndex());
                            Errors e = result.containsKey(tp) ? result.get(tp) : denied.getOrDefault(tp, Errors.NONE);
                            rt.partitions().add(new OffsetCommitResponsePartition().setPartitionIndex(p.partitionIndex()).setErrorCode(e.code()));
                        }
                        resp.topics().add(rt);
                    }
                    return resp;
                });
    }
}
