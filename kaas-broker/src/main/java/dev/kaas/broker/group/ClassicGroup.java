package dev.kaas.broker.group;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;

/**
 * One classic group: membership (memory only) and committed offsets (persisted by the shard).
 * Mirrors Apache's {@code ClassicGroup}: it owns its invariants, so its state changes only through
 * its methods: the member maps, the static-member index, the leader, the pending sets and the
 * count of members awaiting a JoinGroup answer stay consistent with each other, and a member's
 * JoinGroup or SyncGroup callback is answered at most once. {@link GroupShard} drives it, on its
 * slot's thread only.
 */
final class ClassicGroup {
    private final String groupId;
    private GroupState state;
    private long stateTimestamp;
    private int generationId;
    private String protocolType;
    private String protocolName;
    private String leaderId;
    private boolean newMemberAdded;
    private final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    private final Set<String> pendingMembers = new HashSet<>();
    private final Set<String> pendingSyncMembers = new HashSet<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    private final TreeMap<TopicPartition, CommittedOffset> offsets = new TreeMap<>(
            (a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
    private int numAwaitingJoin;
    private final Map<Long, GroupStore.PendingTxnOffsets> pendingTxn = new HashMap<>();
    /** The membership last saved with the group's file (Apache's last stored group metadata); null: none. */
    private GroupStore.StoredMembership storedMembership;

    ClassicGroup(String groupId, GroupState state, long now) {
        this.groupId = groupId;
        this.state = state;
        this.stateTimestamp = now;
    }

    /** A group as loaded from its offsets file: Empty, with the protocol type and offsets it was saved with. */
    static ClassicGroup loaded(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets,
                               Map<Long, GroupStore.PendingTxnOffsets> pending, long now) {
        return loaded(groupId, protocolType, offsets, pending, null, now);
    }

    /**
     * As Apache's {@code GroupMetadata.loadGroup}: with a stored membership that has members, the
     * group is Stable at that generation, its members with the chosen protocol's subscription and
     * their assignments (the caller starts their session timers); with one without members, Empty
     * at that generation.
     */
    static ClassicGroup loaded(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets,
                               Map<Long, GroupStore.PendingTxnOffsets> pending, GroupStore.StoredMembership membership, long now) {
        boolean members = membership != null && !membership.members().isEmpty();
        ClassicGroup g = new ClassicGroup(groupId, members ? GroupState.STABLE : GroupState.EMPTY, now);
        g.protocolType = protocolType;
        g.offsets.putAll(offsets);
        g.pendingTxn.putAll(pending);
        if (membership != null) {
            g.generationId = membership.generationId();
            g.storedMembership = membership;
        }
        if (members) {
            g.protocolName = membership.protocolName();
            for (GroupStore.StoredMember s : membership.members()) {
                Member m = new Member(s.memberId(), s.groupInstanceId(), s.clientId(), s.clientHost(), s.rebalanceTimeoutMs(),
                        s.sessionTimeoutMs(), protocolType, Map.of(membership.protocolName(), s.subscription()));
                m.assignment = s.assignment();
                g.add(m, null);
            }
            g.leaderId = membership.leaderId();
        }
        return g;
    }

    /** What the group's file carries of its membership (see {@link #storeMembership}). */
    GroupStore.StoredMembership storedMembership() {
        return storedMembership;
    }

    /**
     * Records the membership as it is now as the one its file should carry (Apache's
     * {@code storeGroup}): after a rebalance completes, and when a static member takes its old
     * incarnation's place; once the group is Empty, its generation alone. The caller saves the file,
     * and puts the returned record back if that fails.
     */
    GroupStore.StoredMembership storeMembership() {
        GroupStore.StoredMembership before = storedMembership;
        if (members.isEmpty()) {
            storedMembership = new GroupStore.StoredMembership(generationId, null, null, List.of());
            return before;
        }
        List<GroupStore.StoredMember> stored = new ArrayList<>();
        for (Member m : members.values()) {
            stored.add(new GroupStore.StoredMember(m.memberId, m.groupInstanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs,
                    m.sessionTimeoutMs, m.metadata(protocolName), m.assignment));
        }
        storedMembership = new GroupStore.StoredMembership(generationId, protocolName, leaderId, List.copyOf(stored));
        return before;
    }

    /** Puts back what {@link #storeMembership} returned: the file was not saved. */
    void restoreMembership(GroupStore.StoredMembership before) {
        storedMembership = before;
    }

    int numAwaitingJoin() {
        return numAwaitingJoin;
    }

    String groupId() {
        return groupId;
    }

    long stateTimestamp() {
        return stateTimestamp;
    }

    int generationId() {
        return generationId;
    }

    String protocolType() {
        return protocolType;
    }

    String protocolName() {
        return protocolName;
    }

    String leaderId() {
        return leaderId;
    }

    /** Members in join order (read-only). */
    Collection<Member> members() {
        return Collections.unmodifiableCollection(members.values());
    }

    Set<String> memberIds() {
        return Collections.unmodifiableSet(members.keySet());
    }

    int size() {
        return members.size();
    }

    boolean hasNoMembers() {
        return members.isEmpty() && pendingMembers.isEmpty();
    }

    /** The member id of a static instance, or null. */
    String staticMemberId(String groupInstanceId) {
        return staticMembers.get(groupInstanceId);
    }

    // ---------------------------------------------------------------- KIP-394 pending members

    int pendingCount() {
        return pendingMembers.size();
    }

    boolean isPending(String memberId) {
        return pendingMembers.contains(memberId);
    }

    void addPending(String memberId) {
        pendingMembers.add(memberId);
    }

    /** @return whether the id was pending */
    boolean removePending(String memberId) {
        return pendingMembers.remove(memberId);
    }

    Set<String> pendingMemberIds() {
        return Collections.unmodifiableSet(pendingMembers);
    }

    // ---------------------------------------------------------------- group.initial.rebalance.delay.ms

    void markNewMemberAdded() {
        newMemberAdded = true;
    }

    /** @return whether a member was added since the last call */
    boolean takeNewMemberAdded() {
        boolean added = newMemberAdded;
        newMemberAdded = false;
        return added;
    }

    // ---------------------------------------------------------------- offsets

    /** Committed offsets (read-only); changed only after the store has them. */
    Map<TopicPartition, CommittedOffset> offsets() {
        return Collections.unmodifiableMap(offsets);
    }

    void putOffsets(Map<TopicPartition, CommittedOffset> committed) {
        offsets.putAll(committed);
    }

    void retainOffsets(Set<TopicPartition> keep) {
        offsets.keySet().retainAll(keep);
    }

    /** Transactional offsets awaiting their transaction's marker, per producer id (read-only). */
    Map<Long, GroupStore.PendingTxnOffsets> pendingTxnOffsets() {
        return Collections.unmodifiableMap(pendingTxn);
    }

    void putPendingTxnOffsets(long producerId, GroupStore.PendingTxnOffsets pending) {
        pendingTxn.put(producerId, pending);
    }

    void removePendingTxnOffsets(long producerId) {
        pendingTxn.remove(producerId);
    }

    /** Apache's {@code hasPendingOffsetCommitsForTopicPartition}: OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT. */
    boolean hasPendingOffsets(TopicPartition tp) {
        return pendingTxn.values().stream().anyMatch(p -> p.offsets().containsKey(tp));
    }

    GroupState state() {
        return state;
    }

    boolean is(GroupState s) {
        return state == s;
    }

    void transitionTo(GroupState target, long now) {
        if (!target.validPrevious().contains(state)) {
            throw new IllegalStateException("group " + groupId + ": illegal transition " + state + " -> " + target);
        }
        state = target;
        stateTimestamp = now;
    }

    boolean canRebalance() {
        return GroupState.PREPARING_REBALANCE.validPrevious().contains(state);
    }

    boolean has(String memberId) {
        return members.containsKey(memberId);
    }

    Member get(String memberId) {
        return members.get(memberId);
    }

    boolean isLeader(String memberId) {
        return memberId.equals(leaderId);
    }

    /** Adds a member; with a callback it counts as awaiting the JoinGroup answer. */
    void add(Member m, Consumer<JoinGroupResponseData> callback) {
        if (members.isEmpty()) {
            protocolType = m.protocolType;
        }
        members.put(m.memberId, m);
        if (m.isStatic()) {
            staticMembers.put(m.groupInstanceId, m.memberId);
        }
        if (leaderId == null) {
            leaderId = m.memberId;
        }
        m.awaitingJoin = callback;
        if (callback != null) {
            numAwaitingJoin++;
        }
        pendingMembers.remove(m.memberId);
    }

    /** Removes a member, keeping the static index, the awaiting count, the pending-sync set and the leader consistent. */
    void remove(String memberId) {
        Member m = members.remove(memberId);
        if (m == null) {
            return;
        }
        if (m.isStatic() && memberId.equals(staticMembers.get(m.groupInstanceId))) {
            staticMembers.remove(m.groupInstanceId);
        }
        if (m.isAwaitingJoin()) {
            numAwaitingJoin--;
        }
        pendingSyncMembers.remove(memberId);
        if (isLeader(memberId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
    }

    void updateMember(Member m, Map<String, byte[]> protocols, int rebalanceTimeoutMs, int sessionTimeoutMs,
                      Consumer<JoinGroupResponseData> callback) {
        m.protocols = new LinkedHashMap<>(protocols);
        m.rebalanceTimeoutMs = rebalanceTimeoutMs;
        m.sessionTimeoutMs = sessionTimeoutMs;
        if (callback != null && !m.isAwaitingJoin()) {
            numAwaitingJoin++;
        } else if (callback == null && m.isAwaitingJoin()) {
            numAwaitingJoin--;
        }
        m.awaitingJoin = callback;
    }

    /**
     * KIP-345: a static member's new incarnation takes the old one's place (its assignment and, if
     * it led, the leadership). The old incarnation's waiting JoinGroup and SyncGroup are answered
     * with {@code fencedJoin} / {@code fencedSync} first. The new member awaits nothing yet.
     */
    void replaceStaticMember(String oldMemberId, Member newMember, JoinGroupResponseData fencedJoin, SyncGroupResponseData fencedSync) {
        Member old = members.get(oldMemberId);
        if (old == null || !newMember.isStatic() || !oldMemberId.equals(staticMembers.get(newMember.groupInstanceId))) {
            throw new IllegalStateException("group " + groupId + ": " + oldMemberId + " is not the static member "
                    + newMember.groupInstanceId);
        }
        completeJoin(old, fencedJoin);
        completeSync(old, fencedSync);
        members.remove(oldMemberId);
        pendingSyncMembers.remove(oldMemberId);
        newMember.assignment = old.assignment;
        members.put(newMember.memberId, newMember);
        staticMembers.put(newMember.groupInstanceId, newMember.memberId);
        if (oldMemberId.equals(leaderId)) {
            leaderId = newMember.memberId;
        }
    }

    /** The member waits for the JoinGroup answer that completes the rebalance. */
    void awaitJoin(Member m, Consumer<JoinGroupResponseData> callback) {
        if (m.isAwaitingJoin()) {
            throw new IllegalStateException("member " + m.memberId + " of " + groupId + " already awaits a join");
        }
        m.awaitingJoin = callback;
        numAwaitingJoin++;
    }

    /** Answers the member's waiting JoinGroup, if any, once. */
    void completeJoin(Member m, JoinGroupResponseData response) {
        if (m.awaitingJoin != null) {
            var cb = m.awaitingJoin;
            m.awaitingJoin = null;
            numAwaitingJoin--;
            cb.accept(response);
        }
    }

    /** The member sent its SyncGroup: it is no longer pending, and waits for the leader's assignment. */
    void awaitSync(Member m, Consumer<SyncGroupResponseData> callback) {
        m.awaitingSync = callback;
        pendingSyncMembers.remove(m.memberId);
    }

    /** The member sent its SyncGroup and is answered at once. */
    void syncReceived(String memberId) {
        pendingSyncMembers.remove(memberId);
    }

    /** Answers the member's waiting SyncGroup, if any, once. */
    void completeSync(Member m, SyncGroupResponseData response) {
        if (m.awaitingSync != null) {
            var cb = m.awaitingSync;
            m.awaitingSync = null;
            cb.accept(response);
        }
    }

    /** The leader's assignment: every member gets its part (empty when the leader gave it none). */
    void assign(Map<String, byte[]> assignment) {
        for (Member m : members.values()) {
            byte[] mine = assignment.get(m.memberId);
            m.assignment = mine == null ? new byte[0] : mine;
        }
    }

    /** A rebalance restarts: assignments are void and members waiting on SyncGroup get {@code response}. */
    void resetAssignments(SyncGroupResponseData response) {
        for (Member m : members.values()) {
            m.assignment = new byte[0];
            completeSync(m, response);
        }
    }

    /** Members that did not send SyncGroup for the current generation (read-only). */
    Set<String> pendingSyncMemberIds() {
        return Collections.unmodifiableSet(pendingSyncMembers);
    }

    boolean hasAllMembersJoined() {
        return members.size() == numAwaitingJoin && pendingMembers.isEmpty();
    }

    List<Member> notYetRejoined() {
        return members.values().stream().filter(m -> !m.isAwaitingJoin()).toList();
    }

    int rebalanceTimeoutMs() {
        return members.values().stream().mapToInt(m -> m.rebalanceTimeoutMs).max().orElse(0);
    }

    /** A new member may join if it speaks the group's protocol type and shares a protocol with every member. */
    boolean supportsProtocols(String memberProtocolType, Set<String> memberProtocols) {
        if (is(GroupState.EMPTY)) {
            return memberProtocolType != null && !memberProtocolType.isEmpty() && !memberProtocols.isEmpty();
        }
        if (!memberProtocolType.equals(protocolType)) {
            return false;
        }
        if (members.isEmpty()) {
            // Its last member left mid-rebalance and the rebalance has not emptied it yet. Apache
            // counts, per protocol, the members supporting it against the member count: with no
            // members every protocol passes. A restarted Streams instance joining in that moment
            // was refused INCONSISTENT_GROUP_PROTOCOL, which is fatal to the client.
            return !memberProtocols.isEmpty();
        }
        Set<String> common = candidateProtocols();
        common.retainAll(memberProtocols);
        return !common.isEmpty();
    }

    /** Protocols every member supports. */
    Set<String> candidateProtocols() {
        Set<String> common = null;
        for (Member m : members.values()) {
            if (common == null) {
                common = new HashSet<>(m.protocols.keySet());
            } else {
                common.retainAll(m.protocols.keySet());
            }
        }
        return common == null ? new HashSet<>() : common;
    }

    /** Apache's vote: each member votes for its most preferred candidate; most votes wins (ties: first seen). */
    String selectProtocol() {
        Set<String> candidates = candidateProtocols();
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (Member m : members.values()) {
            for (String p : m.protocols.keySet()) {
                if (candidates.contains(p)) {
                    votes.merge(p, 1, Integer::sum);
                    break;
                }
            }
        }
        return votes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
                .orElseThrow(() -> new IllegalStateException("no protocol shared by all members of " + groupId));
    }

    /** If the leader has not rejoined, any member that has becomes leader. False when nobody rejoined. */
    boolean maybeElectNewJoinedLeader() {
        if (leaderId != null) {
            Member leader = members.get(leaderId);
            if (leader != null && leader.isAwaitingJoin()) {
                return true;
            }
            for (Member m : members.values()) {
                if (m.isAwaitingJoin()) {
                    leaderId = m.memberId;
                    return true;
                }
            }
            return false;
        }
        return false;
    }

    void initNextGeneration(long now) {
        generationId++;
        if (!members.isEmpty()) {
            protocolName = selectProtocol();
            transitionTo(GroupState.COMPLETING_REBALANCE, now);
        } else {
            protocolName = null;
            transitionTo(GroupState.EMPTY, now);
        }
        pendingSyncMembers.clear();
        pendingSyncMembers.addAll(members.keySet());
    }

    List<JoinGroupResponseData.JoinGroupResponseMember> currentMemberMetadata() {
        List<JoinGroupResponseData.JoinGroupResponseMember> out = new ArrayList<>();
        for (Member m : members.values()) {
            out.add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(m.memberId)
                    .setGroupInstanceId(m.groupInstanceId).setMetadata(m.metadata(protocolName)));
        }
        return out;
    }

    boolean isConsumerGroup() {
        return "consumer".equals(protocolType);
    }

    /** Topics the members subscribe to, from their consumer-protocol metadata; empty when not known. */
    Set<String> subscribedTopics() {
        Set<String> topics = new HashSet<>();
        if (!isConsumerGroup() || protocolName == null) {
            return topics;
        }
        for (Member m : members.values()) {
            byte[] meta = m.protocols.get(protocolName);
            if (meta == null) {
                continue;
            }
            try {
                topics.addAll(ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(meta)).topics());
            } catch (RuntimeException e) {
                // Unparsable metadata: treat as subscribed to nothing we can name, as Apache does.
            }
        }
        return topics;
    }
}
