package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.cluster.LeaseFencedException;
import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.cluster.UserDeclaration;
import dev.kaas.common.cluster.UserVerdict;
import dev.kaas.common.config.DynamicBrokerConfigs;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.config.TopicDefaults;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.ClientQuota;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import dev.kaas.proto.AclFilterResult;
import dev.kaas.proto.AclResult;
import dev.kaas.proto.AlterBrokerConfigsCall;
import dev.kaas.proto.AlterBrokerConfigsReply;
import dev.kaas.proto.AlterClientQuotasCall;
import dev.kaas.proto.AlterClientQuotasReply;
import dev.kaas.proto.AlterScramCredentialsCall;
import dev.kaas.proto.AlterScramCredentialsReply;
import dev.kaas.proto.AlterTopicConfigsCall;
import dev.kaas.proto.AlterTopicConfigsReply;
import dev.kaas.proto.ConfigOp;
import dev.kaas.proto.CreateAclsCall;
import dev.kaas.proto.CreateAclsReply;
import dev.kaas.proto.CreatePartitionsCall;
import dev.kaas.proto.CreatePartitionsReply;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.CreateTopicsReply;
import dev.kaas.proto.DeleteAclsCall;
import dev.kaas.proto.DeleteAclsReply;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.DeleteTopicsReply;
import dev.kaas.proto.PartitionMove;
import dev.kaas.proto.PartitionMoveResult;
import dev.kaas.proto.PartitionsToAdd;
import dev.kaas.proto.ReassignPartitionsCall;
import dev.kaas.proto.ReassignPartitionsReply;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicConfigChange;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicResult;
import dev.kaas.proto.TopicToCreate;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The controller's state machine: the lease, the live broker set, the catalog, and the published
 * assignment.
 *
 * <p>Threading: every method runs on the controller loop (one thread, {@code ControllerRuntime}),
 * so there is no locking here. Metadata writes happen on that thread too: it is not an event loop.
 * Time comes from the injected clock, so tests drive expiry, grace and step-down without sleeping.
 *
 * <p>Leadership: {@link #maintainLease} acquires or renews the lease through the port. Every
 * metadata write carries the lease epoch, so the binding refuses it once another controller took
 * over. A controller that could not renew stops writing (steps down) {@link #stepDownAfterMs}
 * after its last successful renewal began, which is before that renewal's deadline: a successor
 * can only take the lease after the deadline, so the two never write in the same period.
 *
 * <p>Publication: every change (catalog, broker set) recomputes the assignment with
 * {@link Balancer}; a different result gets the next version, is stored through the port and only
 * then pushed to every connected broker.
 *
 * <p>Broker sessions: a broker whose stream ends, cleanly (controlled shutdown: it closed its
 * partitions first) or not (kill -9, a cut connection), loses its placements at once: the epoch
 * fence makes early reassignment safe, since a deposed broker that is still running can no longer
 * acknowledge anything. A broker that stays connected but stops reporting (hung, SIGSTOP) loses
 * them after {@code brokerSessionTimeoutMs}, as Apache fences a broker after
 * {@code broker.session.timeout.ms}. A new incarnation of a broker id is a new writer: its old
 * placements are orphaned first, so they come back under new epochs. A second incarnation
 * registering while the first one's stream is open and reporting is refused, as Apache refuses a
 * duplicate registration; so is a broker whose data directory carries another cluster id (it is
 * not on this cluster's volume).
 *
 * <p>Handoffs: a move away from a live broker (a join rebalance) is published as "no owner" first;
 * the key stays in {@link #relinquishing} until that broker reports an applied assignment version
 * at least as new, which it does only after it closed what it lost; then the next publication
 * places it under a new epoch (see {@link Balancer}).
 */
public final class ControllerCore {
    private static final Logger LOG = Logger.getLogger(ControllerCore.class);

    /** Apache's {@code ReplicationControlManager.MAX_PARTITIONS_PER_BATCH}. */
    static final int MAX_PARTITIONS_PER_REQUEST = 10_000;

    /**
     * @param holder this controller's lease identity
     * @param maxPartitions the most partitions the catalog may hold ({@code kaas.controller.max-partitions})
     */
    /**
     * @param quotaWindowNum         Apache's {@code controller.quota.window.num}: with the next, how many
     *                               seconds of {@code controller_mutation_rate} a client may spend at once
     * @param quotaWindowSizeSeconds Apache's {@code controller.quota.window.size.seconds}
     */
    /**
     * @param topicDefaults the controller's own static log settings (server.properties' {@code log.*}
     *                      names, as the broker reads them): topic configs are validated over them
     *                      and the cluster-wide dynamic ones, as Apache's controller validates over its
     *                      {@code KafkaConfig.extractLogConfigMap}
     */
    public record Settings(String holder, long leaseDurationMs, long brokerSessionTimeoutMs, long startupGraceMs,
                           int numPartitions, int maxPartitions, int maxMovesInFlight, int quotaWindowNum, int quotaWindowSizeSeconds,
                           TopicDefaults topicDefaults) {
        public Settings(String holder, long leaseDurationMs, long brokerSessionTimeoutMs, long startupGraceMs,
                        int numPartitions, int maxPartitions, int maxMovesInFlight) {
            this(holder, leaseDurationMs, brokerSessionTimeoutMs, startupGraceMs, numPartitions, maxPartitions, maxMovesInFlight, 11, 1,
                    TopicDefaults.NONE);
        }

        /** Stop writing this long after a renewal began: two thirds of the lease, as Kubernetes' renew deadline. */
        long stepDownAfterMs() {
            return leaseDurationMs * 2 / 3;
        }
    }

    private record Live(BrokerInfo info, String incarnation, BrokerSession session, long lastSeenMs, long appliedVersion) {
        Live seen(long nowMs, long applied) {
            return new Live(info, incarnation, session, nowMs, Math.max(appliedVersion, applied));
        }
    }

    /** A handoff in flight: {@code from} was told to close the key in assignment {@code version}. */
    private record Relinquish(int from, long version, long startedMs) {
    }

    private final ClusterMetadata metadata;
    private final LongSupplier clock;
    private final Settings settings;
    /** controller_mutation_rate, measured here so it is the cluster's rate (KIP-599). */
    private final MutationQuotas mutationQuotas;
    private final Map<Integer, Live> live = new HashMap<>();
    /**
     * The live sessions, for {@link #nudge}, which runs on the caller's thread: a doorbell needs
     * no ordering with anything else the loop does (a ring to a session just replaced is lost, and
     * both sides sweep for that), and waiting behind a lease renewal on the loop was most of a
     * transaction marker's latency across brokers. Replaced whole whenever {@link #live} gains or
     * loses a session.
     */
    private volatile Map<Integer, BrokerSession> doorbells = Map.of();
    /** Broker ids that registered during this term: the start-up grace no longer speaks for them. */
    private final Set<Integer> heardFrom = new HashSet<>();
    private final Map<String, Relinquish> relinquishing = new HashMap<>();
    /** Declared users into the assignment; keeps which passwords it checked, so passes stay cheap. */
    private final UserReconciler users = new UserReconciler(() -> {
        byte[] salt = new byte[32];
        SALTS.nextBytes(salt);
        return salt;
    });
    private static final java.security.SecureRandom SALTS = new java.security.SecureRandom();
    /** The last reconcile stopped at its time budget: another pass is due. */
    private boolean reconcileUnfinished;
    /** Topic ids this controller deleted from the catalog: the only directories the orphan sweep may remove. */
    private final Set<String> removedTopicIds = new HashSet<>();

    /** The lease as the last round read it, whoever holds it: the REST API's view on any controller. */
    private LeaseRecord lastLease;
    private long epoch = -1;
    /** Broker streams this controller accepted since it started: reconnects show as growth. */
    private long registrations;
    private long writableUntilMs;
    private long graceUntilMs;
    private String clusterId;
    private List<TopicSpec> catalog = List.of();
    private Assignment current;

    public ControllerCore(ClusterMetadata metadata, LongSupplier clock, Settings settings) {
        this.metadata = metadata;
        this.clock = clock;
        this.settings = settings;
        this.mutationQuotas = new MutationQuotas(() -> current.clientQuotas(), clock, settings.quotaWindowNum(),
                settings.quotaWindowSizeSeconds());
    }

    /** The log settings topic configs are validated over: the cluster-wide dynamic ones over the static ones, under topic keys. */
    private Map<String, String> topicDefaults() {
        Map<String, String> clusterDefault = current == null ? Map.of() : current.brokerConfig(Assignment.CLUSTER_DEFAULT);
        // Once per change of the dynamic layer, not per topic: merging re-checks each value (and warns of a bad one).
        if (!clusterDefault.equals(topicDefaultsFor)) {
            topicDefaultsFor = clusterDefault;
            topicDefaultValues = settings.topicDefaults().withDynamic(clusterDefault, Map.of()).values();
        }
        return topicDefaultValues;
    }

    private Map<String, String> topicDefaultsFor;
    private Map<String, String> topicDefaultValues;

    /** Stops what runs beside the loop (the mutation quotas' sensor expiry). */
    public void close() {
        mutationQuotas.close();
    }

    public boolean isLeader() {
        return epoch >= 0;
    }

    /** The lease epoch this controller writes under, -1 when it does not lead. */
    public long epoch() {
        return epoch;
    }

    /** Until when (by the injected clock) this controller may write without another renewal. */
    public long writableUntilMs() {
        return writableUntilMs;
    }

    public Assignment current() {
        return current;
    }

    /** Brokers with a live stream to this controller. */
    public int liveBrokers() {
        return live.size();
    }

    public long registrations() {
        return registrations;
    }

    /** The cluster id this controller leads, null before it first led. */
    public String clusterId() {
        return clusterId;
    }

    long stepDownAfterMs() {
        return settings.stepDownAfterMs();
    }

    /**
     * One lease round: take or renew the lease; lead under its epoch while it is ours; step down
     * when another holder has it, or when renewals kept failing until the step-down point.
     */
    public void maintainLease() throws IOException {
        long startedMs = clock.getAsLong();
        LeaseRecord lease;
        try {
            lease = metadata.lease().acquireOrRenew(settings.holder(), startedMs, settings.leaseDurationMs());
        } catch (IOException | RuntimeException e) {
            LOG.warnf("lease renewal failed holder=%s: %s", settings.holder(), e.toString());
            maybeStepDown();
            return;
        }
        lastLease = lease;
        if (!lease.heldBy(settings.holder(), startedMs)) {
            if (isLeader()) {
                loseLeadership("the lease is held by " + lease.holder() + " under epoch " + lease.transitions());
            }
            return;
        }
        if (isLeader() && lease.transitions() != epoch) {
            loseLeadership("the lease was taken again under epoch " + lease.transitions());
        }
        writableUntilMs = startedMs + settings.stepDownAfterMs();
        if (!isLeader()) {
            becomeLeader(lease.transitions());
        }
    }

    /** Load what the last controller left, and lead under {@code controllerEpoch}. */
    private void becomeLeader(long controllerEpoch) throws IOException {
        clusterId = metadata.clusterId(controllerEpoch);
        catalog = metadata.topics().topics();
        current = metadata.assignments().load().orElseGet(() -> Assignment.empty(clusterId));
        epoch = controllerEpoch;
        heardFrom.clear();
        // A handoff the last controller started is completed by the fence: its key is placed as an orphan.
        relinquishing.clear();
        graceUntilMs = clock.getAsLong() + settings.startupGraceMs();
        LOG.infof("controller active epoch=%d assignmentVersion=%d topics=%d", epoch, current.version(), catalog.size());
        // Publish under the new epoch first: its assignment file marks the epoch as used on the
        // volume before anything slower (a reconcile of many resources) runs.
        publishIfChanged();
        if (metadata.topics().declarative() || metadata.users().declarative()) {
            try {
                reconcileDeclarations();
            } catch (IOException | RuntimeException e) {
                // Lead anyway with the accepted catalog: brokers need an assignment under this epoch;
                // the next watch event or resync reconciles again.
                if (!isLeader()) {
                    throw e;
                }
                LOG.warnf("first reconcile of the declarations failed: %s", e.toString());
            }
        }
        publishIfChanged();
    }

    public void loseLeadership(String why) {
        if (!isLeader()) {
            return;
        }
        LOG.warnf("controller stepped down epoch=%d: %s", epoch, why);
        epoch = -1;
        live.values().forEach(l -> l.session().close("controller stepped down: " + why));
        live.clear();
        doorbells = Map.of();
        relinquishing.clear();
    }

    private void maybeStepDown() {
        if (isLeader() && clock.getAsLong() >= writableUntilMs) {
            loseLeadership("the lease could not be renewed for " + settings.stepDownAfterMs() + " ms");
        }
    }

    /**
     * @param brokerClusterId the cluster id the broker read from its data directory: a broker whose
     *                        directory is not this cluster's volume is refused
     */
    public void brokerRegistered(BrokerInfo info, String incarnation, String brokerClusterId, BrokerSession session)
            throws IOException {
        requireLeader();
        if (!clusterId.equals(brokerClusterId)) {
            LOG.errorf("refused registration broker=%d incarnation=%s: its data directory has cluster id '%s', this cluster is %s",
                    info.id(), incarnation, brokerClusterId, clusterId);
            session.refuseForeign("broker " + info.id() + " reads cluster id '" + brokerClusterId + "' from its data directory,"
                    + " but this cluster is " + clusterId + ": the broker's data directory must be the cluster's shared volume");
            return;
        }
        long now = clock.getAsLong();
        Live before = live.get(info.id());
        heardFrom.add(info.id());
        if (before != null && before.session() != session) {
            boolean sameProcess = before.incarnation().equals(incarnation);
            boolean alive = now - before.lastSeenMs() <= settings.brokerSessionTimeoutMs();
            if (alive && !sameProcess) {
                LOG.warnf("refused registration broker=%d incarnation=%s: incarnation %s is registered and alive",
                        info.id(), incarnation, before.incarnation());
                session.refuse("broker id " + info.id() + " is already registered by a live broker (incarnation "
                        + before.incarnation() + "); this broker retries until that session ends");
                return;
            }
            before.session().close("broker " + info.id() + " registered again (incarnation " + incarnation + ")");
            if (!sameProcess) {
                // A new process under this id: orphan the old one's placements first, so they come
                // back under new epochs and whatever the old process still writes is fenced.
                remove(info.id());
                publishIfChanged();
            }
        }
        live.put(info.id(), new Live(info, incarnation, session, now, before != null && before.incarnation().equals(incarnation)
                ? before.appliedVersion() : -1));
        refreshDoorbells();
        registrations++;
        LOG.infof("broker registered broker=%d incarnation=%s endpoints=%s", info.id(), incarnation, info.endpoints());
        session.sendAssignment(current.version(), current.controllerEpoch(), Json.string(current));
        String drainedIncarnation = current.drained().get(info.id());
        if (drainedIncarnation != null && !drainedIncarnation.equals(incarnation)) {
            // Back from its maintenance as a new process: it takes its share again.
            Map<Integer, String> drained = new HashMap<>(current.drained());
            drained.remove(info.id());
            LOG.infof("drain of broker %d ends: it registered as a new process (incarnation %s)", info.id(), incarnation);
            publishIfChanged(current.withDrained(drained));
        } else {
            publishIfChanged();
        }
    }

    /** Whether {@code session} is the live session of broker {@code brokerId}. */
    /**
     * Passes a broker's doorbell to another broker's stream (transaction markers, see the Nudge
     * RPC). Only the leader holds sessions; false when the target has none here. Any thread: it
     * reads {@link #doorbells}, not the loop's state.
     */
    public boolean nudge(int targetBroker, int fromBroker) {
        BrokerSession target = doorbells.get(targetBroker);
        if (target == null) {
            return false;
        }
        target.nudge(fromBroker);
        return true;
    }

    private void refreshDoorbells() {
        Map<Integer, BrokerSession> sessions = new HashMap<>();
        if (isLeader()) {
            live.forEach((id, l) -> sessions.put(id, l.session()));
        }
        doorbells = Map.copyOf(sessions);
    }

    public boolean hasSession(int brokerId, BrokerSession session) {
        Live l = live.get(brokerId);
        return l != null && l.session() == session;
    }

    /**
     * A status report: the broker is alive, and has applied (opened and closed what it gained and
     * lost) every assignment up to {@code appliedVersion}, which completes the handoffs it was asked for.
     */
    public void brokerStatus(int brokerId, BrokerSession session, long appliedVersion) throws IOException {
        Live l = live.get(brokerId);
        if (l == null || l.session() != session) {
            return;
        }
        live.put(brokerId, l.seen(clock.getAsLong(), appliedVersion));
        if (relinquishing.values().removeIf(r -> r.from() == brokerId && r.version() <= appliedVersion) && isLeader()) {
            publishIfChanged();
        }
    }

    /**
     * The stream of {@code session} ended: cleanly (the broker shut down after closing its
     * partitions) or not (it died, or the connection was cut). Either way its placements move at
     * once: a live-but-cut broker is fenced by the new epochs, and reconnects as the same
     * incarnation to get its share back through the balancer.
     */
    public void brokerGone(int brokerId, BrokerSession session, boolean clean) throws IOException {
        Live l = live.get(brokerId);
        if (l == null || l.session() != session) {
            return;
        }
        remove(brokerId);
        LOG.infof("broker gone broker=%d (%s)", brokerId, clean ? "shut down" : "stream broken");
        if (isLeader()) {
            publishIfChanged();
        }
    }

    private void remove(int brokerId) {
        live.remove(brokerId);
        refreshDoorbells();
        // Whatever it was closing is fenced by the next owner's epoch.
        relinquishing.values().removeIf(r -> r.from() == brokerId);
    }

    /** Periodic: step down if the lease went unrenewed, expire silent brokers, publish once the start-up grace is over. */
    public void tick() throws IOException {
        maybeStepDown();
        if (!isLeader()) {
            return;
        }
        long now = clock.getAsLong();
        var expired = live.entrySet().stream()
                .filter(e -> now - e.getValue().lastSeenMs() > settings.brokerSessionTimeoutMs())
                .map(Map.Entry::getKey).toList();
        for (int id : expired) {
            Live l = live.get(id);
            remove(id);
            LOG.warnf("broker session expired broker=%d", id);
            l.session().close("no report within the broker session timeout");
        }
        // A handoff the old owner never confirms (a lost push, a close stuck on the volume) must not
        // leave its partition without an owner: past the session timeout the fence completes it.
        if (relinquishing.values().removeIf(r -> now - r.startedMs() > settings.brokerSessionTimeoutMs())) {
            LOG.warnf("handoffs unconfirmed for %d ms placed anyway (the new owner fences the old one)",
                    settings.brokerSessionTimeoutMs());
        }
        publishIfChanged();
    }

    public CreateTopicsReply createTopics(CreateTopicsCall call) throws IOException {
        requireWritable();
        CreateTopicsReply.Builder reply = CreateTopicsReply.newBuilder();
        // Apache refuses the whole request before looking at any topic (ReplicationControlManager
        // .validateTotalNumberOfPartitions), counting a -1 as the default partition count.
        long requested = call.getPartitionsRefusedByBroker();
        for (TopicToCreate t : call.getTopicsList()) {
            int n = t.getNumPartitions() == -1 ? settings.numPartitions() : t.getNumPartitions();
            requested += Math.max(0, n);
        }
        if (requested > MAX_PARTITIONS_PER_REQUEST) {
            String message = "Excessively large number of partitions per request.";
            call.getTopicsList().forEach(t -> reply.addResults(TopicResult.newBuilder().setName(t.getName())
                    .setErrorCode(Errors.POLICY_VIOLATION.code()).setErrorMessage(message)));
            return reply.setErrorCode(Errors.POLICY_VIOLATION.code()).setErrorMessage(message)
                    .setAssignmentVersion(current.version()).build();
        }
        MutationQuotas.Recorder quota = mutationQuotas.forClient(call.hasClient() ? call.getClient() : null);
        List<TopicSpec> next = new ArrayList<>(catalog);
        long clusterPartitions = catalog.stream().mapToLong(TopicSpec::partitions).sum();
        Map<String, Integer> seen = new HashMap<>();
        call.getTopicsList().forEach(t -> seen.merge(t.getName(), 1, Integer::sum));
        for (TopicToCreate t : call.getTopicsList()) {
            TopicResult.Builder r = TopicResult.newBuilder().setName(t.getName());
            Map<String, String> configs = new LinkedHashMap<>();
            t.getConfigsList().forEach(c -> configs.put(c.getName(), c.getValue()));
            int partitions = t.getNumPartitions() == -1 ? settings.numPartitions() : t.getNumPartitions();
            TopicRules.Problem problem = TopicRules.checkNew(t.getName(), partitions, configs, seen.get(t.getName()) > 1,
                    next, clusterPartitions, settings.maxPartitions(), topicDefaults());
            Errors error = problem == null ? Errors.NONE : problem.error();
            String message = problem == null ? null : problem.message();
            if (error == Errors.NONE && !quota.record(partitions)) {
                // Apache's ReplicationControlManager.createTopic: after the topic's own checks, its partitions spend the quota.
                error = Errors.THROTTLING_QUOTA_EXCEEDED;
                message = error.message();
            }
            r.setErrorCode(error.code());
            if (message != null && error != Errors.NONE) {
                r.setErrorMessage(message);
            }
            if (error == Errors.NONE) {
                clusterPartitions += partitions;
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
        return reply.setAssignmentVersion(current.version()).setThrottleTimeMs(quota.throttleTimeMs()).build();
    }

    /**
     * CreatePartitions, as Apache 3.7's {@code ReplicationControlManager.createPartitions}: a topic
     * grows to {@code count} partitions (never shrinks: INVALID_PARTITIONS, with Apache's
     * messages), within the cluster's partition cap (POLICY_VIOLATION); the balancer places the
     * new ones as it places a new topic's. With {@code validate_only}, nothing changes.
     */
    public CreatePartitionsReply createPartitions(CreatePartitionsCall call) throws IOException {
        requireWritable();
        CreatePartitionsReply.Builder reply = CreatePartitionsReply.newBuilder();
        MutationQuotas.Recorder quota = mutationQuotas.forClient(call.hasClient() ? call.getClient() : null);
        List<TopicSpec> next = new ArrayList<>(catalog);
        long clusterPartitions = catalog.stream().mapToLong(TopicSpec::partitions).sum();
        boolean changed = false;
        for (PartitionsToAdd t : call.getTopicsList()) {
            TopicResult.Builder r = TopicResult.newBuilder().setName(t.getName());
            int at = -1;
            for (int i = 0; i < next.size(); i++) {
                if (next.get(i).name().equals(t.getName())) {
                    at = i;
                }
            }
            if (at < 0) {
                reply.addResults(r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
                continue;
            }
            TopicSpec spec = next.get(at);
            r.setTopicId(spec.topicId());
            TopicRules.Problem problem = null;
            if (t.getCount() < spec.partitions()) {
                problem = new TopicRules.Problem(Errors.INVALID_PARTITIONS, "PartitionsDecreased", "The topic " + spec.name()
                        + " currently has " + spec.partitions() + " partition(s); " + t.getCount() + " would not be an increase.");
            } else if (t.getCount() == spec.partitions()) {
                problem = new TopicRules.Problem(Errors.INVALID_PARTITIONS, "PartitionsUnchanged", "Topic already has "
                        + spec.partitions() + " partition(s).");
            } else {
                problem = TopicRules.checkLimit("Adding " + (t.getCount() - spec.partitions()) + " partitions to topic '"
                        + spec.name() + "'", t.getCount() - spec.partitions(), clusterPartitions, settings.maxPartitions());
            }
            if (problem != null) {
                reply.addResults(r.setErrorCode(problem.error().code()).setErrorMessage(problem.message()));
                continue;
            }
            if (!quota.record(t.getCount() - spec.partitions())) {
                reply.addResults(r.setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code()).setErrorMessage(Errors.THROTTLING_QUOTA_EXCEEDED.message()));
                continue;
            }
            clusterPartitions += t.getCount() - spec.partitions();
            r.setErrorCode(Errors.NONE.code()).setNumPartitions(t.getCount());
            if (!call.getValidateOnly()) {
                next.set(at, new TopicSpec(spec.name(), spec.topicId(), t.getCount(), spec.configs()));
                changed = true;
            }
            reply.addResults(r);
        }
        if (changed) {
            storeCatalog(next);
        }
        return reply.setAssignmentVersion(current.version()).setThrottleTimeMs(quota.throttleTimeMs()).build();
    }

    /**
     * IncrementalAlterConfigs and AlterConfigs for topics, as Apache 3.7's
     * {@code ConfigurationControlManager}: each topic's operations are applied to its current
     * overrides (SET, DELETE, and APPEND/SUBTRACT for list-typed keys only; the legacy form replaces
     * every override), the result is validated as a whole (INVALID_CONFIG with the validator's
     * message), then the topic must exist (UNKNOWN_TOPIC_OR_PARTITION). With {@code validate_only},
     * nothing changes. Brokers apply the new overrides from the next assignment, without a restart.
     */
    public AlterTopicConfigsReply alterTopicConfigs(AlterTopicConfigsCall call) throws IOException {
        requireWritable();
        AlterTopicConfigsReply.Builder reply = AlterTopicConfigsReply.newBuilder();
        List<TopicSpec> next = new ArrayList<>(catalog);
        boolean changed = false;
        for (TopicConfigChange t : call.getTopicsList()) {
            TopicResult.Builder r = TopicResult.newBuilder().setName(t.getName());
            int at = -1;
            for (int i = 0; i < next.size(); i++) {
                if (next.get(i).name().equals(t.getName())) {
                    at = i;
                }
            }
            TopicRules.Problem problem = null;
            Map<String, String> configs = null;
            // Apache's order: the operations, then the name, the values, and last whether the topic exists.
            try {
                configs = TopicRules.applyConfigOps(at < 0 ? Map.of() : next.get(at).configs(), t.getReplace(), t.getOpsList());
                if (t.getName().isEmpty()) {
                    problem = new TopicRules.Problem(Errors.INVALID_REQUEST, "InvalidTopicName", "Default topic resources are not allowed.");
                } else {
                    Topic.validate(t.getName());
                }
            } catch (org.apache.kafka.common.errors.InvalidTopicException e) {
                problem = new TopicRules.Problem(Errors.INVALID_TOPIC_EXCEPTION, "InvalidTopicName", e.getMessage());
            } catch (TopicRules.ConfigOpException e) {
                problem = new TopicRules.Problem(Errors.INVALID_CONFIG, "InvalidConfig", e.getMessage());
            }
            if (problem == null) {
                String invalid = TopicConfigs.validate(configs, topicDefaults());
                if (invalid != null) {
                    problem = new TopicRules.Problem(Errors.INVALID_CONFIG, "InvalidConfig", invalid);
                } else if (at < 0) {
                    problem = new TopicRules.Problem(Errors.UNKNOWN_TOPIC_OR_PARTITION, "UnknownTopic",
                            "The topic '" + t.getName() + "' does not exist.");
                }
            }
            if (problem != null) {
                reply.addResults(r.setErrorCode(problem.error().code()).setErrorMessage(problem.message()));
                continue;
            }
            TopicSpec spec = next.get(at);
            r.setTopicId(spec.topicId()).setErrorCode(Errors.NONE.code());
            configs.forEach((k, v) -> r.addConfigs(TopicConfig.newBuilder().setName(k).setValue(v)));
            if (!call.getValidateOnly() && !configs.equals(spec.configs())) {
                next.set(at, new TopicSpec(spec.name(), spec.topicId(), spec.partitions(), configs));
                changed = true;
            }
            reply.addResults(r);
        }
        if (changed) {
            storeCatalog(next);
        }
        return reply.setAssignmentVersion(current.version()).build();
    }

    /**
     * AlterPartitionReassignments, as Apache 3.7's {@code ReplicationControlManager}: a replica
     * list of one registered broker makes it the partition's target, and the balancer hands the
     * partition off to it (src/docs/compatibility.md); a null list cancels a move in progress
     * (NO_REASSIGNMENT_IN_PROGRESS if none) and forgets the target: a handoff under way goes back
     * to the broker it is leaving, as Apache reverts to the original replicas; a move not started
     * (its target down, or waiting for the handoff budget) leaves the partition with its writer.
     * A completed reassignment stays, as Apache's replica list does, until another one. A list of several
     * brokers asks for replicas, which kaas does not keep: INVALID_REPLICA_ASSIGNMENT.
     */
    public ReassignPartitionsReply reassignPartitions(ReassignPartitionsCall call) throws IOException {
        requireWritable();
        ReassignPartitionsReply.Builder reply = ReassignPartitionsReply.newBuilder();
        Map<String, Map<Integer, Integer>> targets = new HashMap<>();
        Map<String, Set<Integer>> cancelled = new HashMap<>();
        for (PartitionMove m : call.getMovesList()) {
            PartitionMoveResult.Builder r = PartitionMoveResult.newBuilder().setTopic(m.getTopic()).setPartition(m.getPartition());
            TopicSpec spec = catalog.stream().filter(t -> t.name().equals(m.getTopic())).findFirst().orElse(null);
            PartitionAssignment part = spec == null ? null : current.topicById(spec.topicId()).stream()
                    .flatMap(t -> t.partitions().stream()).filter(p -> p.partition() == m.getPartition()).findFirst().orElse(null);
            TopicRules.Problem problem = null;
            if (spec == null) {
                problem = new TopicRules.Problem(Errors.UNKNOWN_TOPIC_OR_PARTITION, "", "Unable to find a topic named " + m.getTopic() + ".");
            } else if (part == null) {
                problem = new TopicRules.Problem(Errors.UNKNOWN_TOPIC_OR_PARTITION, "",
                        "Unable to find partition " + m.getTopic() + ":" + m.getPartition() + ".");
            } else if (m.getCancel()) {
                if (!part.reassigning()) {
                    problem = new TopicRules.Problem(Errors.NO_REASSIGNMENT_IN_PROGRESS, "", Errors.NO_REASSIGNMENT_IN_PROGRESS.message());
                }
            } else {
                problem = checkMove(m.getReplicasList());
            }
            if (problem != null) {
                reply.addResults(r.setErrorCode(problem.error().code()).setErrorMessage(problem.message()));
                continue;
            }
            if (m.getCancel()) {
                // Under way, the handoff then goes back to the broker it is leaving (the Balancer), as Apache reverts to the original replicas.
                cancelled.computeIfAbsent(spec.topicId(), id -> new HashSet<>()).add(m.getPartition());
                targets.getOrDefault(spec.topicId(), new HashMap<>()).remove(m.getPartition());
            } else {
                targets.computeIfAbsent(spec.topicId(), id -> new HashMap<>()).put(m.getPartition(), m.getReplicas(0));
                cancelled.getOrDefault(spec.topicId(), new HashSet<>()).remove(m.getPartition());
            }
            reply.addResults(r.setErrorCode(Errors.NONE.code()));
        }
        if (!targets.isEmpty() || !cancelled.isEmpty()) {
            List<TopicAssignment> topics = current.topics().stream().map(t -> {
                Map<Integer, Integer> to = targets.getOrDefault(t.topic().topicId(), Map.of());
                Set<Integer> off = cancelled.getOrDefault(t.topic().topicId(), Set.of());
                return new TopicAssignment(t.topic(), t.partitions().stream().map(p -> new PartitionAssignment(p.partition(), p.leader(),
                        p.leaderEpoch(), to.containsKey(p.partition()) ? to.get(p.partition()) : off.contains(p.partition()) ? null : p.target(),
                        p.leaving())).toList());
            }).toList();
            publishIfChanged(new Assignment(current.version(), current.controllerEpoch(), current.clusterId(), current.brokers(), topics,
                    current.groupSlots(), current.txnSlots(), current.brokerConfigs(), current.scramUsers(), current.clientQuotas(), current.acls(), current.declaredUsers(), current.drained()));
            // The moves exist only in what was published: a controller that stepped down meanwhile must not answer success.
            requireLeader();
        }
        return reply.setAssignmentVersion(current.version()).build();
    }

    /**
     * AlterUserScramCredentials ({@link ScramCredentialChanges}, Apache's rules): what is valid is
     * published in the assignment at once, so every broker authenticates with it and a new
     * controller keeps it.
     */
    public AlterScramCredentialsReply alterScramCredentials(AlterScramCredentialsCall call) throws IOException {
        requireWritable();
        ScramCredentialChanges.Outcome outcome = ScramCredentialChanges.apply(current.scramUsers(), call);
        Assignment before = current;
        if (outcome.changed()) {
            publishIfChanged(new Assignment(current.version(), current.controllerEpoch(), current.clusterId(), current.brokers(),
                    current.topics(), current.groupSlots(), current.txnSlots(), current.brokerConfigs(), outcome.users(),
                    current.clientQuotas(), current.acls(), current.declaredUsers(), current.drained()));
            // The change exists only in what was published: a controller that stepped down meanwhile must not answer success.
            requireLeader();
            reconcileSoonIfDeclaredChanged(before);
        }
        return AlterScramCredentialsReply.newBuilder().addAllResults(outcome.results()).setAssignmentVersion(current.version()).build();
    }

    /**
     * AlterClientQuotas ({@link ClientQuotaChanges}, Apache's rules): what is valid is published in
     * the assignment at once, so every broker enforces it and a new controller keeps it.
     */
    public AlterClientQuotasReply alterClientQuotas(AlterClientQuotasCall call) throws IOException {
        requireWritable();
        ClientQuotaChanges.Outcome outcome = ClientQuotaChanges.apply(current.clientQuotas(), call);
        Assignment before = current;
        if (outcome.changed()) {
            publishIfChanged(new Assignment(current.version(), current.controllerEpoch(), current.clusterId(), current.brokers(),
                    current.topics(), current.groupSlots(), current.txnSlots(), current.brokerConfigs(), current.scramUsers(),
                    outcome.quotas(), current.acls(), current.declaredUsers(), current.drained()));
            // The change exists only in what was published: a controller that stepped down meanwhile must not answer success.
            requireLeader();
            reconcileSoonIfDeclaredChanged(before);
        }
        return AlterClientQuotasReply.newBuilder().addAllResults(outcome.results()).setAssignmentVersion(current.version()).build();
    }

    /**
     * CreateAcls ({@link AclChanges}, Apache's rules): the new ACLs are published in the assignment
     * at once, so every broker authorizes with them within a stream round trip and a new
     * controller keeps them.
     */
    public CreateAclsReply createAcls(CreateAclsCall call) throws IOException {
        requireWritable();
        AclChanges.Outcome<AclResult> outcome = AclChanges.create(current.acls(), call);
        Assignment before = current;
        if (outcome.changed()) {
            publishIfChanged(current.withAcls(outcome.acls()));
            // The change exists only in what was published: a controller that stepped down meanwhile must not answer success.
            requireLeader();
            reconcileSoonIfDeclaredChanged(before);
        }
        return CreateAclsReply.newBuilder().addAllResults(outcome.results()).setAssignmentVersion(current.version()).build();
    }

    /** DeleteAcls ({@link AclChanges}): as {@link #createAcls}. */
    public DeleteAclsReply deleteAcls(DeleteAclsCall call) throws IOException {
        requireWritable();
        AclChanges.Outcome<AclFilterResult> outcome = AclChanges.delete(current.acls(), call);
        Assignment before = current;
        if (outcome.changed()) {
            publishIfChanged(current.withAcls(outcome.acls()));
            requireLeader();
            reconcileSoonIfDeclaredChanged(before);
        }
        return DeleteAclsReply.newBuilder().addAllResults(outcome.results()).setAssignmentVersion(current.version()).build();
    }

    /**
     * IncrementalAlterConfigs and AlterConfigs for one BROKER resource ({@code ""}: the cluster-wide
     * defaults; a broker id: that broker's own), as Apache 3.7's controller: the operations apply
     * to the resource's dynamic configuration (deleting a key that is not set, or not dynamic, is a
     * no-op), a key kaas cannot change at run time is INVALID_REQUEST "Cannot update these configs
     * dynamically", a custom one (a name Apache does not know) is kept as Apache keeps it, a bad value INVALID_REQUEST with the validator's message (Apache's
     * KAFKA-13609), APPEND or SUBTRACT on a key that is not a list INVALID_CONFIG. The result is
     * published in the assignment, so every broker applies it and a new controller keeps it.
     */
    public AlterBrokerConfigsReply alterBrokerConfigs(AlterBrokerConfigsCall call) throws IOException {
        requireWritable();
        AlterBrokerConfigsReply.Builder reply = AlterBrokerConfigsReply.newBuilder().setAssignmentVersion(current.version());
        String refused = DynamicBrokerConfigs.refusal(call.getOpsList().stream().filter(o -> o.getOp() != 1).map(ConfigOp::getName).toList());
        if (refused != null) {
            return reply.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(refused).build();
        }
        for (ConfigOp o : call.getOpsList()) {
            if ((o.getOp() == 2 || o.getOp() == 3) && !DynamicBrokerConfigs.isList(o.getName())) {
                // Apache's ConfigAdminManager, for a broker key that is not a list.
                return reply.setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage("Config value " + (o.getOp() == 2 ? "append" : "subtract")
                        + " is not allowed for config key: " + o.getName()).build();
            }
        }
        Map<String, String> next;
        try {
            next = TopicRules.applyConfigOps(current.brokerConfig(call.getResource()), call.getReplace(), call.getOpsList(),
                    key -> DynamicBrokerConfigs.isList(key) ? "delete" : null);
        } catch (TopicRules.ConfigOpException e) {
            return reply.setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage(e.getMessage()).build();
        }
        next.keySet().removeIf(k -> !DynamicBrokerConfigs.kept(k));
        String invalid = DynamicBrokerConfigs.validate(next);
        if (invalid == null) {
            invalid = DynamicBrokerConfigs.customBound(current.brokerConfig(call.getResource()), next);
        }
        if (invalid != null) {
            // Apache wraps a dynamic broker config's validation failure as INVALID_REQUEST (KAFKA-13609).
            return reply.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(invalid).build();
        }
        if (!call.getValidateOnly()) {
            Map<String, Map<String, String>> all = new HashMap<>(current.brokerConfigs());
            all.put(call.getResource(), next);
            publishIfChanged(new Assignment(current.version(), current.controllerEpoch(), current.clusterId(), current.brokers(),
                    current.topics(), current.groupSlots(), current.txnSlots(), all, current.scramUsers(), current.clientQuotas(), current.acls(), current.declaredUsers(), current.drained()));
            // The change exists only in what was published: a controller that stepped down meanwhile must not answer success.
            requireLeader();
        }
        return reply.setErrorCode(Errors.NONE.code()).setAssignmentVersion(current.version()).build();
    }

    /** Apache's {@code validateManualPartitionAssignment}, then kaas's one writer per partition. */
    private TopicRules.Problem checkMove(List<Integer> replicas) {
        if (replicas.isEmpty()) {
            return new TopicRules.Problem(Errors.INVALID_REPLICA_ASSIGNMENT, "", "The manual partition assignment includes an empty replica list.");
        }
        Integer previous = null;
        // Apache's "registered" includes fenced brokers: here the live ones and those the published assignment lists (presumed alive after a failover).
        Set<Integer> registered = new HashSet<>(live.keySet());
        current.brokers().forEach(b -> registered.add(b.id()));
        for (int id : replicas.stream().sorted().toList()) {
            if (!registered.contains(id)) {
                return new TopicRules.Problem(Errors.INVALID_REPLICA_ASSIGNMENT, "",
                        "The manual partition assignment includes broker " + id + ", but no such broker is registered.");
            }
            if (previous != null && previous == id) {
                return new TopicRules.Problem(Errors.INVALID_REPLICA_ASSIGNMENT, "",
                        "The manual partition assignment includes the broker " + id + " more than once.");
            }
            previous = id;
        }
        if (replicas.size() > 1) {
            return new TopicRules.Problem(Errors.INVALID_REPLICA_ASSIGNMENT, "", "kaas keeps one copy of each partition, on the shared "
                    + "volume: a reassignment names exactly one broker, the partition's next writer, not " + replicas.size() + ".");
        }
        return null;
    }

    public DeleteTopicsReply deleteTopics(DeleteTopicsCall call) throws IOException {
        requireWritable();
        List<TopicSpec> next = new ArrayList<>(catalog);
        DeleteTopicsReply.Builder reply = DeleteTopicsReply.newBuilder();
        MutationQuotas.Recorder quota = mutationQuotas.forClient(call.hasClient() ? call.getClient() : null);
        for (TopicRef ref : call.getTopicsList()) {
            boolean byId = !ref.getTopicId().isEmpty();
            if (byId && !ref.getName().isEmpty()) {
                // The broker authorized one of the two: never delete by the other (Apache's ControllerApis refuses both).
                reply.addResults(TopicResult.newBuilder().setName(ref.getName()).setTopicId(ref.getTopicId())
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("You may not specify both topic name and topic id."));
                continue;
            }
            TopicSpec found = next.stream()
                    .filter(s -> byId ? s.topicId().equals(ref.getTopicId()) : s.name().equals(ref.getName()))
                    .findFirst().orElse(null);
            TopicResult.Builder r = TopicResult.newBuilder().setName(found == null ? ref.getName() : found.name())
                    .setTopicId(found == null ? ref.getTopicId() : found.topicId());
            if (found == null) {
                Errors e = byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                r.setErrorCode(e.code()).setErrorMessage(e.message());
            } else if (!quota.record(found.partitions())) {
                r.setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code()).setErrorMessage(Errors.THROTTLING_QUOTA_EXCEEDED.message());
            } else {
                next.remove(found);
                r.setErrorCode(Errors.NONE.code());
            }
            reply.addResults(r);
        }
        if (next.size() != catalog.size()) {
            storeCatalog(next);
        }
        return reply.setAssignmentVersion(current.version()).setThrottleTimeMs(quota.throttleTimeMs()).build();
    }

    /**
     * Brings the catalog in line with a declarative store (Kubernetes KafkaTopic resources): see
     * {@link TopicReconciler}. Verdicts are recorded before the catalog is stored, so a topic is
     * never served before its resource shows its id; a failure part-way leaves the catalog as it
     * was, and the next reconcile redoes the same (ids already recorded are kept).
     */
    public void reconcileDeclarations() throws IOException {
        reconcileUnfinished = false;
        if (!isLeader()) {
            return;
        }
        // One budget for the whole pass: thousands of resources are thousands of API calls on this
        // loop, which also renews the lease; past it, the pass stops and the next one goes on.
        long deadline = clock.getAsLong() + settings.leaseDurationMs() / 3;
        Exception topicsFailed = null;
        if (metadata.topics().declarative()) {
            try {
                if (!reconcileTopics(deadline)) {
                    return;
                }
            } catch (IOException | RuntimeException e) {
                if (!isLeader()) {
                    throw e;
                }
                // One bad KafkaTopic must not hold every user back: users go on, the failure is reported after.
                topicsFailed = e;
            }
        }
        try {
            reconcileUsers(deadline);
        } catch (IOException | RuntimeException e) {
            if (topicsFailed != null) {
                e.addSuppressed(topicsFailed);
            }
            throw e;
        }
        if (topicsFailed instanceof IOException io) {
            throw io;
        } else if (topicsFailed != null) {
            throw (RuntimeException) topicsFailed;
        }
    }

    /** The topic part of {@link #reconcileDeclarations}: false when it stopped at its time budget. */
    private boolean reconcileTopics(long deadline) throws IOException {
        requireWritable();
        var declared = metadata.topics().declarations();
        TopicReconciler.Result result = TopicReconciler.reconcile(catalog, declared, settings.maxPartitions(),
                settings.numPartitions(), () -> Uuid.randomUuid().toString(), topicDefaults());
        for (var verdict : result.verdicts()) {
            if (clock.getAsLong() > deadline) {
                // Thousands of new resources are thousands of status writes on this loop, which
                // also renews the lease: stop, let the renewal run, and go on in the next pass
                // (recorded verdicts are no-ops then; the catalog is stored once all are recorded).
                reconcileUnfinished = true;
                LOG.infof("topic declarations reconcile paused after %d ms to let the lease renew; continuing",
                        settings.leaseDurationMs() / 3);
                return false;
            }
            fenced(() -> {
                metadata.topics().report(epoch, verdict);
                return null;
            });
        }
        if (!new HashSet<>(result.catalog()).equals(new HashSet<>(catalog))) {
            LOG.infof("topic declarations reconciled: %d topics -> %d", catalog.size(), result.catalog().size());
            storeCatalog(result.catalog());
        }
        return true;
    }

    /**
     * Brings the users in the assignment in line with a declarative store (Kubernetes KafkaUser
     * resources): see {@link UserReconciler}. A SCRAM user's password is read as it is judged (one
     * that names none gets one).
     * What the declarations grant is published, with the ledger of which declaration applied which
     * user, before any verdict is recorded: a resource shows Ready only for what brokers are sent,
     * and a declaration that goes (or names another user) has its old user removed by a later pass
     * whatever became of its status.
     */
    private void reconcileUsers(long deadline) throws IOException {
        if (!metadata.users().declarative()) {
            return;
        }
        requireWritable();
        List<UserDeclaration> declared = metadata.users().declarations();
        // Passwords are read (or made) one declaration at a time as it is judged. Judging gets half
        // of what is left of the budget, so the statuses of what it judged can be written too.
        long now = clock.getAsLong();
        long judgeUntil = now + Math.max(0, deadline - now) / 2;
        UserReconciler.Result result = users.reconcile(current.scramUsers(), current.clientQuotas(), current.acls(),
                current.declaredUsers(), declared, d -> UserReconciler.SCRAM.equals(d.authentication())
                        ? fenced(() -> metadata.users().withPassword(epoch, d)) : d,
                () -> clock.getAsLong() > judgeUntil);
        if (!result.complete()) {
            reconcileUnfinished = true;
            LOG.infof("user declarations reconcile paused after %d ms to let the lease renew; continuing", settings.leaseDurationMs() / 3);
        }
        Assignment next = current.withUsers(result.scramUsers(), result.clientQuotas(), result.acls(), result.declaredUsers());
        if (!samePlacement(next, current)) {
            publishIfChanged(next);
            // The verdicts below say what brokers are sent: a controller that stepped down meanwhile sent nothing.
            requireLeader();
            LOG.infof("user declarations reconciled: %d declared, assignment version %d", declared.size(), current.version());
        }
        IOException failed = null;
        String lastReported = null;
        for (UserVerdict verdict : result.verdicts()) {
            if (lastReported != null && clock.getAsLong() > deadline) {
                // The rest are judged again next pass, from here, so their statuses are not lost.
                users.resumeAfter(lastReported);
                reconcileUnfinished = true;
                break;
            }
            lastReported = verdict.declaration().ref();
            try {
                fenced(() -> {
                    metadata.users().report(epoch, verdict);
                    return null;
                });
            } catch (IOException e) {
                if (!isLeader()) {
                    throw e;
                }
                // One status that could not be written (the resource changed meanwhile) does not hold the others.
                failed = failed == null ? e : failed;
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * A Kafka API write that changed what a KafkaUser resource owns (its user's SCRAM credentials,
     * ACLs or user quota) asks for a pass at once, which puts the resource's back. Strimzi's User
     * Operator does the same at its next pass; here the write shows for milliseconds, not until
     * the resync.
     */
    private void reconcileSoonIfDeclaredChanged(Assignment before) {
        Set<String> declared = new HashSet<>(before.declaredUsers().values());
        if (!declared.isEmpty() && !ownedByDeclarations(before, declared).equals(ownedByDeclarations(current, declared))) {
            reconcileUnfinished = true;
        }
    }

    private static List<Object> ownedByDeclarations(Assignment a, Set<String> users) {
        Set<String> principals = new HashSet<>();
        users.forEach(u -> principals.add("User:" + u));
        return List.of(
                a.scramUsers().entrySet().stream().filter(e -> users.contains(e.getKey()))
                        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)),
                a.acls().stream().filter(acl -> principals.contains(acl.principal())).collect(java.util.stream.Collectors.toSet()),
                a.clientQuotas().stream().filter(q -> q.entity().size() == 1 && users.contains(q.entity().get(ClientQuota.USER)))
                        .collect(java.util.stream.Collectors.toSet()));
    }

    /** Whether the last reconcile pass stopped at its time budget, or a Kafka API write changed a declared user, and another one is due. */
    public boolean reconcileUnfinished() {
        return reconcileUnfinished && isLeader();
    }

    /**
     * The topic ids whose directories the orphan sweep may remove: those this controller deleted
     * from the catalog, less every id something may still need (the catalog's, the published
     * assignment's, and, in a declarative store, every id a declaration carries). An id never seen
     * deleted is never swept: a volume moved under a new catalog, or resources restored without
     * their status, leave their directories alone. Read by the sweep after it listed the directories.
     */
    public Set<String> sweepableTopicIds() throws IOException {
        Set<String> sweepable = new HashSet<>(removedTopicIds);
        sweepable.removeAll(knownTopicIds());
        return sweepable;
    }

    /** The sweep removed every directory of these ids: stop tracking them. */
    public void swept(Set<String> topicIds) {
        removedTopicIds.removeAll(topicIds);
    }

    private Set<String> knownTopicIds() throws IOException {
        Set<String> ids = new HashSet<>();
        catalog.forEach(t -> ids.add(t.topicId()));
        current.topics().forEach(t -> ids.add(t.topic().topicId()));
        if (metadata.topics().declarative()) {
            metadata.topics().declarations().forEach(d -> {
                if (d.topicId() != null) {
                    ids.add(d.topicId());
                }
            });
        }
        return ids;
    }

    public long allocateProducerIds() throws IOException {
        requireWritable();
        return fenced(() -> metadata.producerIds().allocateBlock(epoch));
    }

    private void storeCatalog(List<TopicSpec> next) throws IOException {
        fenced(() -> {
            metadata.topics().store(epoch, next);
            return null;
        });
        Set<String> kept = new HashSet<>();
        next.forEach(t -> kept.add(t.topicId()));
        // An id back in the catalog (a resource restored with its status) is live again.
        removedTopicIds.removeAll(kept);
        catalog.forEach(t -> {
            if (!kept.contains(t.topicId())) {
                removedTopicIds.add(t.topicId());
            }
        });
        catalog = List.copyOf(next);
        publishIfChanged();
    }

    private void publishIfChanged() throws IOException {
        publishIfChanged(current);
    }

    /** @param base the assignment to balance from: the current one, or it with reassignment targets changed */
    private void publishIfChanged(Assignment base) throws IOException {
        maybeStepDown();
        if (!isLeader()) {
            return;
        }
        List<BrokerInfo> brokers = new ArrayList<>(live.values().stream().map(Live::info).toList());
        boolean inGrace = clock.getAsLong() < graceUntilMs;
        if (inGrace) {
            // Presume the previous brokers alive until they had a chance to reconnect.
            for (BrokerInfo b : current.brokers()) {
                if (!live.containsKey(b.id()) && !heardFrom.contains(b.id())) {
                    brokers.add(b);
                }
            }
        }
        // No handoff during the grace: a presumed broker could not report that it closed anything.
        int maxMoves = inGrace ? 0 : settings.maxMovesInFlight();
        Assignment candidate = Balancer.next(base, catalog, brokers, current.version() + 1, epoch, clusterId,
                relinquishing.keySet(), maxMoves);
        if (samePlacement(candidate, current)) {
            return;
        }
        String json = Json.string(candidate);
        // Computing the balance takes time: the step-down point may have passed meanwhile.
        maybeStepDown();
        if (!isLeader()) {
            return;
        }
        fenced(() -> {
            metadata.assignments().store(epoch, json);
            return null;
        });
        Assignment before = current;
        current = candidate;
        int moves = recordHandoffs(before, candidate);
        LOG.infof("assignment published version=%d epoch=%d brokers=%d topics=%d handoffs=%d/%d bytes=%d",
                candidate.version(), epoch, candidate.brokers().size(), candidate.topics().size(), moves,
                relinquishing.size(), json.length());
        for (Live l : live.values()) {
            l.session().sendAssignment(candidate.version(), epoch, json);
        }
    }

    /** Keys that went from a live owner to none in {@code next} are handoffs started now; returns how many. */
    private int recordHandoffs(Assignment prev, Assignment next) {
        Map<String, Integer> owners = new HashMap<>();
        prev.topics().forEach(t -> t.partitions().forEach(p ->
                owners.put(Balancer.partitionKey(t.topic().topicId(), p.partition()), p.leader())));
        prev.groupSlots().forEach(s -> owners.put(Balancer.groupSlotKey(s.slot()), s.broker()));
        prev.txnSlots().forEach(s -> owners.put(Balancer.txnSlotKey(s.slot()), s.broker()));
        int[] started = {0};
        java.util.function.BiConsumer<String, Integer> check = (key, owner) -> {
            Integer was = owners.get(key);
            if (owner == PartitionAssignment.NO_LEADER && was != null && was != PartitionAssignment.NO_LEADER
                    && live.containsKey(was) && !relinquishing.containsKey(key)) {
                relinquishing.put(key, new Relinquish(was, next.version(), clock.getAsLong()));
                started[0]++;
            }
        };
        next.topics().forEach(t -> t.partitions().forEach(p ->
                check.accept(Balancer.partitionKey(t.topic().topicId(), p.partition()), p.leader())));
        next.groupSlots().forEach(sl -> check.accept(Balancer.groupSlotKey(sl.slot()), sl.broker()));
        next.txnSlots().forEach(sl -> check.accept(Balancer.txnSlotKey(sl.slot()), sl.broker()));
        // A key that was deleted (topic deleted) while being handed off no longer waits for anything.
        relinquishing.keySet().retainAll(keysOf(next));
        return started[0];
    }

    private static Set<String> keysOf(Assignment a) {
        Set<String> keys = new HashSet<>();
        a.topics().forEach(t -> t.partitions().forEach(p -> keys.add(Balancer.partitionKey(t.topic().topicId(), p.partition()))));
        a.groupSlots().forEach(sl -> keys.add(Balancer.groupSlotKey(sl.slot())));
        a.txnSlots().forEach(sl -> keys.add(Balancer.txnSlotKey(sl.slot())));
        return keys;
    }

    /** The lease as the last renewal round read it (null before the first); any role. */
    public LeaseRecord lease() {
        return lastLease;
    }

    /**
     * One broker as this controller sees it: registered with a live stream here ({@code alive}),
     * or only named by the current assignment (presumed during the start-up grace).
     *
     * @param lastSeenMs    when it last reported (the injected clock), -1 if not alive here
     * @param appliedVersion the newest assignment it reported applied, -1 if none
     */
    public record BrokerView(BrokerInfo info, boolean alive, long lastSeenMs, long appliedVersion, boolean drained,
                             int partitions, int groupSlots, int txnSlots, int handingOff) {
        /** It writes nothing and closes nothing: stopping it now interrupts no handoff. */
        public boolean idle() {
            return partitions + groupSlots + txnSlots + handingOff == 0;
        }
    }

    /** Every broker the live set or the current assignment knows, by id. */
    public List<BrokerView> brokers() {
        Map<Integer, BrokerInfo> known = new java.util.TreeMap<>();
        if (current != null) {
            current.brokers().forEach(b -> known.put(b.id(), b));
        }
        live.values().forEach(l -> known.put(l.info().id(), l.info()));
        List<BrokerView> out = new ArrayList<>();
        known.forEach((id, info) -> {
            Live l = live.get(id);
            int[] owned = owned(id);
            // A handed-off item is published without owner at once, but its old owner is still closing it.
            int closing = (int) relinquishing.values().stream().filter(r -> r.from() == id).count();
            out.add(new BrokerView(info, l != null, l == null ? -1 : l.lastSeenMs(), l == null ? -1 : l.appliedVersion(),
                    current != null && current.drained().containsKey(id), owned[0], owned[1], owned[2], closing));
        });
        return out;
    }

    /** Partitions, group slots and transaction slots {@code brokerId} writes in the current assignment. */
    private int[] owned(int brokerId) {
        int[] n = new int[3];
        if (current == null) {
            return n;
        }
        current.topics().forEach(t -> t.partitions().forEach(p -> n[0] += p.leader() == brokerId ? 1 : 0));
        current.groupSlots().forEach(sl -> n[1] += sl.broker() == brokerId ? 1 : 0);
        current.txnSlots().forEach(sl -> n[2] += sl.broker() == brokerId ? 1 : 0);
        return n;
    }

    /** Why a drain cannot start. */
    public static final class DrainRefused extends Exception {
        public final boolean unknownBroker;

        DrainRefused(String message, boolean unknownBroker) {
            super(message, null, false, false);
            this.unknownBroker = unknownBroker;
        }
    }

    /**
     * Drains a live broker for maintenance: everything it owns is handed off to the other live
     * brokers (each a clean handoff, paced by {@code max-moves-in-flight}), and nothing is placed
     * on it, until it registers as another process or {@link #undrain}. Recorded in the published
     * assignment, so a controller that takes over keeps it. Idempotent.
     */
    public BrokerView drain(int brokerId) throws IOException, DrainRefused {
        requireWritable();
        Live l = live.get(brokerId);
        if (l == null) {
            throw new DrainRefused("Broker " + brokerId + " is not registered with this controller.", true);
        }
        boolean othersTake = live.keySet().stream().anyMatch(id -> id != brokerId && !current.drained().containsKey(id));
        if (!othersTake && !current.drained().containsKey(brokerId)) {
            throw new DrainRefused("No other live broker that is not drained could take what broker " + brokerId + " owns.", false);
        }
        if (!l.incarnation().equals(current.drained().get(brokerId))) {
            Map<Integer, String> drained = new HashMap<>(current.drained());
            drained.put(brokerId, l.incarnation());
            LOG.infof("broker %d drained (incarnation %s)", brokerId, l.incarnation());
            publishIfChanged(current.withDrained(drained));
            // The step-down point may have passed while balancing: nothing was published, and that must not read as done.
            requireLeader();
        }
        return view(brokerId);
    }

    /** Ends a drain: the balancer may place on the broker again (and spreads load back to it). Idempotent. */
    public BrokerView undrain(int brokerId) throws IOException, DrainRefused {
        requireWritable();
        if (current.drained().containsKey(brokerId)) {
            Map<Integer, String> drained = new HashMap<>(current.drained());
            drained.remove(brokerId);
            LOG.infof("drain of broker %d cancelled", brokerId);
            publishIfChanged(current.withDrained(drained));
            requireLeader();
        } else if (brokers().stream().noneMatch(b -> b.info().id() == brokerId)) {
            throw new DrainRefused("Broker " + brokerId + " is not known to this controller.", true);
        }
        return view(brokerId);
    }

    /** One broker as {@link #brokers} shows it, empty if neither the live set nor the assignment knows it. */
    public java.util.Optional<BrokerView> broker(int brokerId) {
        return brokers().stream().filter(b -> b.info().id() == brokerId).findFirst();
    }

    private BrokerView view(int brokerId) {
        return broker(brokerId).orElseThrow();
    }

    /** For status and tests: the handoffs in flight. */
    public int handoffsInFlight() {
        return relinquishing.size();
    }

    @FunctionalInterface
    private interface Write<T> {
        T run() throws IOException;
    }

    /**
     * Runs a metadata write; a refusal because another controller took the lease ends our
     * leadership. Each write checks the step-down point first: a pass of many writes (a reconcile)
     * must not run on past it.
     */
    private <T> T fenced(Write<T> write) throws IOException {
        requireWritable();
        try {
            return write.run();
        } catch (LeaseFencedException e) {
            loseLeadership(e.getMessage());
            throw e;
        }
    }

    private static boolean samePlacement(Assignment a, Assignment b) {
        return a.controllerEpoch() == b.controllerEpoch()
                && Objects.equals(a.clusterId(), b.clusterId())
                && a.brokers().equals(b.brokers())
                && a.topics().equals(b.topics())
                && a.groupSlots().equals(b.groupSlots())
                && a.txnSlots().equals(b.txnSlots())
                && a.brokerConfigs().equals(b.brokerConfigs())
                && a.scramUsers().equals(b.scramUsers())
                && a.clientQuotas().equals(b.clientQuotas())
                && a.acls().equals(b.acls())
                && a.declaredUsers().equals(b.declaredUsers())
                && a.drained().equals(b.drained());
    }

    private void requireLeader() {
        if (!isLeader()) {
            throw new IllegalStateException("not the active controller");
        }
    }

    /** Every write path starts here: no write once the lease may have gone unrenewed. */
    private void requireWritable() {
        maybeStepDown();
        requireLeader();
    }
}
