package dev.kaas.broker.group;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * OffsetFetch v0–v9 (several groups per request from v8). With {@code require_stable} (v7+, what
 * READ_COMMITTED consumers send), a partition with transactional offsets awaiting their marker
 * answers offset -1 and UNSTABLE_OFFSET_COMMIT, which the consumer retries, as Apache. A partition
 * without a committed offset answers offset -1, as Apache.
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

    /** @param denied partitions of named topics the principal may not DESCRIBE: listed last, TOPIC_AUTHORIZATION_FAILED */
    private record GroupResult(Errors error, Map<TopicPartition, CommittedOffset> offsets, Set<TopicPartition> unstable,
                               Set<TopicPartition> denied) {
        GroupResult(Errors error, Map<TopicPartition, CommittedOffset> offsets, Set<TopicPartition> unstable) {
            this(error, offsets, unstable, Set.of());
        }

        Errors partitionError(TopicPartition tp) {
            return denied.contains(tp) ? Errors.TOPIC_AUTHORIZATION_FAILED : unstable.contains(tp) ? Errors.UNSTABLE_OFFSET_COMMIT : Errors.NONE;
        }
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
                groups.add(fetch(ctx.access(), g.groupId(), tps, d.requireStable()).thenApply(r -> {
                    var out = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId()).setErrorCode(r.error().code());
                    byTopic(r.offsets()).forEach((topic, parts) -> {
                        var rt = new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic);
                        parts.forEach((p, o) -> {
                            Errors pe = r.partitionError(new TopicPartition(topic, p));
                            CommittedOffset shown = pe == Errors.NONE ? o : null;
                            rt.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                    .setPartitionIndex(p).setCommittedOffset(shown == null ? -1 : shown.offset())
                                    .setCommittedLeaderEpoch(shown == null ? -1 : shown.leaderEpoch())
                                    .setMetadata(shown == null ? "" : shown.metadata()).setErrorCode(pe.code()));
                        });
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
        return fetch(ctx.access(), d.groupId(), tps, v >= 7 && d.requireStable()).thenApply(r -> {
            OffsetFetchResponseData resp = new OffsetFetchResponseData().setThrottleTimeMs(0);
            if (v >= 2) {
                resp.setErrorCode(r.error().code());
            }
            Map<TopicPartition, CommittedOffset> offsets = r.offsets();
            // A group that may not be described shows nothing of itself, as Apache's (v0: its error on each partition asked for).
            if (r.error() != Errors.NONE && (r.error() != Errors.GROUP_AUTHORIZATION_FAILED || v == 0) && tps != null) {
                offsets = new LinkedHashMap<>();
                for (TopicPartition tp : tps) {
                    offsets.put(tp, null);
                }
            }
            Errors groupError = v < 2 ? r.error() : Errors.NONE;
            byTopic(offsets).forEach((topic, parts) -> {
                var rt = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(topic);
                parts.forEach((p, unchecked) -> {
                    Errors unstable = r.partitionError(new TopicPartition(topic, p));
                    Errors partitionError = unstable != Errors.NONE ? unstable : groupError;
                    CommittedOffset o = unstable == Errors.NONE ? unchecked : null;
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

    /**
     * Apache's handleOffsetFetchRequest authorization: DESCRIBE on the group, else its error alone;
     * named topics the principal may not DESCRIBE are not asked for and come last with
     * TOPIC_AUTHORIZATION_FAILED (unless the group failed); "all partitions" leaves them out.
     */
    private CompletableFuture<GroupResult> fetch(Access access, String groupId, List<TopicPartition> tps, boolean requireStable) {
        if (!access.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
            return CompletableFuture.completedFuture(new GroupResult(Errors.GROUP_AUTHORIZATION_FAILED, Map.of(), Set.of()));
        }
        Map<String, Boolean> described = new java.util.HashMap<>();
        java.util.function.Predicate<TopicPartition> may = tp -> described.computeIfAbsent(tp.topic(),
                t -> access.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t));
        List<TopicPartition> asked = tps == null ? null : tps.stream().filter(may).toList();
        Set<TopicPartition> denied = tps == null ? Set.of() : new java.util.LinkedHashSet<>(tps.stream().filter(may.negate()).toList());
        return coordinator.call(groupId, shard -> {
            Map<TopicPartition, CommittedOffset> offsets = asked != null && asked.isEmpty() ? Map.of() : shard.fetch(groupId, asked);
            Set<TopicPartition> unstable = requireStable ? shard.unstable(groupId) : Set.of();
            if (tps == null && !unstable.isEmpty()) {
                // "All partitions" includes those whose only offset is pending, as Apache lists them.
                offsets = new LinkedHashMap<>(offsets);
                for (TopicPartition tp : unstable) {
                    offsets.putIfAbsent(tp, null);
                }
            }
            if (tps == null) {
                offsets = new LinkedHashMap<>(offsets);
                offsets.keySet().removeIf(may.negate());
            } else if (!denied.isEmpty()) {
                offsets = new LinkedHashMap<>(offsets);
                for (TopicPartition tp : denied) {
                    offsets.put(tp, null);
                }
            }
            return new GroupResult(Errors.NONE, offsets, unstable, denied);
        }).exceptionally(e -> new GroupResult(ErrorMapper.forCoordinator(e, groupId), Map.of(), Set.of()));
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
