package dev.kaas.broker.group;

import dev.kaas.broker.data.TxnVerifier;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.ErrorMapper;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.VerificationGuards;
import dev.kaas.common.model.Slots;
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
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * TxnOffsetCommit v0–v3 (KIP-98; KIP-447 member id, generation and instance id from v3): the
 * offsets are saved pending with the group and become committed when the transaction's COMMIT
 * marker reaches the group's slot (see {@link GroupOffsets#txnCommit}). Below v2,
 * COORDINATOR_LOAD_IN_PROGRESS is COORDINATOR_NOT_AVAILABLE, as Apache.
 *
 * <p>KIP-890 part 1, as Apache 3.7: unless the producer already has offsets pending in the
 * group's slot, the transaction coordinator must first confirm that the slot's offsets
 * partition ({@code __consumer_offsets-<slot>}, what AddOffsetsToTxn added) is part of the
 * transaction; a refusal is every partition's answer.
 */
@ApplicationScoped
public class TxnOffsetCommitHandler implements ApiHandler {
    private final GroupCoordinator coordinator;
    private final TxnVerifier verifier;

    public TxnOffsetCommitHandler(GroupCoordinator coordinator, TxnVerifier verifier) {
        this.coordinator = coordinator;
        this.verifier = verifier;
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
        // Apache's handleTxnOffsetCommitRequest: WRITE on the transactional id, READ on the group (each the request's
        // error), then READ on each topic, before its existence; only what may be read is committed.
        ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, d.transactionalId());
        ctx.authorize(AclOperation.READ, ResourceType.GROUP, d.groupId());
        java.util.Set<String> readable = ctx.access().filter(AclOperation.READ, ResourceType.TOPIC,
                d.topics().stream().map(t -> t.name()).toList());
        List<GroupShard.OffsetToCommit> offsets = new ArrayList<>();
        for (var t : d.topics()) {
            if (!readable.contains(t.name())) {
                continue;
            }
            for (var p : t.partitions()) {
                offsets.add(new GroupShard.OffsetToCommit(new TopicPartition(t.name(), p.partitionIndex()), p.committedOffset(),
                        v >= 2 ? p.committedLeaderEpoch() : -1, p.committedMetadata()));
            }
        }
        CompletableFuture<Map<TopicPartition, Errors>> committed;
        if (offsets.isEmpty() && d.topics().stream().anyMatch(t -> !readable.contains(t.name()))) {
            committed = CompletableFuture.completedFuture(Map.of());
        } else if (!verifier.enabled() || d.groupId() == null || d.groupId().isEmpty()) {
            committed = commit(d, memberId, instanceId, generation, offsets, VerificationGuards.Ticket.DISABLED);
        } else {
            committed = coordinator.call(d.groupId(), shard -> shard.startTxnVerification(d.producerId(), d.producerEpoch()))
                    .thenCompose(ticket -> {
                if (ticket == null) {
                    // Already open here: the pending offsets are the proof, checked again when committing.
                    return commit(d, memberId, instanceId, generation, offsets, VerificationGuards.Ticket.UNVERIFIED);
                }
                if (ticket.asks()) {
                    TopicPartition slot = new TopicPartition(Topic.GROUP_METADATA_TOPIC_NAME, Slots.slotFor(d.groupId()));
                    CompletableFuture<Map<TopicPartition, Errors>> answer;
                    try {
                        answer = verifier.verify(d.transactionalId(), d.producerId(), d.producerEpoch(), Set.of(slot));
                    } catch (RuntimeException e) {
                        answer = CompletableFuture.failedFuture(e);
                    }
                    // Whatever happens, the ticket gets an outcome: other commits of the producer may wait on it.
                    answer.whenComplete((errors, e) -> ticket.outcome().complete(errors == null ? Errors.UNKNOWN_SERVER_ERROR
                            : errors.getOrDefault(slot, Errors.UNKNOWN_SERVER_ERROR)));
                }
                // A refused ticket still goes to the slot, which writes nothing and finishes it there.
                return ticket.previous().thenCombine(ticket.outcome(), (turn, outcome) -> outcome).thenCompose(outcome ->
                        commit(d, memberId, instanceId, generation, offsets, ticket).thenApply(result -> {
                            if (outcome == Errors.NONE) {
                                return result;
                            }
                            Map<TopicPartition, Errors> all = new LinkedHashMap<>();
                            Errors answer = forOffsetCommit(outcome);
                            offsets.forEach(o -> all.put(o.tp(), answer));
                            return all;
                        }))
                        // The slot went away meanwhile: whoever waits behind this commit need not wait for it.
                        .whenComplete((r, e) -> ticket.release());
            });
        }
        return committed
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
                            Errors e = !readable.contains(t.name()) ? Errors.TOPIC_AUTHORIZATION_FAILED
                                    : result.getOrDefault(new TopicPartition(t.name(), p.partitionIndex()), Errors.NONE);
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

    private CompletableFuture<Map<TopicPartition, Errors>> commit(TxnOffsetCommitRequestData d, String memberId, String instanceId,
                                                                  int generation, List<GroupShard.OffsetToCommit> offsets,
                                                                  VerificationGuards.Ticket verified) {
        return coordinator.call(d.groupId(), shard -> shard.txnCommit(d.groupId(), memberId, instanceId, generation,
                d.producerId(), d.producerEpoch(), offsets, verified));
    }

    /**
     * What a refused verification answers, as Apache 3.7's group coordinator: the broker's
     * PRODUCER_FENCED → INVALID_PRODUCER_EPOCH, then {@code GroupMetadataManager.maybeConvertOffsetCommitError}
     * (unlike Produce, CONCURRENT_TRANSACTIONS and the coordinator errors pass through).
     */
    private static Errors forOffsetCommit(Errors error) {
        return switch (error) {
            case PRODUCER_FENCED -> Errors.INVALID_PRODUCER_EPOCH;
            case NETWORK_EXCEPTION -> Errors.COORDINATOR_LOAD_IN_PROGRESS;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND -> Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            default -> error;
        };
    }
}
