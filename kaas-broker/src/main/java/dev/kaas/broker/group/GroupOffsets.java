package dev.kaas.broker.group;

import dev.kaas.broker.storage.VerificationGuards;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The offsets half of a group slot, as Apache splits {@code OffsetMetadataManager} from the
 * membership of {@code GroupMetadataManager}: OffsetCommit validation, OffsetFetch, OffsetDelete,
 * DeleteGroups, offset expiry and the offsets of deleted topics. Everything here that changes
 * state is saved to the {@link GroupStore} first and applied to the {@link ClassicGroup} only once
 * the store has it. It sees the membership half only through {@link Membership}.
 * Same threading as {@link GroupShard}: the slot's serial executor only.
 */
final class GroupOffsets {
    private static final Logger LOG = Logger.getLogger(GroupOffsets.class);
    static final String EXPIRY_KEY = "expire-offsets";

    /** What the offsets half may see and do of the membership half. */
    interface Membership {
        /** The slot was lost: every call answers NOT_COORDINATOR. */
        boolean closed();

        ClassicGroup group(String groupId);

        /** A snapshot of the slot's groups. */
        Collection<ClassicGroup> groups();

        void add(ClassicGroup group);

        void removeGroup(ClassicGroup group);

        /** null when the member (or static instance) is current, else the error to answer. */
        Errors validateCurrentMember(ClassicGroup group, String memberId, String groupInstanceId);

        /** The member showed a sign of life: restart its session timer. No-op for a non-member. */
        void memberActive(ClassicGroup group, String memberId);

        /** A group left Empty with no members and no offsets is gone. */
        void maybeDropEmpty(ClassicGroup group);
    }

    private final int slot;
    private final GroupConfig config;
    private final LongSupplier clock;
    private final Scheduler scheduler;
    private final GroupStore store;
    private final Predicate<TopicPartition> partitionExists;
    private final Membership membership;
    private final GroupCounters counters;
    /** Highest producer epoch this slot saw per producer id (commits and markers): older TxnOffsetCommits are a zombie's. */
    private final Map<Long, Short> producerEpochs = new java.util.HashMap<>();
    /** Highest coordinator epoch of a marker this slot applied per producer id: an older one is a deposed coordinator's. */
    private final Map<Long, Integer> coordinatorEpochs = new java.util.HashMap<>();
    /** KIP-890 guards of this slot, Apache's on its {@code __consumer_offsets} partition. */
    private final VerificationGuards guards = new VerificationGuards();

    GroupOffsets(int slot, GroupConfig config, LongSupplier clock, Scheduler scheduler, GroupStore store,
                 Predicate<TopicPartition> partitionExists, Membership membership, GroupCounters counters) {
        this.slot = slot;
        this.config = config;
        this.clock = clock;
        this.scheduler = scheduler;
        this.store = store;
        this.partitionExists = partitionExists;
        this.membership = membership;
        this.counters = counters;
    }

    /**
     * Loads the slot's groups from the store: with their offsets, and Stable with their members when
     * the file holds the membership of a completed rebalance. Starts the expiry timer.
     */
    void load() throws IOException {
        long now = clock.getAsLong();
        for (GroupStore.StoredGroup g : store.loadAll().values()) {
            membership.add(ClassicGroup.loaded(g.groupId(), g.protocolType(), g.offsets(), g.pending(), g.membership(), now));
        }
        scheduleExpiry();
    }

    void close() {
        scheduler.cancel(EXPIRY_KEY);
    }

