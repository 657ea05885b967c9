package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;

/**
 * OffsetFetch v0–v9 (several groups per request from v8). Without transactions nothing is ever
 * pending, so {@code require_stable} never returns UNSTABLE_OFFSET_COMMIT. A partition without a
 * committed offset answers offset -1, as Apache.
 */
@ApplicationScoped
public class OffsetFetchHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public OffsetFetchHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.OFFSET_FETCH;
    }

    private record GroupResult(Errors error, Map<TopicPartition, CommittedOffset> offsets) {
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        OffsetFetchRequestData d = ((OffsetFetchRequest) request).data();
        short v = ctx.apiVersion();
        if (v >= 8) {
            List<CompletableFuture<OffsetFetchResponseData.OffsetFetchResponseGroup>> groups = new ArrayList<>();
            for (var g : d.groups()) {
                List<TopicPartition> tps = g.topics() == null ? null : partitions(g.topics().stream()
                        .map(t -> Map.entry(t.name(), t.partitionIndexes())).toList());
                groups.add(fetch(g.groupId(), tps).thenApply(r -> {
                    var out = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId()).setErrorCode(r.error().code());
                    byTopic(r.offsets()).forEach((topic, parts) -> {
                        var rt = new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic);
                        parts.forEach((p, o) -> rt.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                .setPartitionIndex(p).setCommittedOffset(o == null ? -1 : o.offset())
                                .setCommittedLeaderEpoch(o == null ? -1 : o.leaderEpoch())
                                .setMetadata(o == null ? "" : o.metadata()).setErrorCode(Errors.NONE.code())));
                        out.topics().add(rt);
                    });
                    return out;
                }));
            }
            return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(x -> {
                OffsetFetchResponseData resp = new OffsetFetchResponseData().setThrottleTimeMs(0);
                groups.forEach(f -> resp.groups().add(f.join()));
                return resp;
            });
        }
        List<TopicPartition> tps = d.topics() == null ? null : partitions(d.topics().stream()
                .map(t -> Map.entry(t.name(), t.partitionIndexes())).toList());
        return fetch(d.groupId(), tps).thenApply(r -> {
            OffsetFetchResponseData resp = new OffsetFetchResponseData().setThrottleTimeMs(0);
            if (v >= 2) {
                resp.setErrorCode(r.error().code());
            }
            Map<TopicPartition, CommittedOffset> offsets = r.offsets();
            if (r.error() != Errors.NONE && tps != null) {
                offsets = new LinkedHashMap<>();
                for (TopicPartition tp : tps) {
                    offsets.put(tp, null);
                }
            }
            Errors partitionError = v < 2 ? r.error() : Errors.NONE;
            byTopic(offsets).forEach((topic, parts) -> {
                var rt = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(topic);
                parts.forEach((p, o) -> {
                    var rp = new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(p)
                            .setCommittedOffset(o == null ? -1 : o.offset()).setMetadata(o == null ? "" : o.metadata())
                            .setErrorCode(partitionError.code());
                    if (v >= 5) {
                        rp.setCommittedLeaderEpoch(o == null ? -1 : o.leaderEpoch());
                    }
                    rt.partitions().add(rp);
                });
                resp.topics().add(rt);
            });
            return resp;
        });
    }

    private CompletableFuture<GroupResult> fetch(String groupId, List<TopicPartition> tps) {
        return coordinator.call(groupId, shard -> new GroupResult(Errors.NONE, shard.fetch(groupId, tps)))
                .exceptionally(e -> new GroupResult(ErrorMapper.forCoordinator(e, groupId), Map.of()));
    }

    private static List<TopicPartition> partitions(List<Map.Entry<String, List<Integer>>> topics) {
        List<TopicPartition> out = new ArrayList<>();
        topics.forEach(t -> t.getValue().forEach(p -> out.add(new TopicPartition(t.getKey(), p))));
        return out;
    }

    private static Map<String, Map<Integer, CommittedOffset>> byTopic(Map<TopicPartition, CommittedOffset> offsets) {
        Map<String, Map<Integer, CommittedOffset>> out = new LinkedHashMap<>();
        offsets.forEach((tp, o) -> out.computeIfAbsent(tp.topic(), k -> new LinkedHashMap<>()).put(tp.partition(), o));
        return out;
    }
}
