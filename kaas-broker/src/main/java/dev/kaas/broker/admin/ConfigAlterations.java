package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
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
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.Errors;

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
 *   <li>BROKER: kaas has no dynamic broker configuration yet, so every key is refused as Apache
 *       refuses a key it cannot update dynamically (src/docs/compatibility.md).</li>
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

    /** This broker applying an assignment version (a seam: tests complete it themselves). */
    interface Applied {
        CompletableFuture<Void> awaitVersion(long version);
    }

    private final Controller controller;
    private final Applied view;
    private final int brokerId;

    ConfigAlterations(ControllerAdmin controller, ClusterView view, int brokerId) {
        this(controller::alterTopicConfigs, view::awaitVersion, brokerId);
    }

    ConfigAlterations(Controller controller, Applied view, int brokerId) {
        this.controller = controller;
        this.view = view;
        this.brokerId = brokerId;
    }

    /**
     * @param legacy AlterConfigs: each topic's entries replace all its overrides; BROKER_LOGGER is not a type it knows
     * @return one result per resource, in order
     */
    CompletionStage<List<Result>> alter(List<Resource> resources, boolean validateOnly, boolean legacy) {
        Map<Resource, Result> results = new IdentityHashMap<>();
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
            switch (type) {
                case TOPIC -> {
                    TopicConfigChange.Builder change = TopicConfigChange.newBuilder().setName(r.name()).setReplace(legacy);
                    r.ops().forEach(o -> change.addOps(ConfigOp.newBuilder().setName(o.name()).setOp(o.op())
                            .setValue(o.value() == null ? "" : o.value())));
                    call.addTopics(change);
                    forwarded.put(r.name(), r);
                }
                case BROKER_LOGGER -> results.put(r, alterLoggers(r, validateOnly));
                case BROKER -> results.put(r, brokerConfigs(r));
                default -> results.put(r, Result.of(Errors.INVALID_REQUEST, "Unknown resource type " + r.type()));
            }
        }
        if (call.getTopicsCount() == 0) {
            return CompletableFuture.completedFuture(inOrder(resources, results));
        }
        return controller.apply(call.build()).handle((reply, failure) -> {
            if (failure != null) {
                // The controller did not answer: only what went to it failed (loggers were set, refusals stand).
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                Errors e = Errors.forException(cause);
                forwarded.values().forEach(r -> results.put(r, Result.of(e, e.message())));
                return CompletableFuture.completedFuture(inOrder(resources, results));
            }
            return afterController(reply, resources, results, forwarded, validateOnly);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<List<Result>> afterController(dev.kaas.proto.AlterTopicConfigsReply reply, List<Resource> resources,
                                                            Map<Resource, Result> results, Map<String, Resource> forwarded,
                                                            boolean validateOnly) {
        boolean changed = false;
        for (TopicResult t : reply.getResultsList()) {
            Resource r = forwarded.get(t.getName());
            if (r != null) {
                Errors e = Errors.forCode((short) t.getErrorCode());
                results.put(r, e == Errors.NONE ? Result.OK : Result.of(e, t.getErrorMessage().isEmpty() ? null : t.getErrorMessage()));
                changed |= e == Errors.NONE;
            }
        }
        List<Result> out = inOrder(resources, results);
        if (!changed || validateOnly) {
            return CompletableFuture.completedFuture(out);
        }
        return view.awaitVersion(reply.getAssignmentVersion())
                .completeOnTimeout(null, APPLY_WAIT_MS, TimeUnit.MILLISECONDS)
                .thenApply(v -> out);
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

    /** No broker key is dynamic in kaas yet: refused as Apache refuses one it cannot change at run time. */
    private Result brokerConfigs(Resource r) {
        if (!r.name().isEmpty()) {
            Result name = checkNodeId(r.name(), "Unexpected broker id, expected " + brokerId + ", but received " + r.name());
            if (name != null) {
                return name;
            }
        }
        // Deleting a key nothing set dynamically leaves the same properties, which Apache accepts.
        List<String> keys = r.ops().stream().filter(o -> OpType.forId(o.op()) != OpType.DELETE).map(Op::name).sorted().toList();
        if (keys.isEmpty()) {
            return Result.OK;
        }
        return Result.of(Errors.INVALID_REQUEST, "Cannot update these configs dynamically: Set(" + String.join(", ", keys) + ")");
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
