package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.TopicSpec;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.CreateTopicsReply;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.DeleteTopicsReply;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicResult;
import dev.kaas.proto.TopicToCreate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The controller's state machine: the live broker set, the catalog, and the published assignment.
 *
 * <p>Threading: every method runs on the controller loop (one thread, {@code ControllerRuntime}),
 * so there is no locking here. File writes happen on that thread too: it is not an event loop.
 * Time comes from the injected clock, so tests drive expiry and grace without sleeping.
 *
 * <p>Publication: every change (catalog, broker set) recomputes the assignment with
 * {@link Balancer}; a different result gets the next version, is written to
 * {@code __cluster/assignment.json} and only then pushed to every broker.
 */
public final class ControllerCore {
    private static final Logger LOG = Logger.getLogger(ControllerCore.class);

    public record Settings(long brokerSessionTimeoutMs, long startupGraceMs, int numPartitions) {
    }

    private record Live(BrokerInfo info, String incarnation, BrokerSession session, long lastSeenMs) {
    }

    private final ClusterMetadata metadata;
    private final Path assignmentFile;
    private final LongSupplier clock;
    private final Settings settings;
    private final Map<Integer, Live> live = new HashMap<>();

    private long epoch = -1;
    private long graceUntilMs;
    private String clusterId;
    private List<TopicSpec> catalog = List.of();
    private Assignment current;

    public ControllerCore(ClusterMetadata metadata, Path dataDir, LongSupplier clock, Settings settings) {
        this.metadata = metadata;
        this.assignmentFile = dataDir.resolve("__cluster").resolve("assignment.json");
        this.clock = clock;
        this.settings = settings;
    }

    public boolean isLeader() {
        return epoch >= 0;
    }

    public Assignment current() {
        return current;
    }

    /** Called once the lease is ours under {@code controllerEpoch}: load what the last controller left. */
    public void becomeLeader(long controllerEpoch) throws IOException {
        clusterId = metadata.clusterId();
        catalog = metadata.topics().topics();
        var bytes = AtomicFiles.read(assignmentFile);
        current = bytes.isPresent() ? Json.read(bytes.get(), Assignment.class) : Assignment.empty(clusterId);
        epoch = controllerEpoch;
        graceUntilMs = clock.getAsLong() + settings.startupGraceMs();
        LOG.infof("controller active epoch=%d assignmentVersion=%d topics=%d", epoch, current.version(), catalog.size());
        publishIfChanged();
    }

    public void loseLeadership() {
        LOG.warnf("controller lost the lease epoch=%d", epoch);
        epoch = -1;
        live.values().forEach(l -> l.session().close("controller lost its lease"));
        live.clear();
    }

    public void brokerRegistered(BrokerInfo info, String incarnation, BrokerSession session) throws IOException {
        requireLeader();
        Live before = live.put(info.id(), new Live(info, incarnation, session, clock.getAsLong()));
        if (before != null && before.session() != session) {
            before.session().close("broker " + info.id() + " registered again (incarnation " + incarnation + ")");
        }
        LOG.infof("broker registered broker=%d incarnation=%s endpoints=%s", info.id(), incarnation, info.endpoints());
        session.sendAssignment(current.version(), current.controllerEpoch(), Json.string(current));
        publishIfChanged();
    }

    public void brokerStatus(int brokerId, BrokerSession session) {
        Live l = live.get(brokerId);
        if (l != null && l.session() == session) {
            live.put(brokerId, new Live(l.info(), l.incarnation(), session, clock.getAsLong()));
        }
    }

    public void brokerGone(int brokerId, BrokerSession session) throws IOException {
        Live l = live.get(brokerId);
        if (l != null && l.session() == session) {
            live.remove(brokerId);
            LOG.infof("broker gone broker=%d", brokerId);
            if (isLeader()) {
                publishIfChanged();
            }
        }
    }

    /** Periodic: expire silent brokers, and publish once the start-up grace is over. */
    public void tick() throws IOException {
        if (!isLeader()) {
            return;
        }
        long now = clock.getAsLong();
        var expired = live.entrySet().stream()
                .filter(e -> now - e.getValue().lastSeenMs() > settings.brokerSessionTimeoutMs())
                .map(Map.Entry::getKey).toList();
        for (int id : expired) {
            Live l = live.remove(id);
            LOG.warnf("broker session expired broker=%d", id);
            l.session().close("no report within the broker session timeout");
        }
        publishIfChanged();
    }

