package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.TopicRef;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;

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

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DeleteTopicsRequest req = (DeleteTopicsRequest) request;
        DeleteTopicsRequestData data = req.data();
        DeleteTopicsCall.Builder call = DeleteTopicsCall.newBuilder();
        boolean byState = ctx.apiVersion() >= 6;
        if (byState) {
            for (DeleteTopicState t : data.topics()) {
                boolean hasId = t.topicId() != null && !Uuid.ZERO_UUID.equals(t.topicId());
                call.addTopics(TopicRef.newBuilder().setName(t.name() == null ? "" : t.name())
                        .setTopicId(hasId ? t.topicId().toString() : ""));
            }
        } else {
            data.topicNames().forEach(n -> call.addTopics(TopicRef.newBuilder().setName(n)));
        }
        if (call.getTopicsCount() == 0) {
            return CompletableFuture.completedFuture(new DeleteTopicsResponseData());
        }
        return controller.deleteTopics(call.build()).thenCompose(reply -> {
            DeleteTopicsResponseData resp = new DeleteTopicsResponseData().setThrottleTimeMs(0);
            reply.getResultsList().forEach(r -> {
                Errors e = Errors.forCode((short) r.getErrorCode());
                DeletableTopicResult out = new DeletableTopicResult().setErrorCode(e.code())
                        .setErrorMessage(e == Errors.NONE ? null : r.getErrorMessage())
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
