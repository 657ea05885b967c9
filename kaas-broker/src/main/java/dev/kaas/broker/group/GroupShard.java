package dev.kaas.broker.group;

import dev.kaas.broker.storage.VerificationGuards;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The classic group coordinator for the groups of one slot: Apache 3.7's {@code GroupCoordinator}
 * state machine (KIP-394 member-id handshake, KIP-345 static membership, KIP-800 reasons),
 * deterministic: time comes from {@code clock}, timers from {@link Scheduler}, persistence from
 * {@link GroupStore}. Not thread-safe: the runtime calls it from the slot's serial executor only,
 * and the scheduler runs its tasks there too.
 *
 * <p>Membership is memory only and lives here, each group's invariants in {@link ClassicGroup};
 * committed offsets are the concern of {@link GroupOffsets} (as Apache splits its group and offset
 * managers), saved before a commit is answered. The offsets API stays on this facade so the
 * runtime keeps one entry point per slot.
 */
public final class GroupShard {
    private static final Logger LOG = Logger.getLogger(GroupShard.class);
    static final String UNKNOWN_MEMBER_ID = "";

    private final int slot;
    private final GroupConfig config;
    private final LongSupplier clock;
    private final Scheduler scheduler;
    private final GroupOffsets offsets;
    private final GroupCounters counters;
    private final Map<String, ClassicGroup> groups = new HashMap<>();
    /** Groups whose first rebalance waits out group.initial.rebalance.delay.ms instead of completing early. */
    private final Set<String> initialJoinPending = new java.util.HashSet<>();
    private boolean closed;

    public GroupShard(int slot, GroupConfig config, LongSupplier clock, Scheduler scheduler, GroupStore store,
                      Predicate<TopicPartition> partitionExists) {
        this(slot, config, clock, scheduler, store, partitionExists, new GroupCounters());
    }

    public GroupShard(int slot, GroupConfig config, LongSupplier clock, Scheduler scheduler, GroupStore store,
                      Predicate<TopicPartition> partitionExists, GroupCounters counters) {
        this.slot = slot;
        this.config = config;
        this.clock = clock;
        this.scheduler = scheduler;
        this.counters = counters;
        this.offsets = new GroupOffsets(slot, config, clock, scheduler, store, partitionExists, new MembershipView(), counters);
    }

    /**
     * Loads the slot's groups from the store. A group saved with the membership of a completed
     * rebalance comes back Stable, and its members' session timers start now, as Apache's
     * {@code onGroupLoaded}: members that keep heartbeating keep their generation, the others expire.
     */
    public void load() throws IOException {
        offsets.load();
        for (ClassicGroup group : List.copyOf(groups.values())) {
            if (group.size() > config.maxSize()) {
                maybePrepareRebalance(group, "Freshly-loaded group is over capacity (" + config.maxSize()
                        + "). Rebalancing in order to give a chance for consumers to commit offsets");
            }
            for (Member m : List.copyOf(group.members())) {
                // Bounded by this broker's group.max.session.timeout.ms, for this timer and every later one: the file came
                // from another process.
                m.sessionTimeoutMs = Math.min(m.sessionTimeoutMs, config.maxSessionTimeoutMs());
                scheduleMemberExpiry(group, m.memberId, m.sessionTimeoutMs, false);
            }
        }
    }

    /**
     * Apache's {@code storeGroup}: records the membership as it is now and saves the group's file.
     * When the save fails, the record stays what the file still holds, and the error is returned.
     */
    private Errors storeGroup(ClassicGroup group) {
        GroupStore.StoredMembership before = group.storeMembership();
        Errors error = offsets.saveMembership(group);
        if (error != Errors.NONE) {
            group.restoreMembership(before);
        }
        return error;
    }

    public int slot() {
        return slot;
    }

    // ---------------------------------------------------------------- JoinGroup

    public record JoinContext(String clientId, String clientHost, boolean requireKnownMemberId) {
    }

