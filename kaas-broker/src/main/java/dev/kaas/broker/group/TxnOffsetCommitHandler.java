package dev.kaas.broker.group;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;

/**
 * TxnOffsetCommit v0–v3 (KIP-98; KIP-447 member id, generation and instance id from v3): the
 * offsets are saved pending with the group and become committed when the transaction's COMMIT
 * marker reaches the group's slot (see {@link GroupOffsets#txnCommit}). Below v2,
 * COORDINATOR_LOAD_IN_PROGRESS is COORDINATOR_NOT_AVAILABLE, as Apache.
 */
@ApplicationScoped
public class TxnOffsetCommitHandler implements ApiHandler {
    private final GroupCoordinator coordinator;

    public TxnOffsetCommitHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.TXN_OFFSET_COMMIT;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        TxnOffsetCommitRequestData d = ((TxnOffsetCommitRequest) request).data();
        short v = ctx.apiVersion();
        int generation = v >= 3 ? d.generationId() : -1;
        String memberId = v >= 3 ? d.memberId() : GroupShard.UNKNOWN_MEMBER_ID;
        String instanceId = v >= 3 ? d.groupInstanceId() : null;
        List<GroupShard.OffsetToCommit> offsets = new ArrayList<>();
        for (var t : d.topics()) {
            for (var p : t.partitions()) {
                offsets.add(new GroupShard.OffsetToCommit(new TopicPartition(t.name(), p.partitionIndex()), p.committedOffset(),
                        v >= 2 ? p.committedLeaderEpoch() : -1, p.committedMetadata()));
            }
        }
        return coordinator.call(d.groupId(), shard -> shard.txnCommit(d.groupId(), memberId, instanceId, generation,
                        d.producerId(), d.producerEpoch(), offsets))
                .exceptionally(e -> {
                    Errors err = ErrorMapper.forCoordinator(e, d.groupId());
                    Map<TopicPartition, Errors> all = new LinkedHashMap<>();
                    offsets.forEach(o -> all.put(o.tp(), err));
                    return all;
                })
                .thenApply(result -> {
                    TxnOffsetCommitResponseData resp = new TxnOffsetCommitResponseData().setThrottleTimeMs(0);
                    for (var t : d.topics()) {
                        var rt = new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(t.name());
                        for (var p : t.partitions()) {
                            Errors e = result.getOrDefault(new TopicPartition(t.name(), p.partitionIndex()), Errors.NONE);
                            if (v < 2 && e == Errors.COORDINATOR_LOAD_IN_PROGRESS) {
                                e = Errors.COORDINATOR_NOT_AVAILABLE;
                            }
                            rt.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                                    .setPartitionIndex(p.partitionIndex()).setErrorCode(e.code()));
                        }
                        resp.topics().add(rt);
                    }
                    return resp;
                });
    }
}
