package dev.kaas.broker.admin;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.common.config.DynamicBrokerConfigs;
import dev.kaas.proto.AlterTopicConfigsCall;
import dev.kaas.proto.ConfigOp;
import dev.kaas.proto.TopicConfigChange;
import dev.kaas.proto.TopicResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.ResourceType;

/**
 * What IncrementalAlterConfigs (44) and legacy AlterConfigs (33) share, as Apache 3.7's broker
 * ({@code ConfigAdminManager.preprocess}) and controller do it:
 * <ul>
 *   <li>a resource named twice: INVALID_REQUEST for both; a key twice, a null value (except for
 *       DELETE), an unknown operation: INVALID_REQUEST for that resource;</li>
 *   <li>TOPIC: forwarded to the controller, which applies the operations to the topic's current
 *       overrides, validates the result and stores it; the answer waits until this broker applied
 *       the assignment carrying it (bounded), so a DescribeConfigs after it sees the change;</li>
 *   <li>BROKER_LOGGER (incremental only): this broker's loggers, changed here at once (see
 *       {@link BrokerLoggers}); the resource must name this broker;</li>
 *   <li>BROKER: the keys kaas changes at run time ({@link DynamicBrokerConfigs}) are forwarded to
 *       the controller for the cluster-wide defaults ({@code ""}) or this broker's own, and the
 *       answer waits as for a topic; any other key is refused as Apache refuses a key it cannot
 *       update dynamically (src/docs/compatibility.md), and a change this broker's cleaner could
 *       not take is refused here, as Apache's broker refuses it ({@link DynamicBrokerCheck}).</li>
 * </ul>
 */
final class ConfigAlterations {
    /** One operation of a request: legacy AlterConfigs' entries are SETs. */
    record Op(String name, byte op, String value) {
    }

    record Resource(byte type, String name, List<Op> ops) {
    }

    record Result(Errors error, String message) {
        static final Result OK = new Result(Errors.NONE, null);

        static Result of(Errors error, String message) {
            return new Result(error, message);
        }
    }

    private static final long APPLY_WAIT_MS = 10_000;

    /** The controller's side of a topic change (a seam: tests answer it themselves). */
    interface Controller {
        CompletableFuture<dev.kaas.proto.AlterTopicConfigsReply> apply(AlterTopicConfigsCall call);
    }

    /** The controller's side of a dynamic broker config change (a seam: tests answer it themselves). */
    interface BrokerController {
        CompletableFuture<dev.kaas.proto.AlterBrokerConfigsReply> apply(dev.kaas.proto.AlterBrokerConfigsCall call);
    }

    /**
     * Apache's {@code validateBrokerConfigChange}: whether this broker could take a BROKER
     * resource's dynamic configuration after {@code ops} (the whole of it for legacy AlterConfigs);
     * Apache's message, or null (a seam: tests answer it themselves).
     */
    interface BrokerCheck {
        String check(String resource, List<Op> ops, boolean legacy);

        BrokerCheck NONE = (resource, ops, legacy) -> null;
    }

    /** This broker applying an assignment version (a seam: tests complete it themselves). */
    interface Applied {
        CompletableFuture<Void> awaitVersion(long version);
    }

    private final Controller controller;
    private final BrokerController brokerController;
    private final BrokerCheck brokerCheck;
    private final Applied view;
    private final int brokerId;

    ConfigAlterations(ControllerAdmin controller, ClusterView view, dev.kaas.broker.data.Partitions partitions, int brokerId) {
        this(controller::alterTopicConfigs, controller::alterBrokerConfigs, new DynamicBrokerCheck(view, partitions, brokerId),
                view::awaitVersion, brokerId);
    }

    /** For tests that change no dynamic broker config. */
    ConfigAlterations(Controller controller, Applied view, int brokerId) {
        this(controller, call -> CompletableFuture.failedFuture(new IllegalStateException("no broker-config controller")), view, brokerId);
    }

