package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.CreatePartitionsCall;
import dev.kaas.proto.PartitionsToAdd;
import dev.kaas.proto.TopicResult;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreatePartitions (key 37), forwarded to the controller as Apache forwards it to its KRaft
 * controller: a topic named twice is INVALID_REQUEST ("Duplicate topic name.", answered once), manual
 * assignments are INVALID_REQUEST (the controller places partitions, as for CreateTopics), and the
 * controller decides the rest (unknown topic, no increase, the cluster's partition cap). Once the
 * partitions exist, the answer waits (bounded by the request timeout) until this broker applied
 * the assignment that holds them, so a follow-up Metadata shows them.
 */
@ApplicationScoped
public class CreatePartitionsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;

    public CreatePartitionsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.CREATE_PARTITIONS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        CreatePartitionsRequestData data = ((CreatePartitionsRequest) request).data();
        Map<String, Integer> seen = new HashMap<>();
        data.topics().forEach(t -> seen.merge(t.name(), 1, Integer::sum));
        Map<String, CreatePartitionsTopicResult> local = new HashMap<>();
        CreatePartitionsCall.Builder call = CreatePartitionsCall.newBuilder().setValidateOnly(data.validateOnly())
                .setClient(Mutations.client(ctx, 3));
        for (CreatePartitionsTopic t : data.topics()) {
            CreatePartitionsTopicResult r = new CreatePartitionsTopicResult().setName(t.name());
            if (seen.get(t.name()) > 1) {
                local.put(t.name(), r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name."));
            } else if (!ctx.allowed(AclOperation.ALTER, ResourceType.TOPIC, t.name())) {
                // Apache's controller: ALTER on the topic (no cluster-wide shortcut), before its existence.
                local.put(t.name(), r.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            } else if (Topic.isInternal(t.name())) {
                // kaas keeps that state in files: there is no such topic to grow.
                local.put(t.name(), r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
            } else if (t.assignments() != null) {
                local.put(t.name(), r.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("kaas places partitions itself: manual replica assignment is not supported."));
            } else {
                call.addTopics(PartitionsToAdd.newBuilder().setName(t.name()).setCount(t.count()));
            }
        }
        if (call.getTopicsCount() == 0) {
            return CompletableFuture.completedFuture(respond(data, local, Map.of()));
        }
        return controller.createPartitions(call.build()).thenCompose(reply -> {
            Map<String, TopicResult> remote = new HashMap<>();
            reply.getResultsList().forEach(r -> remote.put(r.getName(), r));
            CreatePartitionsResponseData resp = respond(data, local, remote);
            Mutations.throttle(ctx, reply.getThrottleTimeMs());
            resp.setThrottleTimeMs(reply.getThrottleTimeMs());
            boolean grown = !data.validateOnly() && reply.getResultsList().stream().anyMatch(r -> r.getErrorCode() == 0);
            if (!grown) {
                return CompletableFuture.completedFuture((ApiMessage) resp);
            }
            return view.awaitVersion(reply.getAssignmentVersion())
                    .completeOnTimeout(null, Math.max(1000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                    .thenApply(v -> (ApiMessage) resp);
        });
    }

    /** One result per topic name, in the request's order (a duplicate name once, as Apache's ControllerApis answers it). */
    private static CreatePartitionsResponseData respond(CreatePartitionsRequestData data, Map<String, CreatePartitionsTopicResult> local,
                                                        Map<String, TopicResult> remote) {
        CreatePartitionsResponseData resp = new CreatePartitionsResponseData().setThrottleTimeMs(0);
        java.util.Set<String> names = new java.util.LinkedHashSet<>();
        data.topics().forEach(t -> names.add(t.name()));
        for (String name : names) {
            CreatePartitionsTopicResult r = local.get(name);
            if (r == null) {
                TopicResult c = remote.get(name);
                r = new CreatePartitionsTopicResult().setName(name);
                if (c == null) {
                    r.setErrorCode(Errors.UNKNOWN_SERVER_ERROR.code());
                } else {
                    r.setErrorCode((short) c.getErrorCode()).setErrorMessage(c.getErrorMessage().isEmpty() ? null : c.getErrorMessage());
                }
            }
            resp.results().add(r.duplicate());
        }
        return resp;
    }
}