    public void join(JoinGroupRequestData req, JoinContext ctx, Consumer<JoinGroupResponseData> callback) {
        String groupId = req.groupId();
        if (closed) {
            callback.accept(joinError(req.memberId(), Errors.NOT_COORDINATOR));
            return;
        }
        if (groupId == null || groupId.isEmpty()) {
            callback.accept(joinError(req.memberId(), Errors.INVALID_GROUP_ID));
            return;
        }
        if (req.sessionTimeoutMs() < config.minSessionTimeoutMs() || req.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
            callback.accept(joinError(req.memberId(), Errors.INVALID_SESSION_TIMEOUT));
            return;
        }
        boolean unknownMember = UNKNOWN_MEMBER_ID.equals(req.memberId());
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            if (!unknownMember) {
                callback.accept(joinError(req.memberId(), Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            group = new ClassicGroup(groupId, GroupState.EMPTY, clock.getAsLong());
            groups.put(groupId, group);
        }
        if (unknownMember && !acceptsNewMember(group)) {
            callback.accept(joinError(req.memberId(), Errors.GROUP_MAX_SIZE_REACHED));
            return;
        }
        if (!unknownMember && group.has(req.memberId()) && !acceptsCurrentMember(group, req.memberId())) {
            // Apache's acceptJoiningMember: a group over group.max.size (loaded from a file, or the setting lowered)
            // keeps its first rejoining members and turns the last ones away.
            Member turnedAway = group.get(req.memberId());
            scheduler.cancel(heartbeatKey(group, turnedAway.memberId));
            group.completeJoin(turnedAway, joinError(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED));
            group.remove(turnedAway.memberId);
            callback.accept(joinError(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED));
            checkJoinComplete(group);
            return;
        }
        Map<String, byte[]> protocols = new LinkedHashMap<>();
        req.protocols().forEach(p -> protocols.put(p.name(), p.metadata()));
        String reason = req.reason() == null ? "not provided" : req.reason();
        if (unknownMember) {
            joinNewMember(group, req, ctx, protocols, reason, callback);
        } else {
            joinCurrentMember(group, req, ctx, protocols, reason, callback);
        }
        if (group.is(GroupState.EMPTY) && group.hasNoMembers() && group.offsets().isEmpty() && group.pendingTxnOffsets().isEmpty()) {
            groups.remove(groupId);
        }
    }

    /**
     * Apache's {@code acceptJoiningMember} for a current member: while preparing a rebalance, one
     * already rejoined or one of the first {@code group.max.size} to rejoin; otherwise every current member.
     */
    private boolean acceptsCurrentMember(ClassicGroup group, String memberId) {
        return switch (group.state()) {
            case PREPARING_REBALANCE -> group.get(memberId).isAwaitingJoin() || group.numAwaitingJoin() < config.maxSize();
            default -> true;
        };
    }

    private boolean acceptsNewMember(ClassicGroup group) {
        return group.is(GroupState.EMPTY) || group.is(GroupState.DEAD)
                || group.size() + group.pendingCount() < config.maxSize();
    }

    private void joinNewMember(ClassicGroup group, JoinGroupRequestData req, JoinContext ctx, Map<String, byte[]> protocols,
                               String reason, Consumer<JoinGroupResponseData> callback) {
        if (group.is(GroupState.DEAD)) {
            callback.accept(joinError(UNKNOWN_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        if (!group.supportsProtocols(req.protocolType(), protocols.keySet())) {
            callback.accept(joinError(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL));
            return;
        }
        String newMemberId = ctx.clientId() + "-" + UUID.randomUUID();
        String instanceId = req.groupInstanceId();
        if (instanceId != null) {
            String existing = group.staticMemberId(instanceId);
            if (existing == null) {
                addMemberAndRebalance(group, newMemberId, req, ctx, protocols, reason, callback);
            } else {
                replaceStaticMember(group, existing, newMemberId, req, ctx, protocols, reason, callback);
            }
        } else if (ctx.requireKnownMemberId()) {
            // KIP-394: hand out the id first; the member joins for real with it.
            group.addPending(newMemberId);
            scheduleMemberExpiry(group, newMemberId, req.sessionTimeoutMs(), true);
            callback.accept(joinError(newMemberId, Errors.MEMBER_ID_REQUIRED));
        } else {
            addMemberAndRebalance(group, newMemberId, req, ctx, protocols, reason, callback);
        }
    }

    private void joinCurrentMember(ClassicGroup group, JoinGroupRequestData req, JoinContext ctx, Map<String, byte[]> protocols,
                                   String reason, Consumer<JoinGroupResponseData> callback) {
        String memberId = req.memberId();
        if (group.is(GroupState.DEAD)) {
            callback.accept(joinError(memberId, Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        if (!group.supportsProtocols(req.protocolType(), protocols.keySet())) {
            callback.accept(joinError(memberId, Errors.INCONSISTENT_GROUP_PROTOCOL));
            return;
        }
        if (group.isPending(memberId)) {
            if (req.groupInstanceId() != null) {
                throw new IllegalStateException("a static member cannot be pending: " + memberId);
            }
            addMemberAndRebalance(group, memberId, req, ctx, protocols, reason, callback);
            return;
        }
        Errors error = validateCurrentMember(group, memberId, req.groupInstanceId());
        if (error != null) {
            callback.accept(joinError(memberId, error));
            return;
        }
        Member member = group.get(memberId);
        switch (group.state()) {
            case PREPARING_REBALANCE -> updateMemberAndRebalance(group, member, req, protocols, reason, callback);
            case COMPLETING_REBALANCE -> {
                if (member.matches(protocols)) {
                    // The member lost the first JoinGroup response: send it again.
                    callback.accept(joinResult(group, member));
                } else {
                    updateMemberAndRebalance(group, member, req, protocols, reason, callback);
                }
            }
            case STABLE -> {
                if (group.isLeader(memberId) || !member.matches(protocols)) {
                    // The leader rejoins to reassign, e.g. after topic metadata changed.
                    updateMemberAndRebalance(group, member, req, protocols, reason, callback);
                } else {
                    callback.accept(joinResultFor(group, member, false));
                }
            }
            default -> callback.accept(joinError(memberId, Errors.UNKNOWN_MEMBER_ID));
        }
    }

    private void addMemberAndRebalance(ClassicGroup group, String memberId, JoinGroupRequestData req, JoinContext ctx,
                                       Map<String, byte[]> protocols, String reason, Consumer<JoinGroupResponseData> callback) {
        Member member = new Member(memberId, req.groupInstanceId(), ctx.clientId(), ctx.clientHost(), req.rebalanceTimeoutMs(),
                req.sessionTimeoutMs(), req.protocolType(), protocols);
        member.isNew = true;
        if (group.is(GroupState.PREPARING_REBALANCE) && group.generationId() == 0) {
            group.markNewMemberAdded();
        }
        group.add(member, callback);
        scheduler.cancel(pendingKey(group, memberId));
        // New members cannot heartbeat before they have an id and a generation: they get the long new-member timeout.
        scheduleMemberExpiry(group, memberId, GroupConfig.NEW_MEMBER_JOIN_TIMEOUT_MS, false);
        maybePrepareRebalance(group, "Adding new member " + memberId + " with group instance id "
                + req.groupInstanceId() + "; client reason: " + reason);
        checkJoinComplete(group);
    }

    private void updateMemberAndRebalance(ClassicGroup group, Member member, JoinGroupRequestData req, Map<String, byte[]> protocols,
                                          String reason, Consumer<JoinGroupResponseData> callback) {
        group.updateMember(member, protocols, req.rebalanceTimeoutMs(), req.sessionTimeoutMs(), callback);
        maybePrepareRebalance(group, "Updating metadata for member " + member.memberId + " during " + group.state().wireName()
                + "; client reason: " + reason);
        checkJoinComplete(group);
    }

    /** KIP-345: a static member rejoining with a new member id replaces the old one, without a rebalance when nothing changed. */
    private void replaceStaticMember(ClassicGroup group, String oldMemberId, String newMemberId, JoinGroupRequestData req,
                                     JoinContext ctx, Map<String, byte[]> protocols, String reason,
                                     Consumer<JoinGroupResponseData> callback) {
        Member old = group.get(oldMemberId);
        String currentLeader = group.leaderId();
        boolean wasLeader = group.isLeader(oldMemberId);
        scheduler.cancel(heartbeatKey(group, oldMemberId));
        Map<String, byte[]> oldProtocols = old.protocols;
        Member member = new Member(newMemberId, req.groupInstanceId(), ctx.clientId(), ctx.clientHost(), req.rebalanceTimeoutMs(),
                req.sessionTimeoutMs(), req.protocolType(), protocols);
        // The old incarnation's pending requests are fenced.
        group.replaceStaticMember(oldMemberId, member, joinError(oldMemberId, Errors.FENCED_INSTANCE_ID),
                new SyncGroupResponseData().setErrorCode(Errors.FENCED_INSTANCE_ID.code()));
        scheduleMemberExpiry(group, newMemberId, member.sessionTimeoutMs, false);
        switch (group.state()) {
            case STABLE -> {
                String nextProtocol = group.selectProtocol();
                if (nextProtocol.equals(group.protocolName())) {
                    // The new incarnation is saved as a member first (Apache's storeGroup), so a coordinator taking over knows it.
                    Errors stored = storeGroup(group);
                    if (stored != Errors.NONE) {
                        // As Apache: the old incarnation is put back, and the new one hears why it is not a member.
                        scheduler.cancel(heartbeatKey(group, newMemberId));
                        group.replaceStaticMember(newMemberId, old, joinError(newMemberId, stored),
                                new SyncGroupResponseData().setErrorCode(stored.code()));
                        scheduleMemberExpiry(group, oldMemberId, old.sessionTimeoutMs, false);
                        callback.accept(joinError(UNKNOWN_MEMBER_ID, stored).setGenerationId(group.generationId())
                                .setProtocolType(group.protocolType()).setProtocolName(group.protocolName()).setLeader(currentLeader));
                        return;
                    }
                    // Returning the old leader id keeps the rejoined member from computing a useless assignment.
                    callback.accept(new JoinGroupResponseData().setErrorCode(Errors.NONE.code()).setGenerationId(group.generationId())
                            .setProtocolType(group.protocolType()).setProtocolName(group.protocolName())
                            .setLeader(wasLeader ? currentLeader : group.leaderId()).setMemberId(newMemberId).setSkipAssignment(false));
                } else {
                    group.awaitJoin(member, callback);
                    maybePrepareRebalance(group, "Group's selected protocol will change because static member " + newMemberId
                            + " with instance id " + req.groupInstanceId() + " joined with a change of protocol; client reason: " + reason);
                }
            }
            case COMPLETING_REBALANCE -> {
                group.awaitJoin(member, callback);
                maybePrepareRebalance(group, "Updating metadata for static member " + newMemberId + " during CompletingRebalance");
            }
            case PREPARING_REBALANCE -> {
                group.awaitJoin(member, callback);
                checkJoinComplete(group);
            }
            default -> throw new IllegalStateException("static member replaced in state " + group.state());
        }
        LOG.debugf("static member replaced group=%s instance=%s old=%s new=%s protocolsChanged=%s", group.groupId(),
                req.groupInstanceId(), oldMemberId, newMemberId, !member.matches(oldProtocols));
    }

    private void maybePrepareRebalance(ClassicGroup group, String reason) {
        if (group.canRebalance()) {
            prepareRebalance(group, reason);
        }
    }

    private void prepareRebalance(ClassicGroup group, String reason) {
        if (group.is(GroupState.COMPLETING_REBALANCE)) {
            resetAndPropagateAssignmentError(group, Errors.REBALANCE_IN_PROGRESS);
        }
        scheduler.cancel(syncKey(group));
        boolean initial = group.is(GroupState.EMPTY);
        group.transitionTo(GroupState.PREPARING_REBALANCE, clock.getAsLong());
        LOG.infof("preparing to rebalance group=%s generation=%d reason=%s", group.groupId(), group.generationId(), reason);
        if (initial) {
            int delay = config.initialRebalanceDelayMs();
            scheduleInitialJoin(group, delay, Math.max(group.rebalanceTimeoutMs() - delay, 0));
        } else {
            scheduler.schedule(joinKey(group), group.rebalanceTimeoutMs(), () -> completeJoin(group));
            // As Apache's tryCompleteJoin: when the last member just left, everyone left has "rejoined".
            checkJoinComplete(group);
        }
    }

    /** group.initial.rebalance.delay.ms: wait for more members of a new group, extending while they keep coming. */
    private void scheduleInitialJoin(ClassicGroup group, int delay, int remaining) {
        group.takeNewMemberAdded();
        scheduler.schedule(joinKey(group), delay, () -> {
            if (group.takeNewMemberAdded() && remaining > 0) {
                int next = Math.min(config.initialRebalanceDelayMs(), remaining);
                scheduleInitialJoin(group, next, Math.max(remaining - next, 0));
            } else {
                completeJoin(group);
            }
        });
        initialJoinPending.add(group.groupId());
    }

    /** A regular (not initial) join completes as soon as every member has rejoined. */
    private void checkJoinComplete(ClassicGroup group) {
        if (group.is(GroupState.PREPARING_REBALANCE) && !initialJoinPending.contains(group.groupId()) && group.hasAllMembersJoined()) {
            scheduler.cancel(joinKey(group));
            completeJoin(group);
        }
    }

    private void completeJoin(ClassicGroup group) {
        initialJoinPending.remove(group.groupId());
        if (!group.is(GroupState.PREPARING_REBALANCE)) {
            return;
        }
        // Dynamic members that did not rejoin in time are out; static ones keep their place.
        for (Member m : List.copyOf(group.notYetRejoined())) {
            if (!m.isStatic()) {
                scheduler.cancel(heartbeatKey(group, m.memberId));
                group.remove(m.memberId);
            }
        }
        if (!group.maybeElectNewJoinedLeader() && group.size() > 0) {
            LOG.warnf("group=%s could not complete rebalance: no member rejoined; waiting another rebalance timeout", group.groupId());
            scheduler.schedule(joinKey(group), Math.max(group.rebalanceTimeoutMs(), 1), () -> completeJoin(group));
            return;
        }
        long now = clock.getAsLong();
        group.initNextGeneration(now);
        if (group.is(GroupState.EMPTY)) {
            // Stays EMPTY (listed, described) until the periodic cleanup drops it if it has no offsets, as Apache.
            LOG.infof("group=%s generation=%d is now empty", group.groupId(), group.generationId());
            if (group.storedMembership() != null || !group.offsets().isEmpty()) {
                // Its file no longer names members a coordinator taking over would load. As Apache, a failure is only logged:
                // those members would expire there.
                Errors stored = storeGroup(group);
                if (stored != Errors.NONE) {
                    LOG.warnf("group=%s generation=%d: the empty group was not saved: %s", group.groupId(), group.generationId(), stored);
                }
            }
            return;
        }
        LOG.infof("stabilized group=%s generation=%d protocol=%s members=%d", group.groupId(), group.generationId(),
                group.protocolName(), group.size());
        for (Member m : List.copyOf(group.members())) {
            group.completeJoin(m, joinResult(group, m));
            scheduleMemberExpiry(group, m.memberId, m.sessionTimeoutMs, false);
            m.isNew = false;
        }
        int generation = group.generationId();
        scheduler.schedule(syncKey(group), Math.max(group.rebalanceTimeoutMs(), 1), () -> expirePendingSync(group, generation));
    }

    private void expirePendingSync(ClassicGroup group, int generation) {
        if (generation != group.generationId()) {
            return;
        }
        if (group.is(GroupState.COMPLETING_REBALANCE) || group.is(GroupState.STABLE)) {
            if (group.pendingSyncMemberIds().isEmpty()) {
                return;
            }
            LOG.infof("group=%s removing members that sent no SyncGroup: %s", group.groupId(), group.pendingSyncMemberIds());
            for (String id : List.copyOf(group.pendingSyncMemberIds())) {
                scheduler.cancel(heartbeatKey(group, id));
                group.remove(id);
            }
            maybePrepareRebalance(group, "Removing members who haven't sent their sync requests");
        }
    }

    private JoinGroupResponseData joinResult(ClassicGroup group, Member m) {
        return joinResultFor(group, m, group.isLeader(m.memberId));
    }

    private static JoinGroupResponseData joinResultFor(ClassicGroup group, Member m, boolean withMembers) {
        JoinGroupResponseData r = new JoinGroupResponseData().setErrorCode(Errors.NONE.code()).setGenerationId(group.generationId())
                .setProtocolType(group.protocolType()).setProtocolName(group.protocolName()).setLeader(group.leaderId())
                .setMemberId(m.memberId).setSkipAssignment(false);
        if (withMembers) {
            r.setMembers(group.currentMemberMetadata());
        }
        return r;
    }

    static JoinGroupResponseData joinError(String memberId, Errors error) {
        return new JoinGroupResponseData().setErrorCode(error.code()).setGenerationId(-1).setMemberId(memberId == null ? "" : memberId)
                .setLeader("").setProtocolName(null);
    }

    // ---------------------------------------------------------------- SyncGroup

    public void sync(SyncGroupRequestData req, Consumer<SyncGroupResponseData> callback) {
        Errors error = syncError(req);
        if (error != null) {
            callback.accept(new SyncGroupResponseData().setErrorCode(error.code()));
            return;
        }
        ClassicGroup group = groups.get(req.groupId());
        Member member = group.get(req.memberId());
        switch (group.state()) {
            case EMPTY -> callback.accept(new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
            case PREPARING_REBALANCE -> callback.accept(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
            case COMPLETING_REBALANCE -> {
                group.awaitSync(member, callback);
                if (group.isLeader(member.memberId)) {
                    Map<String, byte[]> assignment = new HashMap<>();
                    req.assignments().forEach(a -> assignment.put(a.memberId(), a.assignment()));
                    group.assign(assignment);
                    // Saved before the members hear their assignments, as Apache's doSyncGroup: a save that
                    // fails is their answer, and the group rebalances.
                    Errors stored = storeGroup(group);
                    if (stored != Errors.NONE) {
                        resetAndPropagateAssignmentError(group, stored);
                        maybePrepareRebalance(group, "Error when storing group assignment during SyncGroup (member: " + member.memberId + ")");
                        return;
                    }
                    group.transitionTo(GroupState.STABLE, clock.getAsLong());
                    counters.completedRebalances.increment();
                    for (Member m : List.copyOf(group.members())) {
                        if (m.isAwaitingSync()) {
                            group.completeSync(m, syncResult(group, m));
                            scheduleMemberExpiry(group, m.memberId, m.sessionTimeoutMs, false);
                        }
                    }
                }
            }
            case STABLE -> {
                group.syncReceived(member.memberId);
                callback.accept(syncResult(group, member));
                scheduleMemberExpiry(group, member.memberId, member.sessionTimeoutMs, false);
            }
            default -> callback.accept(new SyncGroupResponseData().setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()));
        }
    }

    private Errors syncError(SyncGroupRequestData req) {
        if (closed) {
            return Errors.NOT_COORDINATOR;
        }
        if (req.groupId() == null || req.groupId().isEmpty()) {
            return Errors.INVALID_GROUP_ID;
        }
        ClassicGroup group = groups.get(req.groupId());
        if (group == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (group.is(GroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors e = validateCurrentMember(group, req.memberId(), req.groupInstanceId());
        if (e != null) {
            return e;
        }
        if (req.generationId() != group.generationId()) {
            return Errors.ILLEGAL_GENERATION;
        }
        if (req.protocolType() != null && !req.protocolType().equals(group.protocolType())) {
            return Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        if (req.protocolName() != null && !req.protocolName().equals(group.protocolName())) {
            return Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        return null;
    }

    private static SyncGroupResponseData syncResult(ClassicGroup group, Member m) {
        return new SyncGroupResponseData().setErrorCode(Errors.NONE.code()).setProtocolType(group.protocolType())
                .setProtocolName(group.protocolName()).setAssignment(m.assignment);
    }

    private void resetAndPropagateAssignmentError(ClassicGroup group, Errors error) {
        List<Member> waiting = group.members().stream().filter(Member::isAwaitingSync).toList();
        group.resetAssignments(new SyncGroupResponseData().setErrorCode(error.code()));
        // As Apache's propagateAssignment: a member answered now restarts its session timer, whose expiry was
        // ignored while it waited, so that it has a whole session to rejoin.
        for (Member m : waiting) {
            scheduleMemberExpiry(group, m.memberId, m.sessionTimeoutMs, false);
        }
    }

    // ---------------------------------------------------------------- Heartbeat and LeaveGroup

    public Errors heartbeat(String groupId, String memberId, String groupInstanceId, int generationId) {
        if (closed) {
            return Errors.NOT_COORDINATOR;
        }
        if (groupId == null || groupId.isEmpty()) {
            return Errors.INVALID_GROUP_ID;
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (group.is(GroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors e = validateCurrentMember(group, memberId, groupInstanceId);
        if (e != null) {
            return e;
        }
        if (generationId != group.generationId()) {
            return Errors.ILLEGAL_GENERATION;
        }
        Member m = group.get(memberId);
        return switch (group.state()) {
            case EMPTY -> Errors.UNKNOWN_MEMBER_ID;
            case PREPARING_REBALANCE -> {
                scheduleMemberExpiry(group, memberId, m.sessionTimeoutMs, false);
                yield Errors.REBALANCE_IN_PROGRESS;
            }
            case COMPLETING_REBALANCE, STABLE -> {
                scheduleMemberExpiry(group, memberId, m.sessionTimeoutMs, false);
                yield Errors.NONE;
            }
            default -> Errors.COORDINATOR_NOT_AVAILABLE;
        };
    }

    public record Leaving(String memberId, String groupInstanceId, String reason) {
    }

    /** @return the top-level error (null when per-member errors apply) and one error per leaving member */
    public Map.Entry<Errors, List<Errors>> leave(String groupId, List<Leaving> leaving) {
        if (closed) {
            return Map.entry(Errors.NOT_COORDINATOR, List.of());
        }
        if (groupId == null || groupId.isEmpty()) {
            return Map.entry(Errors.INVALID_GROUP_ID, List.of());
        }
        ClassicGroup group = groups.get(groupId);
        List<Errors> out = new ArrayList<>();
        if (group == null) {
            leaving.forEach(l -> out.add(Errors.UNKNOWN_MEMBER_ID));
            return Map.entry(Errors.NONE, out);
        }
        if (group.is(GroupState.DEAD)) {
            return Map.entry(Errors.COORDINATOR_NOT_AVAILABLE, List.of());
        }
        for (Leaving l : leaving) {
            String memberId = l.memberId();
            if (l.groupInstanceId() != null && UNKNOWN_MEMBER_ID.equals(memberId)) {
                memberId = group.staticMemberId(l.groupInstanceId());
                if (memberId == null) {
                    out.add(Errors.UNKNOWN_MEMBER_ID);
                    continue;
                }
            }
            if (group.removePending(memberId)) {
                scheduler.cancel(pendingKey(group, memberId));
                out.add(Errors.NONE);
                checkJoinComplete(group);
                continue;
            }
            Errors e = validateCurrentMember(group, memberId, l.groupInstanceId());
            if (e != null) {
                out.add(e);
                continue;
            }
            scheduler.cancel(heartbeatKey(group, memberId));
            removeMemberAndUpdateGroup(group, group.get(memberId), "Removing member " + memberId
                    + " on LeaveGroup; client reason: " + (l.reason() == null ? "not provided" : l.reason()));
            out.add(Errors.NONE);
        }
        return Map.entry(Errors.NONE, out);
    }

    private void removeMemberAndUpdateGroup(ClassicGroup group, Member member, String reason) {
        // A new member can time out with its JoinGroup still pending: answer it so an alive client rejoins.
        group.completeJoin(member, joinError(member.memberId, Errors.UNKNOWN_MEMBER_ID));
        group.completeSync(member, new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
        group.remove(member.memberId);
        switch (group.state()) {
            case STABLE, COMPLETING_REBALANCE -> maybePrepareRebalance(group, reason);
            case PREPARING_REBALANCE -> checkJoinComplete(group);
            default -> {
            }
        }
    }

    private Errors validateCurrentMember(ClassicGroup group, String memberId, String groupInstanceId) {
        if (groupInstanceId != null) {
            String current = group.staticMemberId(groupInstanceId);
            if (current == null) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            if (!current.equals(memberId)) {
                LOG.infof("group=%s member %s of instance %s is fenced by %s", group.groupId(), memberId, groupInstanceId, current);
                return Errors.FENCED_INSTANCE_ID;
            }
            return null;
        }
        return group.has(memberId) ? null : Errors.UNKNOWN_MEMBER_ID;
    }

    private void scheduleMemberExpiry(ClassicGroup group, String memberId, int timeoutMs, boolean pending) {
        String key = pending ? pendingKey(group, memberId) : heartbeatKey(group, memberId);
        scheduler.schedule(key, timeoutMs, () -> expireMember(group, memberId, pending));
    }

    private void expireMember(ClassicGroup group, String memberId, boolean pending) {
        if (pending) {
            if (group.removePending(memberId)) {
                LOG.infof("group=%s pending member %s expired", group.groupId(), memberId);
                checkJoinComplete(group);
            }
            return;
        }
        Member m = group.get(memberId);
        if (m == null) {
            return;
        }
        if (!m.isNew && (m.isAwaitingJoin() || m.isAwaitingSync())) {
            // Members waiting on the coordinator are not expected to heartbeat.
            scheduleMemberExpiry(group, memberId, m.sessionTimeoutMs, false);
            return;
        }
        LOG.infof("group=%s member %s failed (session timeout), removing it", group.groupId(), memberId);
        removeMemberAndUpdateGroup(group, m, "removing member " + memberId + " on heartbeat expiration");
    }

    // ---------------------------------------------------------------- offsets (GroupOffsets)

    public record OffsetToCommit(TopicPartition tp, long offset, int leaderEpoch, String metadata) {
    }

    /** OffsetCommit: validation as Apache's {@code validateOffsetCommit}, then one durable save. */
    public Map<TopicPartition, Errors> commit(String groupId, String memberId, String groupInstanceId, int generationId,
                                              List<OffsetToCommit> offsets, long retentionMs) throws IOException {
        return this.offsets.commit(groupId, memberId, groupInstanceId, generationId, offsets, retentionMs);
    }

    /** Committed offsets of a group; {@code partitions == null} means all. Unknown groups have none. */
    public Map<TopicPartition, CommittedOffset> fetch(String groupId, Collection<TopicPartition> partitions) {
        return offsets.fetch(groupId, partitions);
    }

    public Errors deleteGroup(String groupId) throws IOException {
        return offsets.deleteGroup(groupId);
    }

    public record OffsetDeleteResult(Errors groupError, Map<TopicPartition, Errors> partitions) {
    }

    public OffsetDeleteResult deleteOffsets(String groupId, List<TopicPartition> partitions) throws IOException {
        return offsets.deleteOffsets(groupId, partitions);
    }

    /** TxnOffsetCommit; see {@link GroupOffsets#txnCommit}. */
    public Map<TopicPartition, Errors> txnCommit(String groupId, String memberId, String groupInstanceId, int generationId,
                                                 long producerId, short producerEpoch, List<OffsetToCommit> offsets,
                                                 VerificationGuards.Ticket verified) throws IOException {
        return this.offsets.txnCommit(groupId, memberId, groupInstanceId, generationId, producerId, producerEpoch, offsets, verified);
    }

    /** The guard a TxnOffsetCommit verifies with; see {@link GroupOffsets#startTxnVerification}. */
    public VerificationGuards.Ticket startTxnVerification(long producerId, short producerEpoch) {
        return offsets.startTxnVerification(producerId, producerEpoch);
    }

    /** A transaction marker for this slot; see {@link GroupOffsets#completeTxn}. */
    public void completeTxn(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) throws IOException {
        offsets.completeTxn(producerId, producerEpoch, coordinatorEpoch, commit);
    }

    /** Partitions with pending transactional offsets (require_stable); see {@link GroupOffsets#unstable}. */
    public Set<TopicPartition> unstable(String groupId) {
        return offsets.unstable(groupId);
    }

    /** Offset expiry (offsets.retention.minutes); see {@link GroupOffsets#expireOffsets()}. */
    public void expireOffsets() throws IOException {
        offsets.expireOffsets();
    }

    /** Deleted topics: their committed offsets go at once; see {@link GroupOffsets#removeOffsetsOfTopics}. */
    public void removeOffsetsOfTopics(Set<String> deletedTopics) throws IOException {
        offsets.removeOffsetsOfTopics(deletedTopics);
    }

    /** Apache's {@code cleanupGroupMetadata}: run by the periodic offsets expiry and on topic deletion, not on leaving. */
    private void maybeDropEmpty(ClassicGroup group) {
        if (group.is(GroupState.EMPTY) && group.hasNoMembers() && group.offsets().isEmpty() && group.pendingTxnOffsets().isEmpty()) {
            group.transitionTo(GroupState.DEAD, clock.getAsLong());
            groups.remove(group.groupId());
        }
    }

    /** What the offsets half may see and do of the membership half. */
    private final class MembershipView implements GroupOffsets.Membership {
        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public ClassicGroup group(String groupId) {
            return groups.get(groupId);
        }

        @Override
        public Collection<ClassicGroup> groups() {
            return List.copyOf(groups.values());
        }

        @Override
        public void add(ClassicGroup group) {
            groups.put(group.groupId(), group);
        }

        @Override
        public Errors validateCurrentMember(ClassicGroup group, String memberId, String groupInstanceId) {
            return GroupShard.this.validateCurrentMember(group, memberId, groupInstanceId);
        }

        @Override
        public void memberActive(ClassicGroup group, String memberId) {
            Member m = group.get(memberId);
            if (m != null) {
                scheduleMemberExpiry(group, memberId, m.sessionTimeoutMs, false);
            }
        }

        @Override
        public void removeGroup(ClassicGroup group) {
            groups.remove(group.groupId());
        }

        @Override
        public void maybeDropEmpty(ClassicGroup group) {
            GroupShard.this.maybeDropEmpty(group);
        }
    }

    // ---------------------------------------------------------------- describe and list

    public record MemberDescription(String memberId, String groupInstanceId, String clientId, String clientHost,
                                    byte[] metadata, byte[] assignment) {
    }

    public record GroupDescription(String groupId, GroupState state, String protocolType, String protocolName,
                                   List<MemberDescription> members) {
    }

    public GroupDescription describe(String groupId) {
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return new GroupDescription(groupId, GroupState.DEAD, "", "", List.of());
        }
        boolean stable = group.is(GroupState.STABLE);
        List<MemberDescription> members = new ArrayList<>();
        for (Member m : group.members()) {
            members.add(new MemberDescription(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
                    stable ? m.metadata(group.protocolName()) : new byte[0], stable ? m.assignment : new byte[0]));
        }
        return new GroupDescription(groupId, group.state(), group.protocolType() == null ? "" : group.protocolType(),
                stable ? group.protocolName() : "", members);
    }

    public List<GroupDescription> list(Set<GroupState> states) {
        List<GroupDescription> out = new ArrayList<>();
        for (ClassicGroup g : groups.values()) {
            if (states.isEmpty() || states.contains(g.state())) {
                out.add(new GroupDescription(g.groupId(), g.state(), g.protocolType() == null ? "" : g.protocolType(), g.protocolName(), List.of()));
            }
        }
        return out;
    }

    /**
     * One group as an operator sees it: its state, members and committed offsets (not the
     * pending transactional ones). A member's assignment bytes only while the group is Stable
     * (as DescribeGroups gives them), its metadata never.
     */
    public record GroupSummary(String groupId, GroupState state, String protocolType, int members, Map<TopicPartition, Long> offsets,
                               List<MemberDescription> memberList) {
        public GroupSummary(String groupId, GroupState state, String protocolType, int members, Map<TopicPartition, Long> offsets) {
            this(groupId, state, protocolType, members, offsets, List.of());
        }
    }

    /** This slot's groups counted by state, and the offsets they hold: the scrape's gauges, without copying any offsets. */
    public record Census(Map<GroupState, Integer> byState, long offsets) {
    }

    public Census census() {
        Map<GroupState, Integer> byState = new java.util.EnumMap<>(GroupState.class);
        long n = 0;
        for (ClassicGroup g : groups.values()) {
            byState.merge(g.state(), 1, Integer::sum);
            n += g.offsets().size();
        }
        return new Census(byState, n);
    }

    /** Every group of this slot, for the controller's view of lag. */
    public List<GroupSummary> summaries() {
        List<GroupSummary> out = new ArrayList<>(groups.size());
        for (ClassicGroup g : groups.values()) {
            Map<TopicPartition, Long> committed = new HashMap<>(g.offsets().size() * 2);
            g.offsets().forEach((tp, o) -> committed.put(tp, o.offset()));
            boolean stable = g.is(GroupState.STABLE);
            List<MemberDescription> members = new ArrayList<>(g.members().size());
            for (Member m : g.members()) {
                members.add(new MemberDescription(m.memberId, m.groupInstanceId, m.clientId, m.clientHost, new byte[0],
                        stable && m.assignment != null ? m.assignment : new byte[0]));
            }
            out.add(new GroupSummary(g.groupId(), g.state(), g.protocolType() == null ? "" : g.protocolType(), g.members().size(), committed,
                    members));
        }
        return out;
    }

    /** Slot lost: answer everyone waiting with NOT_COORDINATOR and forget the groups (members rejoin elsewhere). */
    public void close() {
        closed = true;
        for (ClassicGroup g : groups.values()) {
            for (Member m : g.members()) {
                g.completeJoin(m, joinError(m.memberId, Errors.NOT_COORDINATOR));
                g.completeSync(m, new SyncGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code()));
                scheduler.cancel(heartbeatKey(g, m.memberId));
            }
            g.pendingMemberIds().forEach(p -> scheduler.cancel(pendingKey(g, p)));
            scheduler.cancel(joinKey(g));
            scheduler.cancel(syncKey(g));
        }
        offsets.close();
        groups.clear();
    }

    GroupState stateOf(String groupId) {
        ClassicGroup g = groups.get(groupId);
        return g == null ? GroupState.DEAD : g.state();
    }

    ClassicGroup group(String groupId) {
        return groups.get(groupId);
    }

    private static String joinKey(ClassicGroup g) {
        return "join/" + g.groupId();
    }

    private static String syncKey(ClassicGroup g) {
        return "sync/" + g.groupId();
    }

    private static String heartbeatKey(ClassicGroup g, String memberId) {
        return "hb/" + g.groupId() + "/" + memberId;
    }

    private static String pendingKey(ClassicGroup g, String memberId) {
        return "pending/" + g.groupId() + "/" + memberId;
    }
}