    ConfigAlterations(Controller controller, BrokerController brokerController, Applied view, int brokerId) {
        this(controller, brokerController, BrokerCheck.NONE, view, brokerId);
    }

    ConfigAlterations(Controller controller, BrokerController brokerController, BrokerCheck brokerCheck, Applied view, int brokerId) {
        this.controller = controller;
        this.brokerController = brokerController;
        this.brokerCheck = brokerCheck;
        this.view = view;
        this.brokerId = brokerId;
    }

    /**
     * @param legacy AlterConfigs: each resource's entries replace all its overrides (a topic's, or a
     *               broker resource's dynamic configs); BROKER_LOGGER is not a type it knows
     * @return one result per resource, in order
     */
    CompletionStage<List<Result>> alter(List<Resource> resources, boolean validateOnly, boolean legacy) {
        return alter(resources, validateOnly, legacy, Access.ALL);
    }

    /**
     * @param access ALTER_CONFIGS on the cluster for broker resources, on the topic for a topic
     *               (Apache's ControllerApis.authorizeAlterResource), asked once a resource passed
     *               the request's own checks
     */
    CompletionStage<List<Result>> alter(List<Resource> resources, boolean validateOnly, boolean legacy, Access access) {
        // Filled from the controller calls' threads; read once they all completed.
        Map<Resource, Result> results = java.util.Collections.synchronizedMap(new IdentityHashMap<>());
        Map<String, Resource> seen = new HashMap<>();
        for (Resource r : resources) {
            Resource before = seen.put(r.type() + "/" + r.name(), r);
            if (before != null) {
                Result dup = Result.of(Errors.INVALID_REQUEST, "Each resource must appear at most once.");
                results.put(before, dup);
                results.put(r, dup);
            }
        }
        AlterTopicConfigsCall.Builder call = AlterTopicConfigsCall.newBuilder().setValidateOnly(validateOnly);
        Map<String, Resource> forwarded = new HashMap<>();
        List<Resource> brokerResources = new ArrayList<>();
        for (Resource r : resources) {
            if (results.containsKey(r)) {
                continue;
            }
            Result pre = preprocess(r, legacy);
            if (pre != null) {
                results.put(r, pre);
                continue;
            }
            ConfigResource.Type type = ConfigResource.Type.forId(r.type());
            if (type == ConfigResource.Type.TOPIC && !access.allowed(AclOperation.ALTER_CONFIGS, ResourceType.TOPIC, r.name())) {
                results.put(r, Result.of(Errors.TOPIC_AUTHORIZATION_FAILED, Errors.TOPIC_AUTHORIZATION_FAILED.message()));
                continue;
            }
            if ((type == ConfigResource.Type.BROKER || type == ConfigResource.Type.BROKER_LOGGER)
                    && !access.allowedOnCluster(AclOperation.ALTER_CONFIGS)) {
                results.put(r, Result.of(Errors.CLUSTER_AUTHORIZATION_FAILED,
                        type == ConfigResource.Type.BROKER ? Errors.CLUSTER_AUTHORIZATION_FAILED.message() : null));
                continue;
            }
            switch (type) {
                case TOPIC -> {
                    TopicConfigChange.Builder change = TopicConfigChange.newBuilder().setName(r.name()).setReplace(legacy);
                    r.ops().forEach(o -> change.addOps(ConfigOp.newBuilder().setName(o.name()).setOp(o.op())
                            .setValue(o.value() == null ? "" : o.value())));
                    call.addTopics(change);
                    forwarded.put(r.name(), r);
                }
                case BROKER_LOGGER -> results.put(r, alterLoggers(r, validateOnly));
                case BROKER -> {
                    Result local = brokerConfigs(r, legacy);
                    if (local != null) {
                        results.put(r, local);
                    } else {
                        brokerResources.add(r);
                    }
                }
                default -> results.put(r, Result.of(Errors.INVALID_REQUEST, "Unknown resource type " + r.type()));
            }
        }
        List<CompletableFuture<Long>> versions = new ArrayList<>();
        if (call.getTopicsCount() > 0) {
            versions.add(controller.apply(call.build()).handle((reply, failure) -> {
                if (failure != null) {
                    // The controller did not answer: only what went to it failed (loggers were set, refusals stand).
                    Result failed = failed(failure);
                    forwarded.values().forEach(r -> results.put(r, failed));
                    return -1L;
                }
                boolean changed = false;
                for (TopicResult t : reply.getResultsList()) {
                    Resource r = forwarded.get(t.getName());
                    if (r != null) {
                        Errors e = Errors.forCode((short) t.getErrorCode());
                        results.put(r, e == Errors.NONE ? Result.OK : Result.of(e, t.getErrorMessage().isEmpty() ? null : t.getErrorMessage()));
                        changed |= e == Errors.NONE;
                    }
                }
                return changed && !validateOnly ? reply.getAssignmentVersion() : -1L;
            }));
        }
        for (Resource r : brokerResources) {
            // "01" names broker 1 as Apache parses it; the controller files it under the id brokers look up.
            String resource = r.name().isEmpty() ? r.name() : Integer.toString(Integer.parseInt(r.name()));
            dev.kaas.proto.AlterBrokerConfigsCall.Builder b = dev.kaas.proto.AlterBrokerConfigsCall.newBuilder().setResource(resource)
                    .setReplace(legacy).setValidateOnly(validateOnly);
            r.ops().forEach(o -> b.addOps(ConfigOp.newBuilder().setName(o.name()).setOp(o.op()).setValue(o.value() == null ? "" : o.value())));
            versions.add(brokerController.apply(b.build()).handle((reply, failure) -> {
                if (failure != null) {
                    results.put(r, failed(failure));
                    return -1L;
                }
                Errors e = Errors.forCode((short) reply.getErrorCode());
                results.put(r, e == Errors.NONE ? Result.OK : Result.of(e, reply.getErrorMessage().isEmpty() ? null : reply.getErrorMessage()));
                return e == Errors.NONE && !validateOnly ? reply.getAssignmentVersion() : -1L;
            }));
        }
        if (versions.isEmpty()) {
            return CompletableFuture.completedFuture(inOrder(resources, results));
        }
        return CompletableFuture.allOf(versions.toArray(new CompletableFuture<?>[0])).thenCompose(v -> {
            long newest = versions.stream().mapToLong(CompletableFuture::join).max().orElse(-1L);
            if (newest < 0) {
                return CompletableFuture.completedFuture(inOrder(resources, results));
            }
            // The answer waits until this broker applied the change, so a DescribeConfigs after it sees it.
            return view.awaitVersion(newest).completeOnTimeout(null, APPLY_WAIT_MS, TimeUnit.MILLISECONDS)
                    .thenApply(x -> inOrder(resources, results));
        });
    }