    public CreateTopicsReply createTopics(CreateTopicsCall call) throws IOException {
        requireLeader();
        List<TopicSpec> next = new ArrayList<>(catalog);
        CreateTopicsReply.Builder reply = CreateTopicsReply.newBuilder();
        Map<String, Integer> seen = new HashMap<>();
        call.getTopicsList().forEach(t -> seen.merge(t.getName(), 1, Integer::sum));
        for (TopicToCreate t : call.getTopicsList()) {
            TopicResult.Builder r = TopicResult.newBuilder().setName(t.getName());
            Map<String, String> configs = new LinkedHashMap<>();
            t.getConfigsList().forEach(c -> configs.put(c.getName(), c.getValue()));
            int partitions = t.getNumPartitions() == -1 ? settings.numPartitions() : t.getNumPartitions();
            Errors error = Errors.NONE;
            String message = null;
            try {
                Topic.validate(t.getName());
            } catch (InvalidTopicException e) {
                error = Errors.INVALID_TOPIC_EXCEPTION;
                message = e.getMessage();
            }
            if (error == Errors.NONE && seen.get(t.getName()) > 1) {
                error = Errors.INVALID_REQUEST;
                message = "Create topics request from client contains duplicate topic name " + t.getName();
            } else if (error == Errors.NONE && next.stream().anyMatch(s -> s.name().equals(t.getName()))) {
                error = Errors.TOPIC_ALREADY_EXISTS;
                message = "Topic '" + t.getName() + "' already exists.";
            } else if (error == Errors.NONE && next.stream().anyMatch(s -> Topic.hasCollision(s.name(), t.getName()))) {
                error = Errors.INVALID_TOPIC_EXCEPTION;
                message = "Topic '" + t.getName() + "' collides with existing topic because of '.' and '_'.";
            } else if (error == Errors.NONE && partitions <= 0) {
                error = Errors.INVALID_PARTITIONS;
                message = "Number of partitions was set to an invalid non-positive value.";
            } else if (error == Errors.NONE && (message = TopicConfigs.validate(configs)) != null) {
                error = Errors.INVALID_CONFIG;
            }
            r.setErrorCode(error.code());
            if (message != null && error != Errors.NONE) {
                r.setErrorMessage(message);
            }
            if (error == Errors.NONE) {
                String id = Uuid.randomUuid().toString();
                r.setTopicId(id).setNumPartitions(partitions);
                configs.forEach((k, v) -> r.addConfigs(TopicConfig.newBuilder().setName(k).setValue(v)));
                if (!call.getValidateOnly()) {
                    next.add(new TopicSpec(t.getName(), id, partitions, configs));
                }
            }
            reply.addResults(r);
        }
        if (!call.getValidateOnly() && next.size() != catalog.size()) {
            storeCatalog(next);
        }
        return reply.setAssignmentVersion(current.version()).build();
    }

    public DeleteTopicsReply deleteTopics(DeleteTopicsCall call) throws IOException {
        requireLeader();
        List<TopicSpec> next = new ArrayList<>(catalog);
        DeleteTopicsReply.Builder reply = DeleteTopicsReply.newBuilder();
        for (TopicRef ref : call.getTopicsList()) {
            boolean byId = !ref.getTopicId().isEmpty();
            TopicSpec found = next.stream()
                    .filter(s -> byId ? s.topicId().equals(ref.getTopicId()) : s.name().equals(ref.getName()))
                    .findFirst().orElse(null);
            TopicResult.Builder r = TopicResult.newBuilder().setName(found == null ? ref.getName() : found.name())
                    .setTopicId(found == null ? ref.getTopicId() : found.topicId());
            if (found == null) {
                Errors e = byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                r.setErrorCode(e.code()).setErrorMessage(e.message());
            } else {
                next.remove(found);
                r.setErrorCode(Errors.NONE.code());
            }
            reply.addResults(r);
        }
        if (next.size() != catalog.size()) {
            storeCatalog(next);
        }
        return reply.setAssignmentVersion(current.version()).build();
    }

    public long allocateProducerIds() throws IOException {
        requireLeader();
        return metadata.producerIds().allocateBlock();
    }

    private void storeCatalog(List<TopicSpec> next) throws IOException {
        metadata.topics().store(next);
        catalog = List.copyOf(next);
        publishIfChanged();
    }

    private void publishIfChanged() throws IOException {
        if (!isLeader()) {
            return;
        }
        List<BrokerInfo> brokers = new ArrayList<>(live.values().stream().map(Live::info).toList());
        if (clock.getAsLong() < graceUntilMs) {
            // Presume the previous brokers alive until they had a chance to reconnect.
            for (BrokerInfo b : current.brokers()) {
                if (!live.containsKey(b.id())) {
                    brokers.add(b);
                }
            }
        }
        Assignment candidate = Balancer.next(current, catalog, brokers, current.version() + 1, epoch, clusterId);
        if (samePlacement(candidate, current)) {
            return;
        }
        String json = Json.string(candidate);
        AtomicFiles.write(assignmentFile, json.getBytes(StandardCharsets.UTF_8));
        current = candidate;
        LOG.infof("assignment published version=%d epoch=%d brokers=%d topics=%d",
                candidate.version(), epoch, candidate.brokers().size(), candidate.topics().size());
        for (Live l : live.values()) {
            l.session().sendAssignment(candidate.version(), epoch, json);
        }
    }

    private static boolean samePlacement(Assignment a, Assignment b) {
        return a.controllerEpoch() == b.controllerEpoch()
                && Objects.equals(a.clusterId(), b.clusterId())
                && a.brokers().equals(b.brokers())
                && a.topics().equals(b.topics())
                && a.groupSlots().equals(b.groupSlots())
                && a.txnSlots().equals(b.txnSlots());
    }

    private void requireLeader() {
        if (!isLeader()) {
            throw new IllegalStateException("not the active controller");
        }
    }
}