    /** OffsetCommit: validation as Apache's {@code validateOffsetCommit}, then one durable save. */
    public Map<TopicPartition, Errors> commit(String groupId, String memberId, String groupInstanceId, int generationId,
                                              List<GroupShard.OffsetToCommit> offsets, long retentionMs) throws IOException {
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        Errors groupError = null;
        if (membership.closed()) {
            groupError = Errors.NOT_COORDINATOR;
        } else if (groupId == null) {
            groupError = Errors.INVALID_GROUP_ID;
        }
        ClassicGroup group = groupError == null ? membership.group(groupId) : null;
        boolean created = false;
        if (groupError == null && group == null) {
            if (generationId < 0) {
                // Not using group management: Kafka only stores its offsets.
                group = new ClassicGroup(groupId, GroupState.EMPTY, clock.getAsLong());
                created = true;
            } else {
                groupError = Errors.ILLEGAL_GENERATION;
            }
        }
        if (groupError == null && !created) {
            groupError = validateOffsetCommit(group, generationId, memberId, groupInstanceId, false);
            if (groupError == null && group.is(GroupState.COMPLETING_REBALANCE)) {
                groupError = Errors.REBALANCE_IN_PROGRESS;
            }
        }
        if (groupError != null) {
            for (GroupShard.OffsetToCommit o : offsets) {
                result.put(o.tp(), groupError);
            }
            return result;
        }
        // A commit from a member counts as a sign of life, as Apache's.
        membership.memberActive(group, memberId);
        Map<TopicPartition, CommittedOffset> accepted = accept(offsets, retentionMs, result);
        if (!accepted.isEmpty()) {
            Map<TopicPartition, CommittedOffset> next = new LinkedHashMap<>(group.offsets());
            next.putAll(accepted);
            try {
                store.save(new GroupStore.StoredGroup(groupId, group.protocolType(), next, group.pendingTxnOffsets(),
                        group.storedMembership()));
            } catch (NotCoordinatorException e) {
                accepted.keySet().forEach(tp -> result.put(tp, Errors.NOT_COORDINATOR));
                return result;
            }
            group.putOffsets(accepted);
            counters.offsetCommits.increment();
            if (created) {
                membership.add(group);
            }
        }
        return result;
    }

