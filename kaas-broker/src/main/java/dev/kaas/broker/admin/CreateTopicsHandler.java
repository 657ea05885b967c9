package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.config.NewTopicChecks;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicResult;
import dev.kaas.proto.TopicToCreate;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicConfigs;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreateTopics, forwarded to the controller. Checks that need no catalog happen here (reserved
 * internal names, replica assignment, replication factor); the controller validates names, partitions and configs.
 * Once created, the response waits (bounded by the request timeout) until this broker has
 * applied the assignment that contains the topics, so a follow-up Metadata sees them.
 *
 * <p>Replication factor: -1 and any value ≥ 1 are accepted and every partition is reported with
 * one replica: durability comes from the volume, not from copies (src/docs/compatibility.md).
 */
@ApplicationScoped
public class CreateTopicsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;
    private final dev.kaas.broker.data.Partitions partitions;

    public CreateTopicsHandler(ControllerAdmin controller, ClusterView view, dev.kaas.broker.data.Partitions partitions) {
        this.controller = controller;
        this.view = view;
        this.partitions = partitions;
    }

    /** The checks shared with the controller's REST API; a reserved name is refused even with a manual assignment. */
    private static NewTopicChecks.Refusal refusal(CreatableTopic t) {
        if (!t.assignments().isEmpty() && !Topic.isInternal(t.name())) {
            return null;
        }
        return NewTopicChecks.check(t.name(), t.numPartitions(), t.replicationFactor());
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.CREATE_TOPICS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        CreateTopicsRequestData data = ((CreateTopicsRequest) request).data();
        CreateTopicsResponseData resp = new CreateTopicsResponseData().setThrottleTimeMs(0);
        Map<String, CreatableTopicResult> local = new HashMap<>();
        CreateTopicsCall.Builder call = CreateTopicsCall.newBuilder().setValidateOnly(data.validateOnly())
                .setClient(Mutations.client(ctx, 6));
        long refusedPartitions = 0;
        // Apache's controller: CREATE on the cluster, else on each topic, before the name is checked or looked up.
        boolean createAny = ctx.access().allowedOnCluster(AclOperation.CREATE);
        java.util.Set<String> once = new java.util.HashSet<>();
        java.util.Set<String> duplicates = new java.util.HashSet<>();
        data.topics().forEach(t -> {
            if (!once.add(t.name())) {
                duplicates.add(t.name());
            }
        });
        for (CreatableTopic t : data.topics()) {
            CreatableTopicResult r = new CreatableTopicResult().setName(t.name());
            if (duplicates.contains(t.name())) {
                // Apache's ControllerApis, before authorization: no copy of a name given twice is created.
                r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name.");
            } else if (!createAny && !ctx.allowed(AclOperation.CREATE, ResourceType.TOPIC, t.name())) {
                r.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage("Authorization failed.");
            } else if (refusal(t) != null) {
                r.setErrorCode(refusal(t).error().code()).setErrorMessage(refusal(t).message());
            } else if (!t.assignments().isEmpty()) {
                r.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("kaas places partitions itself: manual replica assignment is not supported.");
            } else {
                TopicToCreate.Builder b = TopicToCreate.newBuilder().setName(t.name()).setNumPartitions(t.numPartitions());
                t.configs().forEach(c -> {
                    if (c.value() != null) {
                        b.addConfigs(TopicConfig.newBuilder().setName(c.name()).setValue(c.value()));
                    } else {
                        r.setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage("Null value not supported for topic configs: " + c.name());
                    }
                });
                if (r.errorCode() == Errors.NONE.code()) {
                    call.addTopics(b);
                    continue;
                }
            }
            local.put(t.name(), r);
            // Counted as Apache counts them for its per-request limit, which the controller applies.
            refusedPartitions += !t.assignments().isEmpty() ? t.assignments().size() : Math.max(0, t.numPartitions());
        }
        call.setPartitionsRefusedByBroker(refusedPartitions);
        if (call.getTopicsCount() == 0) {
            data.topics().forEach(t -> resp.topics().add(local.get(t.name()).duplicate()));
            return CompletableFuture.completedFuture(resp);
        }
        return controller.createTopics(call.build()).thenCompose(reply -> {
            Map<String, TopicResult> remote = new HashMap<>();
            reply.getResultsList().forEach(r -> remote.putIfAbsent(r.getName(), r));
            for (CreatableTopic t : data.topics()) {
                if (reply.getErrorCode() != 0) {
                    // The whole request was refused (Apache's partitions-per-request limit): every
                    // topic gets that error, as Apache fails the request before any per-topic check.
                    resp.topics().add(new CreatableTopicResult().setName(t.name()).setErrorCode((short) reply.getErrorCode())
                            .setErrorMessage(reply.getErrorMessage()));
                    continue;
                }
                CreatableTopicResult r = local.get(t.name());
                if (r == null) {
                    r = fromController(remote.get(t.name()), ctx.apiVersion(),
                            ctx.allowed(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name()));
                }
                resp.topics().add(r.duplicate());
            }
            Mutations.throttle(ctx, reply.getThrottleTimeMs());
            resp.setThrottleTimeMs(reply.getThrottleTimeMs());
            boolean created = !data.validateOnly() && reply.getResultsList().stream().anyMatch(r -> r.getErrorCode() == 0);
            if (!created) {
                return CompletableFuture.completedFuture((ApiMessage) resp);
            }
            return view.awaitVersion(reply.getAssignmentVersion())
                    .completeOnTimeout(null, Math.max(1000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                    .thenApply(v -> (ApiMessage) resp);
        });
    }

    /** @param describeConfigs DESCRIBE_CONFIGS on the topic: without it Apache answers its id alone, and TOPIC_AUTHORIZATION_FAILED for the configs */
    private CreatableTopicResult fromController(TopicResult r, short version, boolean describeConfigs) {
        CreatableTopicResult out = new CreatableTopicResult().setName(r.getName()).setErrorCode((short) r.getErrorCode());
        if (r.getErrorCode() != 0) {
            return out.setErrorMessage(r.getErrorMessage().isEmpty() ? null : r.getErrorMessage());
        }
        if (!describeConfigs) {
            out.setTopicId(Uuid.fromString(r.getTopicId()));
            return version >= 5 ? out.setTopicConfigErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()) : out;
        }
        out.setTopicId(Uuid.fromString(r.getTopicId())).setNumPartitions(r.getNumPartitions()).setReplicationFactor((short) 1);
        Map<String, String> overrides = new HashMap<>();
        r.getConfigsList().forEach(c -> overrides.put(c.getName(), c.getValue()));
        if (version >= 5) {
            TopicConfigEntries topic = new TopicConfigEntries(partitions.topicDefaults(), overrides);
            for (String name : TopicConfigs.names().stream().sorted().toList()) {
                out.configs().add(new CreatableTopicConfigs().setName(name).setValue(topic.value(name))
                        .setReadOnly(false).setIsSensitive(false).setConfigSource(topic.source(name).id()));
            }
        }
        return out;
    }
}
