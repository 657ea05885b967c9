package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * AddPartitionsToTxn v0–v4, as Apache 3.7. v0–v3 (clients) name one transaction: internal topics
 * get TOPIC_AUTHORIZATION_FAILED, unknown partitions UNKNOWN_TOPIC_OR_PARTITION and the rest
 * OPERATION_NOT_ATTEMPTED without calling the coordinator; otherwise the coordinator's one answer
 * goes to every partition. v4 (batched, KIP-890; Apache serves it to whoever passes CLUSTER_ACTION,
 * which without an authorizer is everyone) answers per transaction, and {@code verify_only}
 * checks membership without adding.
 */
@ApplicationScoped
public class AddPartitionsToTxnHandler implements ApiHandler {
    private final TxnCoordinator coordinator;
    private final ClusterView view;

    public AddPartitionsToTxnHandler(TxnCoordinator coordinator, ClusterView view) {
        this.coordinator = coordinator;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ADD_PARTITIONS_TO_TXN;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        AddPartitionsToTxnRequest req = (AddPartitionsToTxnRequest) request;
        short version = ctx.apiVersion();
        if (version < 4) {
            AddPartitionsToTxnTransaction t = req.normalizeRequest().data().transactions().iterator().next();
            if (!ctx.allowed(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, t.transactionalId())) {
                // Apache's: every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
                Map<TopicPartition, Errors> denied = new java.util.LinkedHashMap<>();
                AddPartitionsToTxnRequest.getPartitions(t.topics()).forEach(tp -> denied.put(tp, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
                return CompletableFuture.completedFuture(new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                        .setResultsByTopicV3AndBelow(AddPartitionsToTxnResponse.resultForTransaction(
                                AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, denied).topicResults()));
            }
            return one(ctx, t, version, true).thenApply(errors -> new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                    .setResultsByTopicV3AndBelow(AddPartitionsToTxnResponse.resultForTransaction(
                            AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, errors).topicResults()));
        }
        // The batched form is a broker's verification (KIP-890): Apache needs CLUSTER_ACTION for it.
        ctx.authorizeCluster(AclOperation.CLUSTER_ACTION);
        List<CompletableFuture<AddPartitionsToTxnResponseData.AddPartitionsToTxnResult>> all = new ArrayList<>();
        for (AddPartitionsToTxnTransaction t : req.data().transactions()) {
            all.add(one(ctx, t, version, false).thenApply(errors -> AddPartitionsToTxnResponse.resultForTransaction(t.transactionalId(), errors)));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
            AddPartitionsToTxnResponseData resp = new AddPartitionsToTxnResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code());
            all.forEach(f -> resp.resultsByTransaction().add(f.join()));
            return resp;
        });
    }

    private CompletableFuture<Map<TopicPartition, Errors>> one(RequestContext ctx, AddPartitionsToTxnTransaction t, short version, boolean client) {
        String id = t.transactionalId() == null ? "" : t.transactionalId();
        LinkedHashSet<TopicPartition> partitions = new LinkedHashSet<>(AddPartitionsToTxnRequest.getPartitions(t.topics()));
        Map<TopicPartition, Errors> refused = TxnRequests.refusals(view, partitions, client,
                topic -> ctx.allowed(AclOperation.WRITE, ResourceType.TOPIC, topic));
        if (!refused.isEmpty()) {
            return CompletableFuture.completedFuture(refused);
        }
        CompletableFuture<Map<TopicPartition, Errors>> answer;
        if (!client && t.verifyOnly()) {
            answer = coordinator.call(id, slot -> CompletableFuture.completedFuture(
                    slot.verify(id, t.producerId(), t.producerEpoch(), partitions)));
        } else {
            answer = coordinator.call(id, slot -> slot.addPartitions(id, t.producerId(), t.producerEpoch(), partitions))
                    .thenApply(e -> every(partitions, TxnRequests.forVersion(e, version, (short) 2)));
        }
        return answer.exceptionally(e -> every(partitions, TxnRequests.coordinatorError(e, id)));
    }

    private static Map<TopicPartition, Errors> every(Iterable<TopicPartition> partitions, Errors e) {
        Map<TopicPartition, Errors> out = new LinkedHashMap<>();
        partitions.forEach(tp -> out.put(tp, e));
        return out;
    }
}
