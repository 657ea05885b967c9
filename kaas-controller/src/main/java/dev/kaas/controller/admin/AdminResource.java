package dev.kaas.controller.admin;

import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.config.NewTopicChecks;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.controller.cluster.ClusterStats;
import dev.kaas.controller.cluster.ControllerCore;
import dev.kaas.controller.cluster.ControllerRuntime;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.CreateTopicsReply;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.DeleteTopicsReply;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicResult;
import dev.kaas.proto.TopicToCreate;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.protocol.Errors;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.security.SecuritySchemes;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The REST admin API on the controller's HTTP port (src/docs/rest-api.md). Every call runs on a
 * worker thread and reaches the controller's state through its loop, waiting at most
 * {@link #CALL_TIMEOUT_MS}; changes go through the same {@link ControllerCore} calls, with the same
 * validation and errors, as the Kafka API's forwarded requests. A standby answers
 * {@code /cluster} only: everything else is the leader's, 503 NOT_CONTROLLER here.
 */
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "kaas admin")
@SecuritySchemes({
        @SecurityScheme(securitySchemeName = "bearer", type = SecuritySchemeType.HTTP, scheme = "bearer"),
        @SecurityScheme(securitySchemeName = "basic", type = SecuritySchemeType.HTTP, scheme = "basic")})
