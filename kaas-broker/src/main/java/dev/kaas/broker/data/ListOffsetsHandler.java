package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.PartitionLog;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * ListOffsets: earliest (-2; also -4 "earliest local", which is the same log without a remote
 * tier), latest (-1: high watermark, or LSO for read_committed), max timestamp (-3, KIP-734) and
 * by timestamp through the time index. Runs on the storage pool: lookups by time read batches.
 */
@ApplicationScoped
public class ListOffsetsHandler implements ApiHandler {
    private final Partitions partitions;
    private final ClusterView view;

    public ListOffsetsHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.LIST_OFFSETS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ListOffsetsRequestData data = ((ListOffsetsRequest) request).data();
        short version = ctx.apiVersion();
        boolean readCommitted = data.isolationLevel() == org.apache.kafka.common.IsolationLevel.READ_COMMITTED.id();
        // DESCRIBE on each topic, before its existence, as Apache's.
        java.util.Set<String> described = ctx.access().filter(AclOperation.DESCRIBE, ResourceType.TOPIC,
                data.topics().stream().map(ListOffsetsRequestData.ListOffsetsTopic::name).toList());
        return CompletableFuture.supplyAsync(() -> {
            ListOffsetsResponseData resp = new ListOffsetsResponseData().setThrottleTimeMs(0);
            for (ListOffsetsRequestData.ListOffsetsTopic t : data.topics()) {
                ListOffsetsTopicResponse tr = new ListOffsetsTopicResponse().setName(t.name());
                resp.topics().add(tr);
                for (ListOffsetsRequestData.ListOffsetsPartition p : t.partitions()) {
                    if (!described.contains(t.name())) {
                        tr.partitions().add(new ListOffsetsPartitionResponse().setPartitionIndex(p.partitionIndex())
                                .setTimestamp(-1).setOffset(-1).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                        continue;
                    }
                    tr.partitions().add(lookup(new TopicPartition(t.name(), p.partitionIndex()), p, version, readCommitted));
                }
            }
            return resp;
        }, partitions.storage());
    }

    private ListOffsetsPartitionResponse lookup(TopicPartition tp, ListOffsetsRequestData.ListOffsetsPartition p, short version,
                                                boolean readCommitted) {
        ListOffsetsPartitionResponse out = new ListOffsetsPartitionResponse().setPartitionIndex(tp.partition())
                .setTimestamp(-1).setOffset(-1).setLeaderEpoch(-1);
        Replica replica = partitions.get(tp);
        // A log that found its fence taken (a successor leads) serves nothing more, even before
        // this broker hears of the new assignment.
        if (replica == null || replica.log().isFenced()) {
            var topic = view.topic(tp.topic());
            boolean known = topic != null && tp.partition() >= 0 && tp.partition() < topic.partitions().size();
            return out.setErrorCode((known ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
        }
        PartitionLog log = replica.log();
        Errors epochError = LeaderEpochs.check(p.currentLeaderEpoch(), log.leaderEpoch());
        if (epochError != Errors.NONE) {
            return out.setErrorCode(epochError.code());
        }
        // As Apache: READ_COMMITTED answers and searches below the last stable offset.
        long hw = readCommitted ? Math.min(log.lastStableOffset(), log.highWatermark()) : log.highWatermark();
        PartitionLog.TimestampAndOffset found;
        try {
            found = find(log, p.timestamp(), hw);
        } catch (Exception e) {
            return out.setErrorCode(ErrorMapper.forRead(e, tp).code());
        }
        if (found == null) {
            return out.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
        }
        out.setErrorCode(Errors.NONE.code());
        // Fields exist from a version on; writing a non-default value below it fails to encode.
        if (version == 0) {
            out.setOldStyleOffsets(found.offset() >= 0 ? List.of(found.offset()) : List.of());
        } else {
            out.setOffset(found.offset()).setTimestamp(found.timestamp());
        }
        if (version >= 4) {
            out.setLeaderEpoch(found.leaderEpoch());
        }
        return out;
    }

    /** The answer for one timestamp spec: offset -1 when no record matches; null for a spec this broker does not know. */
    private static PartitionLog.TimestampAndOffset find(PartitionLog log, long ts, long hw) throws Exception {
        PartitionLog.TimestampAndOffset none = new PartitionLog.TimestampAndOffset(-1, -1, -1);
        if (ts == ListOffsetsRequest.LATEST_TIMESTAMP) {
            return new PartitionLog.TimestampAndOffset(-1, hw, log.leaderEpoch());
        } else if (ts == ListOffsetsRequest.EARLIEST_TIMESTAMP || ts == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
            return new PartitionLog.TimestampAndOffset(-1, log.logStartOffset(), log.epochForOffset(log.logStartOffset()));
        } else if (ts == ListOffsetsRequest.MAX_TIMESTAMP) {
            return log.maxTimestamp().filter(m -> m.offset() < hw).orElse(none);
        } else if (ts >= 0) {
            return log.offsetForTimestamp(ts, hw).orElse(none);
        }
        return null;
    }
}
