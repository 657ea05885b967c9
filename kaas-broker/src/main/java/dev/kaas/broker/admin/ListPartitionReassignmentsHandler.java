package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingTopicReassignment;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;

/**
 * ListPartitionReassignments (key 46), answered from the assignment this broker applied: a
 * partition is reassigning while its writer is not yet the broker a reassignment named, shown as
 * Apache shows a move in progress (replicas target then current, adding the target, removing the
 * current writer, or while the handoff is under way the writer closing it, so
 * {@code kafka-reassign-partitions.sh --cancel} finds it). Unknown topics and partitions are left
 * out, as Apache's controller does.
 *
 * <p>Apache's broker forwards the request to the controller. Here the broker first asks the
 * controller which assignment it has published and answers once it has applied that one itself,
 * so a move the controller accepted or finished through another broker is never missing or
 * stale here ({@code kafka-reassign-partitions.sh --verify} right after {@code --execute}). An
 * unreachable controller is NOT_CONTROLLER, which the client retries; an assignment not applied
 * within the request's timeout is REQUEST_TIMED_OUT.
 */
@ApplicationScoped
public class ListPartitionReassignmentsHandler implements ApiHandler {
    private final ClusterView view;
    private final Supplier<CompletableFuture<Long>> publishedVersion;

    @Inject
    public ListPartitionReassignmentsHandler(ClusterView view, ControllerAdmin controller) {
        this(view, controller::assignmentVersion);
    }

    ListPartitionReassignmentsHandler(ClusterView view, Supplier<CompletableFuture<Long>> publishedVersion) {
        this.view = view;
        this.publishedVersion = publishedVersion;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.LIST_PARTITION_REASSIGNMENTS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.DESCRIBE);
        ListPartitionReassignmentsRequestData data = ((ListPartitionReassignmentsRequest) request).data();
        long waitMs = Math.min(60_000, Math.max(1_000, data.timeoutMs()));
        return publishedVersion.get()
                .thenCompose(version -> view.awaitVersion(version).thenApply(applied -> true)
                        .completeOnTimeout(false, waitMs, TimeUnit.MILLISECONDS))
                .thenApply(caughtUp -> caughtUp ? answer(data) : new ListPartitionReassignmentsResponseData()
                        .setErrorCode(Errors.REQUEST_TIMED_OUT.code())
                        .setErrorMessage("This broker had not applied the controller's assignment within " + waitMs + " ms"));
    }

    private ApiMessage answer(ListPartitionReassignmentsRequestData data) {
        ListPartitionReassignmentsResponseData resp = new ListPartitionReassignmentsResponseData().setErrorMessage(null);
        if (data.topics() == null) {
            view.topics().values().stream().sorted(java.util.Comparator.comparing(t -> t.topic().name()))
                    .forEach(t -> add(resp, t, null));
        } else {
            for (var wanted : data.topics()) {
                TopicAssignment t = view.topic(wanted.name());
                if (t != null) {
                    add(resp, t, wanted.partitionIndexes());
                }
            }
        }
        return resp;
    }

    private static void add(ListPartitionReassignmentsResponseData resp, TopicAssignment t, List<Integer> partitions) {
        OngoingTopicReassignment out = new OngoingTopicReassignment().setName(t.topic().name());
        for (PartitionAssignment p : t.partitions()) {
            if ((partitions != null && !partitions.contains(p.partition())) || !p.reassigning()) {
                continue;
            }
            List<Integer> replicas = new ArrayList<>(List.of(p.target()));
            List<Integer> removing = new ArrayList<>();
            // The writer it moves from: the current one, or while the handoff is under way the one closing it.
            Integer from = p.leader() != PartitionAssignment.NO_LEADER ? Integer.valueOf(p.leader()) : p.leaving();
            if (from != null && !from.equals(p.target())) {
                replicas.add(from);
                removing.add(from);
            }
            out.partitions().add(new OngoingPartitionReassignment().setPartitionIndex(p.partition()).setReplicas(replicas)
                    .setAddingReplicas(List.of(p.target())).setRemovingReplicas(removing));
        }
        if (!out.partitions().isEmpty()) {
            resp.topics().add(out);
        }
    }
}