    /**
     * Apache 3.7's {@code validateOffsetCommit}: a member (or static instance) must be current and
     * its generation match; without a member, an OffsetCommit may go only to an Empty group, while
     * a TxnOffsetCommit may go to any (producer-only clients), and to an Empty one at any generation below 0.
     */
    private Errors validateOffsetCommit(ClassicGroup group, int generationId, String memberId, String groupInstanceId, boolean transactional) {
        if (group.is(GroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (transactional && generationId < 0 && group.is(GroupState.EMPTY)) {
            return null;
        }
        if (generationId >= 0 || !GroupShard.UNKNOWN_MEMBER_ID.equals(memberId) || groupInstanceId != null) {
            Errors e = membership.validateCurrentMember(group, memberId, groupInstanceId);
            if (e != null) {
                return e;
            }
            return generationId != group.generationId() ? Errors.ILLEGAL_GENERATION : null;
        }
        return transactional || group.is(GroupState.EMPTY) ? null : Errors.UNKNOWN_MEMBER_ID;
    }

    /** The offsets of a commit that may be stored, each partition's answer put in {@code result}. */
    private Map<TopicPartition, CommittedOffset> accept(List<GroupShard.OffsetToCommit> offsets, long retentionMs,
                                                       Map<TopicPartition, Errors> result) {
        long now = clock.getAsLong();
        Map<TopicPartition, CommittedOffset> accepted = new LinkedHashMap<>();
        for (GroupShard.OffsetToCommit o : offsets) {
            if (!partitionExists.test(o.tp())) {
                result.put(o.tp(), Errors.UNKNOWN_TOPIC_OR_PARTITION);
            } else if (o.metadata() != null && o.metadata().length() > config.offsetMetadataMaxBytes()) {
                result.put(o.tp(), Errors.OFFSET_METADATA_TOO_LARGE);
            } else {
                long expire = retentionMs > 0 ? now + retentionMs : -1;
                accepted.put(o.tp(), new CommittedOffset(o.offset(), o.leaderEpoch(), o.metadata() == null ? "" : o.metadata(), now, expire));
                result.put(o.tp(), Errors.NONE);
            }
        }
        return accepted;
    }

    /** Committed offsets of a group; {@code partitions == null} means all. Unknown groups have none. */
    public Map<TopicPartition, CommittedOffset> fetch(String groupId, Collection<TopicPartition> partitions) {
        ClassicGroup group = membership.group(groupId);
        Map<TopicPartition, CommittedOffset> out = new LinkedHashMap<>();
        if (partitions == null) {
            if (group != null) {
                out.putAll(group.offsets());
            }
            return out;
        }
        for (TopicPartition tp : partitions) {
            out.put(tp, group == null ? null : group.offsets().get(tp));
        }
        return out;
    }

    public Errors deleteGroup(String groupId) throws IOException {
        if (membership.closed()) {
            return Errors.NOT_COORDINATOR;
        }
        ClassicGroup group = membership.group(groupId);
        if (group == null || group.is(GroupState.DEAD)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (!group.is(GroupState.EMPTY)) {
            return Errors.NON_EMPTY_GROUP;
        }
        store.delete(groupId);
        group.transitionTo(GroupState.DEAD, clock.getAsLong());
        membership.removeGroup(group);
        return Errors.NONE;
    }

    public GroupShard.OffsetDeleteResult deleteOffsets(String groupId, List<TopicPartition> partitions) throws IOException {
        if (membership.closed()) {
            return new GroupShard.OffsetDeleteResult(Errors.NOT_COORDINATOR, Map.of());
        }
        ClassicGroup group = membership.group(groupId);
        if (group == null || group.is(GroupState.DEAD)) {
            return new GroupShard.OffsetDeleteResult(Errors.GROUP_ID_NOT_FOUND, Map.of());
        }
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        Set<String> subscribed;
        if (group.is(GroupState.EMPTY)) {
            subscribed = Set.of();
        } else if (group.isConsumerGroup()) {
            subscribed = group.subscribedTopics();
        } else {
            return new GroupShard.OffsetDeleteResult(Errors.NON_EMPTY_GROUP, Map.of());
        }
        List<TopicPartition> deletable = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            if (!partitionExists.test(tp)) {
                result.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            } else if (subscribed.contains(tp.topic())) {
                result.put(tp, Errors.GROUP_SUBSCRIBED_TO_TOPIC);
            } else {
                deletable.add(tp);
                result.put(tp, Errors.NONE);
            }
        }
        if (deletable.stream().anyMatch(group.offsets()::containsKey)) {
            Map<TopicPartition, CommittedOffset> next = new LinkedHashMap<>(group.offsets());
            deletable.forEach(next::remove);
            saveOrDelete(group, next);
            group.retainOffsets(next.keySet());
        }
        return new GroupShard.OffsetDeleteResult(Errors.NONE, result);
    }

    private void saveOrDelete(ClassicGroup group, Map<TopicPartition, CommittedOffset> offsets) throws IOException {
        saveOrDelete(group, offsets, group.pendingTxnOffsets());
    }

    private void saveOrDelete(ClassicGroup group, Map<TopicPartition, CommittedOffset> offsets,
                              Map<Long, GroupStore.PendingTxnOffsets> pending) throws IOException {
        GroupStore.StoredMembership members = group.storedMembership();
        if (offsets.isEmpty() && pending.isEmpty() && (members == null || members.members().isEmpty())) {
            store.delete(group.groupId());
        } else {
            store.save(new GroupStore.StoredGroup(group.groupId(), group.protocolType(), offsets, pending, members));
        }
    }

    /**
     * Saves the membership {@link ClassicGroup#storeMembership} recorded, with the group's offsets.
     *
     * @return NONE once durable; NOT_COORDINATOR when the slot was taken over; COORDINATOR_NOT_AVAILABLE
     *         when the volume refused the write (Apache's storeGroup errors, as its SyncGroup answers them)
     */
    Errors saveMembership(ClassicGroup group) {
        try {
            saveOrDelete(group, group.offsets(), group.pendingTxnOffsets());
            return Errors.NONE;
        } catch (NotCoordinatorException e) {
            return Errors.NOT_COORDINATOR;
        } catch (IOException | RuntimeException e) {
            LOG.warnf("group=%s membership of generation %d not saved: %s", group.groupId(), group.generationId(), e.toString());
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
    }

    /**
     * TxnOffsetCommit (KIP-98, KIP-447), as Apache 3.7's old coordinator: the group is created
     * Empty if unknown; generation -1 with no member is accepted for producer-only clients;
     * otherwise the member (or static instance) must be current and the generation match. The
     * offsets are pending, durable with the group, and become committed only when the
     * transaction's COMMIT marker arrives ({@link #completeTxn}). An epoch older than one this
     * slot saw for the producer is a zombie's: INVALID_PRODUCER_EPOCH.
     *
     * <p>KIP-890: unless the producer already has offsets pending in this slot, {@code verified}
     * must hold a verification the coordinator confirmed ({@link #startTxnVerification}) and no
     * marker voided, else INVALID_TXN_STATE, as Apache's append to the offsets partition refuses
     * it. The ticket is finished here, whatever the outcome.
     */
    public Map<TopicPartition, Errors> txnCommit(String groupId, String memberId, String groupInstanceId, int generationId,
                                                 long producerId, short producerEpoch, List<GroupShard.OffsetToCommit> offsets,
                                                 VerificationGuards.Ticket verified)
            throws IOException {
        try {
            return txnCommitChecked(groupId, memberId, groupInstanceId, generationId, producerId, producerEpoch, offsets, verified);
        } finally {
            guards.done(producerId, verified);
        }
    }

    private Map<TopicPartition, Errors> txnCommitChecked(String groupId, String memberId, String groupInstanceId, int generationId,
                                                         long producerId, short producerEpoch, List<GroupShard.OffsetToCommit> offsets,
                                                         VerificationGuards.Ticket verified)
            throws IOException {
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        Errors groupError = null;
        if (membership.closed()) {
            groupError = Errors.NOT_COORDINATOR;
        } else if (groupId == null || groupId.isEmpty()) {
            groupError = Errors.INVALID_GROUP_ID;
        }
        ClassicGroup group = groupError == null ? membership.group(groupId) : null;
        boolean created = false;
        if (groupError == null && group == null) {
            group = new ClassicGroup(groupId, GroupState.EMPTY, clock.getAsLong());
            created = true;
        }
        if (groupError == null) {
            groupError = validateOffsetCommit(group, generationId, memberId, groupInstanceId, true);
        }
        if (groupError == null) {
            GroupStore.PendingTxnOffsets mine = group.pendingTxnOffsets().get(producerId);
            Short seen = producerEpochs.get(producerId);
            if ((mine != null && mine.producerEpoch() > producerEpoch) || (seen != null && seen > producerEpoch)) {
                groupError = Errors.INVALID_PRODUCER_EPOCH;
            } else if (verified.refused() || (verified != VerificationGuards.Ticket.DISABLED && !hasPending(producerId)
                    && !guards.confirmed(producerId, verified))) {
                groupError = Errors.INVALID_TXN_STATE;
            }
        }
        if (groupError != null) {
            for (GroupShard.OffsetToCommit o : offsets) {
                result.put(o.tp(), groupError);
            }
            return result;
        }
        Map<TopicPartition, CommittedOffset> accepted = accept(offsets, -1, result);
        if (accepted.isEmpty()) {
            return result;
        }
        GroupStore.PendingTxnOffsets before = group.pendingTxnOffsets().get(producerId);
        Map<TopicPartition, CommittedOffset> merged = new LinkedHashMap<>(before == null || before.producerEpoch() != producerEpoch
                ? Map.of() : before.offsets());
        merged.putAll(accepted);
        GroupStore.PendingTxnOffsets next = new GroupStore.PendingTxnOffsets(producerEpoch, merged);
        Map<Long, GroupStore.PendingTxnOffsets> pending = new java.util.HashMap<>(group.pendingTxnOffsets());
        pending.put(producerId, next);
        try {
            store.save(new GroupStore.StoredGroup(groupId, group.protocolType(), group.offsets(), pending, group.storedMembership()));
        } catch (NotCoordinatorException e) {
            accepted.keySet().forEach(tp -> result.put(tp, Errors.NOT_COORDINATOR));
            return result;
        }
        group.putPendingTxnOffsets(producerId, next);
        counters.offsetCommits.increment();
        producerEpochs.merge(producerId, producerEpoch, (a, b) -> (short) Math.max(a, b));
        if (created) {
            membership.add(group);
        }
        return result;
    }

    /**
     * A transaction's marker reached this slot: the producer's pending offsets in every group
     * become committed (COMMIT) or are dropped (ABORT), each group saved before it changes. A
     * marker of an older epoch than the pending offsets' is a deposed coordinator's and changes nothing.
     */
    public void completeTxn(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) throws IOException {
        Integer seenCoordinator = coordinatorEpochs.get(producerId);
        if (seenCoordinator != null && seenCoordinator > coordinatorEpoch) {
            // As a partition refuses it: a deposed coordinator's late marker must not decide the producer's next transaction.
            throw new org.apache.kafka.common.errors.TransactionCoordinatorFencedException("marker of coordinator epoch "
                    + coordinatorEpoch + " for producer " + producerId + " after one of epoch " + seenCoordinator);
        }
        coordinatorEpochs.put(producerId, coordinatorEpoch);
        producerEpochs.merge(producerId, producerEpoch, (a, b) -> (short) Math.max(a, b));
        // A verification that began before this marker must not open the producer's next transaction here.
        guards.clear(producerId);
        for (ClassicGroup group : membership.groups()) {
            GroupStore.PendingTxnOffsets p = group.pendingTxnOffsets().get(producerId);
            if (p == null) {
                continue;
            }
            if (p.producerEpoch() > producerEpoch) {
                throw new org.apache.kafka.common.errors.InvalidProducerEpochException("marker epoch " + producerEpoch
                        + " is older than the pending offsets' " + p.producerEpoch() + " for producer " + producerId);
            }
            Map<TopicPartition, CommittedOffset> offsets = new LinkedHashMap<>(group.offsets());
            if (commit) {
                offsets.putAll(p.offsets());
            }
            Map<Long, GroupStore.PendingTxnOffsets> pending = new java.util.HashMap<>(group.pendingTxnOffsets());
            pending.remove(producerId);
            saveOrDelete(group, offsets, pending);
            if (commit) {
                group.putOffsets(p.offsets());
            }
            group.removePendingTxnOffsets(producerId);
            membership.maybeDropEmpty(group);
        }
    }

    /**
     * The first step of a TxnOffsetCommit (KIP-890): a place in the producer's verification of
     * this slot's partition (to pass to {@link #txnCommit}), or null when its transaction is
     * already open here (offsets pending in some group).
     */
    public VerificationGuards.Ticket startTxnVerification(long producerId, short producerEpoch) {
        if (membership.closed()) {
            throw new NotCoordinatorException("group slot " + slot + " is not coordinated here");
        }
        return hasPending(producerId) ? null : guards.join(producerId, producerEpoch, clock.getAsLong());
    }

    private boolean hasPending(long producerId) {
        for (ClassicGroup group : membership.groups()) {
            if (group.pendingTxnOffsets().containsKey(producerId)) {
                return true;
            }
        }
        return false;
    }

    /** OffsetFetch with require_stable: the partitions of {@code groupId} with transactional offsets still pending. */
    public Set<TopicPartition> unstable(String groupId) {
        ClassicGroup group = membership.group(groupId);
        Set<TopicPartition> out = new java.util.HashSet<>();
        if (group != null) {
            group.pendingTxnOffsets().values().forEach(p -> out.addAll(p.offsets().keySet()));
        }
        return out;
    }

    /**
     * Offset expiry (offsets.retention.minutes): an Empty group's offsets expire once it has been
     * empty that long (a group that never had members: counted from each commit); a live consumer
     * group's offsets of topics nobody subscribes to expire counted from their commit. A group
     * left with no members and no offsets is gone.
     */
    public void expireOffsets() throws IOException {
        long now = clock.getAsLong();
        long retention = config.offsetsRetentionMs();
        for (ClassicGroup group : membership.groups()) {
            Map<TopicPartition, CommittedOffset> keep = new LinkedHashMap<>();
            Set<String> subscribed = group.is(GroupState.EMPTY) ? Set.of() : group.subscribedTopics();
            boolean canExpire = group.is(GroupState.EMPTY) || group.isConsumerGroup();
            for (var e : group.offsets().entrySet()) {
                CommittedOffset o = e.getValue();
                long base = group.is(GroupState.EMPTY) && group.protocolType() != null ? group.stateTimestamp() : o.commitTimestamp();
                boolean expired = canExpire && !subscribed.contains(e.getKey().topic())
                        && (o.expireTimestamp() > 0 ? now >= o.expireTimestamp() : now - base >= retention);
                if (!expired) {
                    keep.put(e.getKey(), o);
                }
            }
            if (keep.size() != group.offsets().size()) {
                LOG.infof("expired %d offsets group=%s", group.offsets().size() - keep.size(), group.groupId());
                saveOrDelete(group, keep);
                group.retainOffsets(keep.keySet());
            }
            membership.maybeDropEmpty(group);
        }
    }

    /**
     * Deleted topics: their committed offsets go at once, as Apache's coordinator drops them when
     * partitions are deleted. A later topic of the same name starts without stale offsets.
     */
    public void removeOffsetsOfTopics(Set<String> deletedTopics) throws IOException {
        for (ClassicGroup group : membership.groups()) {
            if (group.offsets().keySet().stream().noneMatch(tp -> deletedTopics.contains(tp.topic()))) {
                continue;
            }
            Map<TopicPartition, CommittedOffset> keep = new LinkedHashMap<>(group.offsets());
            keep.keySet().removeIf(tp -> deletedTopics.contains(tp.topic()));
            saveOrDelete(group, keep);
            group.retainOffsets(keep.keySet());
            membership.maybeDropEmpty(group);
        }
    }

    private void scheduleExpiry() {
        scheduler.schedule(EXPIRY_KEY, config.offsetsRetentionCheckIntervalMs(), () -> {
            try {
                expireOffsets();
            } catch (IOException e) {
                LOG.warnf("offset expiry failed slot=%d: %s", slot, e.getMessage());
            }
            if (!membership.closed()) {
                scheduleExpiry();
            }
        });
    }
}
