package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.TopicRef;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DeleteTopics by name (all versions) or by topic ID (v6+), forwarded to the controller. The
 * leader of each partition closes it without persisting anything and removes its directory
 * when it applies the assignment without the topic.
 */
@ApplicationScoped
public class DeleteTopicsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;

    public DeleteTopicsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DELETE_TOPICS;
    }

    private static DeletableTopicResult deniedResult(String name) {
        return new DeletableTopicResult().setName(name).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message());
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DeleteTopicsRequest req = (DeleteTopicsRequest) request;
        DeleteTopicsRequestData data = req.data();
        DeleteTopicsCall.Builder call = DeleteTopicsCall.newBuilder().setClient(Mutations.client(ctx, 5));
        boolean byState = ctx.apiVersion() >= 6;
        // Apache's controller: DELETE on the cluster covers every topic; else a topic needs DESCRIBE and DELETE,
        // refused (29) before its existence by name; by id, its name is withheld unless it may be described.
        boolean deleteAny = ctx.access().allowedOnCluster(AclOperation.DELETE);
        List<DeletableTopicResult> denied = new ArrayList<>();
        if (byState) {
            for (DeleteTopicState t : data.topics()) {
                boolean hasId = t.topicId() != null && !Uuid.ZERO_UUID.equals(t.topicId());
                boolean hasName = t.name() != null && !t.name().isEmpty();
                if (hasId && hasName) {
                    // Apache's ControllerApis refuses it before anything else (the controller deletes by id).
                    denied.add(new DeletableTopicResult().setName(t.name()).setTopicId(t.topicId())
                            .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("You may not specify both topic name and topic id."));
                    continue;
                }
                String name = hasName ? t.name() : null;
                if (hasId) {
                    var known = view.topicById(t.topicId().toString());
                    name = known == null ? null : known.topic().name();
                    if (name == null && !deleteAny) {
                        // An id this broker cannot name cannot be authorized: refused (a topic created a moment ago
                        // is found on the client's retry, once this broker applied it).
                        denied.add(new DeletableTopicResult().setName(null).setTopicId(t.topicId())
                                .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()).setErrorMessage(Errors.UNKNOWN_TOPIC_ID.message()));
                        continue;
                    }
                }
                if (!deleteAny && name != null) {
                    boolean describe = ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, name);
                    if (!describe || !ctx.allowed(AclOperation.DELETE, ResourceType.TOPIC, name)) {
                        denied.add(deniedResult(hasId && !describe ? null : name).setTopicId(hasId ? t.topicId() : Uuid.ZERO_UUID));
                        continue;
                    }
                }
                call.addTopics(TopicRef.newBuilder().setName(t.name() == null ? "" : t.name())
                        .setTopicId(hasId ? t.topicId().toString() : ""));
            }
        } else {
            for (String n : data.topicNames()) {
                if (!deleteAny && !(ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, n) && ctx.allowed(AclOperation.DELETE, ResourceType.TOPIC, n))) {
                    denied.add(deniedResult(n));
                    continue;
                }
                call.addTopics(TopicRef.newBuilder().setName(n));
            }
        }
        if (call.getTopicsCount() == 0) {
            DeleteTopicsResponseData resp = new DeleteTopicsResponseData();
            denied.forEach(resp.responses()::add);
            return CompletableFuture.completedFuture(resp);
        }
        return controller.deleteTopics(call.build()).thenCompose(reply -> {
            Mutations.throttle(ctx, reply.getThrottleTimeMs());
            DeleteTopicsResponseData resp = new DeleteTopicsResponseData().setThrottleTimeMs(reply.getThrottleTimeMs());
            denied.forEach(resp.responses()::add);
            reply.getResultsList().forEach(r -> {
                Errors e = Errors.forCode((short) r.getErrorCode());
                DeletableTopicResult out = new DeletableTopicResult().setErrorCode(e.code())
                        .setErrorMessage(e == Errors.NONE || r.getErrorMessage().isEmpty() ? null : r.getErrorMessage())
                        .setName(r.getName().isEmpty() && byState ? null : r.getName());
                if (byState && !r.getTopicId().isEmpty()) {
                    out.setTopicId(Uuid.fromString(r.getTopicId()));
                }
                resp.responses().add(out);
            });
            return view.awaitVersion(reply.getAssignmentVersion())
                    .completeOnTimeout(null, Math.max(1000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                    .thenApply(v -> (ApiMessage) resp);
        });
    }
}
