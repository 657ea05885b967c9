package dev.kaas.broker.admin;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.TopicToCreate;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseBroker;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.jboss.logging.Logger;

/**
 * Metadata from the applied assignment. Brokers are listed with the endpoint of the listener the
 * request came in on; every partition has one replica, its leader (the volume replicates, not
 * the brokers). Unknown topics are auto-created through the controller when the request and
 * {@code auto.create.topics.enable} allow; the response waits up to {@link #AUTO_CREATE_WAIT_MS}
 * for them to be served here and answers LEADER_NOT_AVAILABLE for those that are not yet (Apache
 * always answers LEADER_NOT_AVAILABLE first).
 */
@ApplicationScoped
public class MetadataHandler implements ApiHandler {
    private static final Logger LOG = Logger.getLogger(MetadataHandler.class);
    /** How long a Metadata request that auto-creates topics waits for them to be served here. */
    static final long AUTO_CREATE_WAIT_MS = 1000;

    private final ClusterView view;
    private final ControllerAdmin controller;
    private final BrokerConfig config;

    public MetadataHandler(ClusterView view, ControllerAdmin controller, BrokerConfig config) {
        this.view = view;
        this.controller = controller;
        this.config = config;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.METADATA;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        MetadataRequest req = (MetadataRequest) request;
        MetadataRequestData data = req.data();
        InvalidRequestException invalid = unservable(req);
        if (invalid != null) {
            // Apache throws here, and the whole request is answered INVALID_REQUEST per topic
            // (MetadataRequest.getErrorResponse, a null name sent back as "").
            return CompletableFuture.failedFuture(invalid);
        }
        Assignment a = view.assignment();
        MetadataResponseData resp = new MetadataResponseData()
                .setClusterId(a.clusterId())
                .setThrottleTimeMs(0);
        addBrokers(resp, a, ctx.listenerName());
        List<String> toCreate = new ArrayList<>();
        // Apache's handleTopicMetadataRequest: DESCRIBE on each topic; all topics: those silently; named ones
        // without it TOPIC_AUTHORIZATION_FAILED, before their existence (by id: once the id is known, name withheld).
        List<MetadataResponseTopic> denied = new ArrayList<>();
        List<MetadataResponseTopic> notCreated = new ArrayList<>();
        if (req.isAllTopics()) {
            view.topics().values().stream().sorted((x, y) -> x.topic().name().compareTo(y.topic().name()))
                    .filter(t -> ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic().name()))
                    .forEach(t -> resp.topics().add(describe(t)));
        } else {
            boolean autoCreate = data.allowAutoTopicCreation() && config.broker().autoCreateTopicsEnable();
            boolean createAny = autoCreate && ctx.access().allowedOnCluster(AclOperation.CREATE);
            for (MetadataRequestData.MetadataRequestTopic rt : data.topics()) {
                if (rt.name() == null && rt.topicId() != null && !Uuid.ZERO_UUID.equals(rt.topicId())) {
                    TopicAssignment t = view.topicById(rt.topicId().toString());
                    if (t == null) {
                        resp.topics().add(new MetadataResponseTopic().setTopicId(rt.topicId()).setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
                    } else if (!ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic().name())) {
                        denied.add(new MetadataResponseTopic().setName(null).setTopicId(rt.topicId()).setIsInternal(false)
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    } else {
                        resp.topics().add(describe(t));
                    }
                    continue;
                }
                String name = rt.name();
                if (name != null && !ctx.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
                    denied.add(new MetadataResponseTopic().setName(name).setTopicId(Uuid.ZERO_UUID).setIsInternal(false)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    continue;
                }
                TopicAssignment t = name == null ? null : view.topic(name);
                if (t != null) {
                    resp.topics().add(describe(t));
                    continue;
                }
                Errors error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
                try {
                    Topic.validate(name);
                    if (autoCreate && !Topic.isInternal(name)) {
                        if (!createAny && !ctx.allowed(AclOperation.CREATE, ResourceType.TOPIC, name)) {
                            // Apache lists these after the topics described, with the name's internal flag.
                            notCreated.add(new MetadataResponseTopic().setName(name).setTopicId(Uuid.ZERO_UUID)
                                    .setIsInternal(Topic.isInternal(name)).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                            continue;
                        }
                        toCreate.add(name);
                        error = Errors.LEADER_NOT_AVAILABLE;
                    }
                } catch (InvalidTopicException | NullPointerException e) {
                    error = Errors.INVALID_TOPIC_EXCEPTION;
                }
                resp.topics().add(new MetadataResponseTopic().setName(name).setErrorCode(error.code()).setIsInternal(false));
            }
        }
        if (data.includeTopicAuthorizedOperations()) {
            // Only for the topics described (or not found), as Apache: refused ones keep the schema's default.
            resp.topics().stream().filter(rt -> rt.name() != null)
                    .forEach(rt -> rt.setTopicAuthorizedOperations(ctx.access().authorizedOperations(ResourceType.TOPIC, rt.name())));
        }
        resp.topics().addAll(notCreated);
        resp.topics().addAll(denied);
        if (data.includeClusterAuthorizedOperations() && req.version() >= 8 && req.version() <= 10) {
            resp.setClusterAuthorizedOperations(ctx.access().allowedOnCluster(AclOperation.DESCRIBE)
                    ? ctx.access().authorizedOperations(ResourceType.CLUSTER, Access.CLUSTER) : 0);
        }
        if (toCreate.isEmpty()) {
            return CompletableFuture.completedFuture(resp);
        }
        CreateTopicsCall.Builder call = CreateTopicsCall.newBuilder();
        toCreate.forEach(n -> call.addTopics(TopicToCreate.newBuilder().setName(n).setNumPartitions(-1)));
        // Apache answers LEADER_NOT_AVAILABLE at once and the client asks again after a growing
        // back-off; waiting a bounded moment for the creation to be applied here (it takes
        // milliseconds when warm) lets most first requests be answered in one round trip.
        return controller.createTopics(call.build())
                .thenCompose(reply -> view.awaitVersion(reply.getAssignmentVersion()))
                .completeOnTimeout(null, AUTO_CREATE_WAIT_MS, TimeUnit.MILLISECONDS)
                .handle((applied, e) -> {
                    if (e != null) {
                        LOG.warnf("auto-creation failed topics=%s: %s", toCreate, e.getMessage());
                    }
                    // The topics served now may lead on brokers the first snapshot did not list.
                    resp.brokers().clear();
                    addBrokers(resp, view.assignment(), ctx.listenerName());
                    for (MetadataResponseTopic rt : resp.topics()) {
                        TopicAssignment t = rt.errorCode() == Errors.LEADER_NOT_AVAILABLE.code() ? view.topic(rt.name()) : null;
                        if (t != null) {
                            MetadataResponseTopic served = describe(t);
                            rt.setErrorCode(served.errorCode()).setTopicId(served.topicId()).setPartitions(served.partitions());
                        }
                    }
                    return (ApiMessage) resp;
                });
    }

    /**
     * Apache 3.7's {@code handleTopicMetadataRequest}: versions 10 and 11 carry a topic id
     * field but serve topics by name only, so a null name or a non-zero id is an invalid request.
     */
    static InvalidRequestException unservable(MetadataRequest req) {
        if (req.isAllTopics() || req.version() >= 12) {
            return null;
        }
        for (MetadataRequestData.MetadataRequestTopic t : req.data().topics()) {
            if (t.name() == null) {
                return new InvalidRequestException("Topic name can not be null for version " + req.version());
            }
            if (!Uuid.ZERO_UUID.equals(t.topicId())) {
                return new InvalidRequestException("Topic IDs are not supported in requests for version " + req.version());
            }
        }
        return null;
    }

    /** The brokers listed to a client on {@code listenerName}, and the controller id that goes with them. */
    private static void addBrokers(MetadataResponseData resp, Assignment a, String listenerName) {
        List<Node> nodes = ClusterView.nodes(a, listenerName);
        for (Node n : nodes) {
            resp.brokers().add(new MetadataResponseBroker().setNodeId(n.id()).setHost(n.host()).setPort(n.port()));
        }
        resp.setControllerId(controllerId(nodes));
    }

    /**
     * The {@code controller_id} kaas reports in Metadata and DescribeCluster: the lowest id among the
     * brokers listed to the client, -1 when none is. Apache 3.7 in KRaft mode reports a random live
     * broker ({@code KRaftMetadataCache.getRandomAliveBrokerId}), because clients cannot reach the
     * KRaft controller; kaas's controller speaks to brokers only, so it does the same with a stable
     * choice (see src/docs/compatibility.md). Taken from the listed brokers, so it is always one of
     * them, as Apache's DescribeCluster ensures.
     */
    static int controllerId(List<Node> listed) {
        return listed.stream().mapToInt(Node::id).min().orElse(MetadataResponse.NO_CONTROLLER_ID);
    }

    static MetadataResponseTopic describe(TopicAssignment t) {
        MetadataResponseTopic out = new MetadataResponseTopic().setName(t.topic().name())
                .setTopicId(Uuid.fromString(t.topic().topicId())).setIsInternal(false).setErrorCode(Errors.NONE.code());
        for (PartitionAssignment p : t.partitions()) {
            boolean led = p.leader() != PartitionAssignment.NO_LEADER;
            List<Integer> replicas = led ? List.of(p.leader()) : List.of();
            out.partitions().add(new MetadataResponsePartition().setPartitionIndex(p.partition())
                    .setErrorCode(led ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code())
                    .setLeaderId(p.leader()).setLeaderEpoch(p.leaderEpoch())
                    .setReplicaNodes(replicas).setIsrNodes(replicas).setOfflineReplicas(List.of()));
        }
        return out;
    }
}