    private static Result failed(Throwable failure) {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        Errors e = Errors.forException(cause);
        return Result.of(e, e.message());
    }

    private static List<Result> inOrder(List<Resource> resources, Map<Resource, Result> results) {
        List<Result> out = new ArrayList<>(resources.size());
        for (Resource r : resources) {
            out.add(results.getOrDefault(r, Result.of(Errors.UNKNOWN_SERVER_ERROR, null)));
        }
        return out;
    }

    /** Apache's checks before anything is applied or forwarded; null when the resource passes. */
    private static Result preprocess(Resource r, boolean legacy) {
        Set<String> keys = new HashSet<>();
        List<String> nulls = new ArrayList<>();
        for (Op o : r.ops()) {
            if (!keys.add(o.name())) {
                return Result.of(Errors.INVALID_REQUEST, "Error due to duplicate config keys");
            }
            if (o.value() == null && (legacy || o.op() != OpType.DELETE.id())) {
                nulls.add(o.name());
            }
        }
        if (!nulls.isEmpty()) {
            return Result.of(Errors.INVALID_REQUEST, "Null value not supported for : " + String.join(", ", nulls));
        }
        ConfigResource.Type type = ConfigResource.Type.forId(r.type());
        if (type == ConfigResource.Type.BROKER_LOGGER && legacy) {
            // Legacy AlterConfigs never knew this type.
            return Result.of(Errors.INVALID_REQUEST, "Unknown resource type " + r.type());
        }
        if (type != ConfigResource.Type.BROKER_LOGGER) {
            for (Op o : r.ops()) {
                if (OpType.forId(o.op()) == null) {
                    return Result.of(Errors.INVALID_REQUEST, "Unknown operations type " + o.op());
                }
            }
        }
        return null;
    }

