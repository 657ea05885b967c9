package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeProducers v0 (KIP-664): the producers a partition's state knows, with last sequence,
 * epoch, coordinator epoch and the start offset of the transaction each has open (-1 without),
 * read on the partition's writer, which owns that state. Only the leader holds the state here
 * (there are no followers): elsewhere NOT_LEADER_OR_FOLLOWER.
 */
@ApplicationScoped
public class DescribeProducersHandler implements ApiHandler {
    private final Partitions partitions;
    private final ClusterView view;

    public DescribeProducersHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_PRODUCERS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DescribeProducersRequestData d = ((DescribeProducersRequest) request).data();
        DescribeProducersResponseData resp = new DescribeProducersResponseData().setThrottleTimeMs(0);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (var t : d.topics()) {
            var tr = new DescribeProducersResponseData.TopicResponse().setName(t.name());
            resp.topics().add(tr);
            // READ (not DESCRIBE) on the topic, as Apache's handleDescribeProducersRequest, before its existence.
            boolean mayRead = ctx.allowed(AclOperation.READ, ResourceType.TOPIC, t.name());
            for (int p : t.partitionIndexes()) {
                var pr = new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(p);
                tr.partitions().add(pr);
                if (!mayRead) {
                    pr.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message());
                    continue;
                }
                pending.add(describe(new TopicPartition(t.name(), p), pr));
            }
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(v -> resp);
    }

    private CompletableFuture<Void> describe(TopicPartition tp, DescribeProducersResponseData.PartitionResponse pr) {
        Replica r = partitions.get(tp);
        if (r == null || r.log().isFenced()) {
            pr.setErrorCode((view.exists(tp) ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            r.writer().execute(() -> {
                for (var s : r.log().producers()) {
                    pr.activeProducers().add(new DescribeProducersResponseData.ProducerState().setProducerId(s.producerId())
                            .setProducerEpoch(s.epoch()).setLastSequence(s.lastSequence()).setLastTimestamp(s.lastTimestamp())
                            .setCoordinatorEpoch(s.coordinatorEpoch()).setCurrentTxnStartOffset(s.currentTxnStartOffset()));
                }
                pr.setErrorCode(Errors.NONE.code());
                done.complete(null);
            });
        } catch (RuntimeException e) {
            pr.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
            done.complete(null);
        }
        return done;
    }
}
