package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.PartitionMove;
import dev.kaas.proto.PartitionMoveResult;
import dev.kaas.proto.ReassignPartitionsCall;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;

/**
 * AlterPartitionReassignments (key 45), forwarded to the controller as Apache forwards it to its
 * KRaft controller. kaas keeps one copy of a partition, so a reassignment names one broker: the
 * controller hands the partition's writer off to it ({@code ControllerCore.reassignPartitions};
 * src/docs/compatibility.md). The answer waits (bounded by the request's timeout) until this
 * broker applied the assignment that records the moves, so a ListPartitionReassignments after it
 * sees them.
 */
@ApplicationScoped
public class AlterPartitionReassignmentsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;

    public AlterPartitionReassignmentsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ALTER_PARTITION_REASSIGNMENTS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        AlterPartitionReassignmentsRequestData data = ((AlterPartitionReassignmentsRequest) request).data();
        ReassignPartitionsCall.Builder call = ReassignPartitionsCall.newBuilder();
        for (var t : data.topics()) {
            for (var p : t.partitions()) {
                PartitionMove.Builder m = PartitionMove.newBuilder().setTopic(t.name()).setPartition(p.partitionIndex());
                if (p.replicas() == null) {
                    m.setCancel(true);
                } else {
                    m.addAllReplicas(p.replicas());
                }
                call.addMoves(m);
            }
        }
        if (call.getMovesCount() == 0) {
            // As Apache's controller: an entry per topic named, with no partitions.
            AlterPartitionReassignmentsResponseData empty = new AlterPartitionReassignmentsResponseData().setErrorMessage(null);
            data.topics().forEach(t -> empty.responses().add(new ReassignableTopicResponse().setName(t.name())));
            return CompletableFuture.completedFuture(empty);
        }
        return controller.reassignPartitions(call.build()).thenCompose(reply -> {
            // One result per move, in the request's order (a partition named twice gets two answers, as from Apache).
            java.util.Iterator<PartitionMoveResult> results = reply.getResultsList().iterator();
            AlterPartitionReassignmentsResponseData resp = new AlterPartitionReassignmentsResponseData().setErrorMessage(null);
            for (var t : data.topics()) {
                ReassignableTopicResponse tr = new ReassignableTopicResponse().setName(t.name());
                for (var p : t.partitions()) {
                    PartitionMoveResult r = results.hasNext() ? results.next() : null;
                    ReassignablePartitionResponse pr = new ReassignablePartitionResponse().setPartitionIndex(p.partitionIndex());
                    if (r == null) {
                        pr.setErrorCode(Errors.UNKNOWN_SERVER_ERROR.code()).setErrorMessage(null);
                    } else {
                        pr.setErrorCode((short) r.getErrorCode()).setErrorMessage(r.getErrorMessage().isEmpty() ? null : r.getErrorMessage());
                    }
                    tr.partitions().add(pr);
                }
                resp.responses().add(tr);
            }
            return view.awaitVersion(reply.getAssignmentVersion())
                    .completeOnTimeout(null, Math.max(1000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                    .thenApply(v -> (ApiMessage) resp);
        });
    }
}