    /** Apache's {@code RuntimeLoggerManager}: every change validated before any is applied. */
    private Result alterLoggers(Resource r, boolean validateOnly) {
        Result name = checkNodeId(r.name(), "Unexpected node id. Expected " + brokerId + ", but received " + r.name());
        if (name != null) {
            return name;
        }
        for (Op o : r.ops()) {
            OpType op = OpType.forId(o.op());
            if (op == null) {
                return Result.of(Errors.INVALID_REQUEST, "Unknown operation type " + o.op() + " is not allowed for the BROKER_LOGGER resource");
            }
            if (op == OpType.APPEND || op == OpType.SUBTRACT) {
                return Result.of(Errors.INVALID_REQUEST, op + " operation is not allowed for the BROKER_LOGGER resource");
            }
            if (!BrokerLoggers.exists(o.name())) {
                return Result.of(Errors.INVALID_CONFIG, "Logger " + o.name() + " does not exist!");
            }
            if (op == OpType.SET) {
                String bad = BrokerLoggers.checkLevel(o.name(), o.value());
                if (bad != null) {
                    return Result.of(Errors.INVALID_CONFIG, bad);
                }
            } else if (BrokerLoggers.ROOT.equals(o.name())) {
                return Result.of(Errors.INVALID_REQUEST, "Removing the log level of the root logger is not allowed");
            }
        }
        if (!validateOnly) {
            for (Op o : r.ops()) {
                if (OpType.forId(o.op()) == OpType.SET) {
                    BrokerLoggers.set(o.name(), o.value());
                } else {
                    BrokerLoggers.unset(o.name());
                }
            }
        }
        return Result.OK;
    }

    /**
     * A BROKER resource, as Apache's broker checks one before it forwards it: the empty name (the
     * cluster-wide defaults) or this broker's id; a key kaas cannot change at run time is refused
     * as Apache refuses one it cannot update dynamically ({@link DynamicBrokerConfigs}; deleting
     * one is a no-op, as there is nothing dynamic to delete); a custom one is kept, as Apache keeps it. Null: forward it to the controller.
     */
    private Result brokerConfigs(Resource r, boolean legacy) {
        if (!r.name().isEmpty()) {
            Result name = checkNodeId(r.name(), "Unexpected broker id, expected " + brokerId + ", but received " + r.name());
            if (name != null) {
                return name;
            }
        }
        String fixed = DynamicBrokerConfigs.refusal(r.ops().stream().filter(o -> OpType.forId(o.op()) != OpType.DELETE).map(Op::name).toList());
        if (fixed != null) {
            return Result.of(Errors.INVALID_REQUEST, fixed);
        }
        boolean changesSomething = legacy || r.ops().stream().anyMatch(o -> DynamicBrokerConfigs.kept(o.name()));
        if (!changesSomething) {
            return Result.OK;
        }
        String refused = brokerCheck.check(r.name(), r.ops(), legacy);
        // Apache wraps what its broker cannot take as INVALID_REQUEST (KAFKA-13609), validate_only or not.
        return refused == null ? null : Result.of(Errors.INVALID_REQUEST, refused);
    }

    private Result checkNodeId(String name, String mismatch) {
        int id;
        try {
            id = Integer.parseInt(name);
        } catch (NumberFormatException e) {
            return Result.of(Errors.INVALID_REQUEST, "Node id must be an integer, but it is: " + name);
        }
        return id == brokerId ? null : Result.of(Errors.INVALID_REQUEST, mismatch);
    }
}