@SecurityRequirement(name = "bearer")
@SecurityRequirement(name = "basic")
@APIResponse(responseCode = "401", description = "No or unknown credentials", content = @Content(schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "503", description = "NOT_CONTROLLER: this controller is a standby (ask the lease holder), or REQUEST_TIMED_OUT",
        content = @Content(schema = @Schema(implementation = ApiError.class)))
public class AdminResource {
    static final long CALL_TIMEOUT_MS = 10_000;

    private final ControllerRuntime runtime;
    private final ClusterStats stats;

    public AdminResource(ControllerRuntime runtime, ClusterStats stats) {
        this.runtime = runtime;
        this.stats = stats;
    }

    @GET
    @Path("/cluster")
    @Operation(summary = "The lease holder, controller epoch, brokers with endpoints and health, and assignment version; a standby answers too")
    @APIResponse(responseCode = "200", description = "The cluster", content = @Content(schema = @Schema(implementation = ApiViews.Cluster.class)))
    public ApiViews.Cluster cluster() {
        return await(runtime.inspect(core -> {
            long now = System.currentTimeMillis();
            LeaseRecord lease = core.lease();
            Assignment a = core.current();
            long version = a == null ? -1 : a.version();
            List<ApiViews.Broker> brokers = core.isLeader() ? core.brokers().stream().map(b -> brokerView(b, version, now)).toList()
                    : List.of();
            return new ApiViews.Cluster(core.clusterId(), new ApiViews.Controller(runtime.holder(), core.isLeader(), core.epoch()),
                    lease == null ? null : new ApiViews.Lease(lease.holder(), lease.transitions(), lease.renewDeadlineMs() - now),
                    version, core.isLeader() ? core.handoffsInFlight() : 0, brokers);
        }));
    }

    static ApiViews.Broker brokerView(ControllerCore.BrokerView b, long assignmentVersion, long nowMs) {
        return new ApiViews.Broker(b.info().id(), b.info().endpoints(), b.alive(), b.alive() ? Math.max(0, nowMs - b.lastSeenMs()) : null,
                b.appliedVersion(), b.appliedVersion() >= assignmentVersion, b.drained(),
                new ApiViews.Owned(b.partitions(), b.groupSlots(), b.txnSlots()), b.handingOff(), b.idle());
    }

    @GET
    @Path("/topics")
    @Operation(summary = "Every topic, by name")
    @APIResponse(responseCode = "200", description = "The topics", content = @Content(schema = @Schema(implementation = ApiViews.TopicSummary.class, type = SchemaType.ARRAY)))
    public List<ApiViews.TopicSummary> topics() {
        Assignment a = leaderRead(ControllerCore::current);
        return a.topics().stream().map(TopicAssignment::topic).sorted(Comparator.comparing(t -> t.name()))
                .map(t -> new ApiViews.TopicSummary(t.name(), t.topicId(), t.partitions(), t.configs())).toList();
    }

    @GET
    @Path("/topics/{name}")
    @Operation(summary = "A topic's partitions: leader, leader epoch, log start and end offsets, size")
    @APIResponse(responseCode = "404", description = "UNKNOWN_TOPIC_OR_PARTITION", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "200", description = "The topic", content = @Content(schema = @Schema(implementation = ApiViews.Topic.class)))
    public ApiViews.Topic topic(@PathParam("name") String name) {
        Assignment a = leaderRead(ControllerCore::current);
        TopicAssignment t = a.topicByName(name).orElseThrow(() -> kafkaError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                "Topic '" + name + "' does not exist."));
        return topicView(t, stats.snapshot());
    }

    static ApiViews.Topic topicView(TopicAssignment t, ClusterStats.Snapshot snapshot) {
        List<ApiViews.Partition> partitions = new ArrayList<>();
        t.partitions().forEach(p -> {
            ClusterStats.PartitionView v = snapshot.partitions().get(new ClusterStats.PartitionKey(t.topic().name(), p.partition()));
            partitions.add(new ApiViews.Partition(p.partition(), p.leader(), p.leaderEpoch(), v == null ? null : v.logStartOffset(),
                    v == null ? null : v.highWatermark(), v == null ? null : v.sizeBytes()));
        });
        return new ApiViews.Topic(t.topic().name(), t.topic().topicId(), t.topic().configs(), partitions);
    }

    @POST
    @Path("/topics")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Creates a topic, with the Kafka API's validation and errors")
    @APIResponse(responseCode = "201", description = "Created", content = @Content(schema = @Schema(implementation = ApiViews.Topic.class)))
    @APIResponse(responseCode = "200", description = "With validateOnly: it could be created (nothing was)", content = @Content(schema = @Schema(implementation = ApiViews.Topic.class)))
    @APIResponse(responseCode = "400", description = "INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_CONFIG, POLICY_VIOLATION, INVALID_REQUEST",
            content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "403", description = "Read-only credentials", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "409", description = "TOPIC_ALREADY_EXISTS", content = @Content(schema = @Schema(implementation = ApiError.class)))
    public Response createTopic(ApiViews.NewTopic body) {
        if (body == null || body.name() == null) {
            throw kafkaError(Errors.INVALID_REQUEST, "A topic needs a name.");
        }
        String name = body.name();
        int partitions = body.partitions() == null ? -1 : body.partitions();
        int replication = body.replicationFactor() == null ? -1 : body.replicationFactor();
        // The checks the Kafka API's broker makes before it forwards; the controller makes the rest.
        NewTopicChecks.Refusal refused = NewTopicChecks.check(name, partitions, replication);
        if (refused != null) {
            throw kafkaError(refused.error(), refused.message());
        }
        TopicToCreate.Builder t = TopicToCreate.newBuilder().setName(name).setNumPartitions(partitions);
        for (Map.Entry<String, String> c : (body.configs() == null ? Map.<String, String>of() : body.configs()).entrySet()) {
            if (c.getKey() == null || c.getValue() == null) {
                throw kafkaError(Errors.INVALID_CONFIG, "Null value not supported for topic configs: " + c.getKey());
            }
            t.addConfigs(TopicConfig.newBuilder().setName(c.getKey()).setValue(c.getValue()));
        }
        boolean validateOnly = Boolean.TRUE.equals(body.validateOnly());
        CreateTopicsCall call = CreateTopicsCall.newBuilder().addTopics(t).setValidateOnly(validateOnly).build();
        ClusterStats.Snapshot snapshot = stats.snapshot();
        record Created(CreateTopicsReply reply, ApiViews.Topic view) {
        }
        // Created and read in one loop turn: leadership cannot move in between and turn a success into a 503.
        Created done = leaderRead(core -> {
            CreateTopicsReply r = core.createTopics(call);
            return new Created(r, core.current().topicByName(name).map(ta -> topicView(ta, snapshot)).orElse(null));
        });
        CreateTopicsReply reply = done.reply();
        if (reply.getErrorCode() != 0) {
            throw kafkaError(Errors.forCode((short) reply.getErrorCode()), reply.getErrorMessage());
        }
        TopicResult r = reply.getResults(0);
        if (r.getErrorCode() != 0) {
            throw kafkaError(Errors.forCode((short) r.getErrorCode()), r.getErrorMessage());
        }
        URI location = URI.create("/api/v1/topics/" + URLEncoder.encode(name, StandardCharsets.UTF_8));
        if (validateOnly) {
            Map<String, String> configs = new java.util.LinkedHashMap<>();
            r.getConfigsList().forEach(c -> configs.put(c.getName(), c.getValue()));
            return Response.ok(new ApiViews.Topic(name, null, configs, List.of())).build();
        }
        ApiViews.Topic created = done.view() != null ? done.view() : new ApiViews.Topic(name, r.getTopicId(), Map.of(), List.of());
        return Response.created(location).entity(created).build();
    }

    @DELETE
    @Path("/topics/{name}")
    @Operation(summary = "Deletes a topic, as the Kafka API's DeleteTopics")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "403", description = "Read-only credentials", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "404", description = "UNKNOWN_TOPIC_OR_PARTITION", content = @Content(schema = @Schema(implementation = ApiError.class)))
    public Response deleteTopic(@PathParam("name") String name) {
        DeleteTopicsCall call = DeleteTopicsCall.newBuilder().addTopics(TopicRef.newBuilder().setName(name)).build();
        DeleteTopicsReply reply = leaderRead(core -> core.deleteTopics(call));
        TopicResult r = reply.getResults(0);
        if (r.getErrorCode() != 0) {
            throw kafkaError(Errors.forCode((short) r.getErrorCode()), r.getErrorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()
                    ? "Topic '" + name + "' does not exist." : r.getErrorMessage());
        }
        return Response.noContent().build();
    }

    @GET
    @Path("/groups")
    @Operation(summary = "Every consumer group some broker coordinates, from the brokers' last reports (every kaas.metrics.stats-interval)")
    @APIResponse(responseCode = "200", description = "The groups", content = @Content(schema = @Schema(implementation = ApiViews.GroupSummary.class, type = SchemaType.ARRAY)))
    public List<ApiViews.GroupSummary> groups() {
        leaderRead(ControllerCore::epoch);
        return stats.snapshot().groups().stream().sorted(Comparator.comparing(ClusterStats.GroupView::groupId))
                .map(g -> new ApiViews.GroupSummary(g.groupId(), g.state(), g.protocolType(), g.members(), g.coordinator(), totalLag(g)))
                .toList();
    }

    @GET
    @Path("/groups/{id}")
    @Operation(summary = "A group's state, members, committed offsets and lag")
    @APIResponse(responseCode = "404", description = "GROUP_ID_NOT_FOUND", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "200", description = "The group", content = @Content(schema = @Schema(implementation = ApiViews.Group.class)))
    public ApiViews.Group group(@PathParam("id") String id) {
        leaderRead(ControllerCore::epoch);
        ClusterStats.Snapshot snapshot = stats.snapshot();
        ClusterStats.GroupView g = snapshot.groups().stream().filter(v -> v.groupId().equals(id)).findFirst()
                .orElseThrow(() -> kafkaError(Errors.GROUP_ID_NOT_FOUND, "Group " + id + " is not known (or no broker has reported it yet)."));
        List<ApiViews.GroupOffset> offsets = g.offsets().stream()
                .sorted(Comparator.comparing((ClusterStats.OffsetView o) -> o.key().topic()).thenComparingInt(o -> o.key().partition()))
                .map(o -> {
                    ClusterStats.PartitionView p = snapshot.partitions().get(o.key());
                    return new ApiViews.GroupOffset(o.key().topic(), o.key().partition(), o.committed(), p == null ? null : p.highWatermark(), o.lag());
                }).toList();
        List<ApiViews.GroupMember> members = g.memberList().stream().sorted(Comparator.comparing(ClusterStats.MemberView::memberId))
                .map(m -> new ApiViews.GroupMember(m.memberId(), m.groupInstanceId(), m.clientId(), m.clientHost(), m.assignment())).toList();
        return new ApiViews.Group(g.groupId(), g.state(), g.protocolType(), g.members(), g.coordinator(), totalLag(g), offsets, members);
    }

    private static Long totalLag(ClusterStats.GroupView g) {
        Long sum = null;
        for (ClusterStats.OffsetView o : g.offsets()) {
            if (o.lag() != null) {
                sum = (sum == null ? 0 : sum) + o.lag();
            }
        }
        return sum;
    }

    @POST
    @Path("/brokers/{id}/drain")
    @Operation(summary = "Drains a broker for maintenance: hands off everything it owns to the other brokers and places nothing on it,"
            + " until it restarts as a new process or the drain is cancelled; poll the answer's owns until all are 0")
    @APIResponse(responseCode = "202", description = "Draining", content = @Content(schema = @Schema(implementation = ApiViews.Broker.class)))
    @APIResponse(responseCode = "403", description = "Read-only credentials", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "404", description = "BROKER_NOT_AVAILABLE: no such live broker", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "409", description = "INVALID_REQUEST: no other broker could take its work", content = @Content(schema = @Schema(implementation = ApiError.class)))
    public Response drain(@PathParam("id") int id) {
        return Response.accepted(drainCall(id, true)).build();
    }

    @DELETE
    @Path("/brokers/{id}/drain")
    @Operation(summary = "Cancels a drain: the broker takes its share again")
    @APIResponse(responseCode = "200", description = "Not drained any more", content = @Content(schema = @Schema(implementation = ApiViews.Broker.class)))
    @APIResponse(responseCode = "404", description = "BROKER_NOT_AVAILABLE", content = @Content(schema = @Schema(implementation = ApiError.class)))
    public ApiViews.Broker undrain(@PathParam("id") int id) {
        return drainCall(id, false);
    }

    @GET
    @Path("/brokers/{id}")
    @Operation(summary = "One broker: endpoints, health, drain state and what it owns")
    @APIResponse(responseCode = "404", description = "BROKER_NOT_AVAILABLE", content = @Content(schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "200", description = "The broker", content = @Content(schema = @Schema(implementation = ApiViews.Broker.class)))
    public ApiViews.Broker broker(@PathParam("id") int id) {
        long now = System.currentTimeMillis();
        return leaderRead(core -> core.broker(id).map(b -> brokerView(b, core.current().version(), now))).orElseThrow(() ->
                kafkaError(Errors.BROKER_NOT_AVAILABLE, "Broker " + id + " is not known to this controller."));
    }

    private ApiViews.Broker drainCall(int id, boolean drain) {
        long now = System.currentTimeMillis();
        try {
            // The answer is read in the same loop turn as the change: leadership cannot move in between.
            return leaderRead(core -> brokerView(drain ? core.drain(id) : core.undrain(id), core.current().version(), now));
        } catch (DrainFailure f) {
            if (f.refused.unknownBroker) {
                throw kafkaError(Errors.BROKER_NOT_AVAILABLE, f.refused.getMessage());
            }
            throw new ApiException(Response.Status.CONFLICT, Errors.INVALID_REQUEST.name(), f.refused.getMessage());
        }
    }

    @GET
    @Path("/assignment")
    @Operation(summary = "The published assignment: every partition's and slot's writer and epoch (no credentials, ACLs, quotas or broker configs)")
    @APIResponse(responseCode = "200", description = "The assignment", content = @Content(schema = @Schema(implementation = ApiViews.Assignment.class)))
    public ApiViews.Assignment assignment() {
        Assignment a = leaderRead(ControllerCore::current);
        return new ApiViews.Assignment(a.version(), a.controllerEpoch(), a.clusterId(), a.brokers().stream().map(b -> b.id()).toList(),
                a.topics().stream().map(t -> new ApiViews.AssignedTopic(t.topic().name(), t.topic().topicId(), t.partitions().stream()
                        .map(p -> new ApiViews.AssignedPartition(p.partition(), p.leader(), p.leaderEpoch(), p.target(), p.leaving())).toList()))
                        .toList(),
                a.groupSlots().stream().map(s -> new ApiViews.AssignedSlot(s.slot(), s.broker(), s.epoch())).toList(),
                a.txnSlots().stream().map(s -> new ApiViews.AssignedSlot(s.slot(), s.broker(), s.epoch())).toList(),
                List.copyOf(a.drained().keySet()));
    }

    /** A drain refusal carried out of the loop's future. */
    private static final class DrainFailure extends RuntimeException {
        final ControllerCore.DrainRefused refused;

        DrainFailure(ControllerCore.DrainRefused refused) {
            super(refused.getMessage(), null, false, false);
            this.refused = refused;
        }
    }

    /** {@code call} on the loop of the leading controller; 503 NOT_CONTROLLER on a standby. */
    private <T> T leaderRead(ControllerRuntime.CoreCall<T> call) {
        try {
            return await(runtime.submit(call));
        } catch (ApiException e) {
            if (e.code.equals(Errors.NOT_CONTROLLER.name())) {
                LeaseRecord lease = await(runtime.inspect(ControllerCore::lease));
                throw new ApiException(Response.Status.SERVICE_UNAVAILABLE, Errors.NOT_CONTROLLER.name(),
                        "This controller is a standby" + (lease == null || lease.holder() == null ? "." : "; the lease is held by " + lease.holder() + "."));
            }
            throw e;
        }
    }

    private static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new ApiException(Response.Status.SERVICE_UNAVAILABLE, Errors.REQUEST_TIMED_OUT.name(),
                    "The controller did not answer within " + CALL_TIMEOUT_MS + " ms.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiException(Response.Status.SERVICE_UNAVAILABLE, Errors.REQUEST_TIMED_OUT.name(), "Interrupted.");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ControllerCore.DrainRefused refused) {
                throw new DrainFailure(refused);
            }
            if (cause instanceof dev.kaas.common.cluster.LeaseFencedException
                    || cause instanceof IllegalStateException && String.valueOf(cause.getMessage()).contains("not the active controller")) {
                throw new ApiException(Response.Status.SERVICE_UNAVAILABLE, Errors.NOT_CONTROLLER.name(), "This controller is a standby.");
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("controller call failed", cause);
        }
    }

    /** A Kafka error as the REST status convention reads it. */
    static ApiException kafkaError(Errors error, String message) {
        Response.Status status = switch (error) {
            case TOPIC_ALREADY_EXISTS -> Response.Status.CONFLICT;
            case UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, GROUP_ID_NOT_FOUND, BROKER_NOT_AVAILABLE -> Response.Status.NOT_FOUND;
            case THROTTLING_QUOTA_EXCEEDED -> Response.Status.TOO_MANY_REQUESTS;
            case NOT_CONTROLLER, REQUEST_TIMED_OUT -> Response.Status.SERVICE_UNAVAILABLE;
            case UNKNOWN_SERVER_ERROR -> Response.Status.INTERNAL_SERVER_ERROR;
            default -> Response.Status.BAD_REQUEST;
        };
        return new ApiException(status, error.name(), message == null || message.isEmpty() ? error.message() : message);
    }
}
