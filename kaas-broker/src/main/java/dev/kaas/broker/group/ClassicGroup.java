package dev.kaas.broker.group;

import java.nio.ByteBuffer;
import java.util.ArrayList;
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

/**
 * One classic group: membership (memory only) and committed offsets (persisted by the shard).
 * Mirrors Apache's {@code GroupMetadata}; only {@link GroupShard} mutates it, on its slot's thread.
 */
final class ClassicGroup {
    final String groupId;
    private GroupState state;
    long stateTimestamp;
    int generationId;
    String protocolType;
    String protocolName;
    String leaderId;
    boolean newMemberAdded;
    final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    final Set<String> pendingMembers = new HashSet<>();
    final Set<String> pendingSyncMembers = new HashSet<>();
    final Map<String, String> staticMembers = new HashMap<>();
    final TreeMap<TopicPartition, CommittedOffset> offsets = new TreeMap<>(
            (a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
    int numAwaitingJoin;

    ClassicGroup(String groupId, GroupState state, long now) {
        this.groupId = groupId;
        this.state = state;
        this.stateTimestamp = now;
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

    void invokeJoin(Member m, JoinGroupResponseData response) {
        if (m.awaitingJoin != null) {
            var cb = m.awaitingJoin;
            m.awaitingJoin = null;
            numAwaitingJoin--;
            cb.accept(response);
        }
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
