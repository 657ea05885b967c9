package dev.kaas.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The classic group state machine, driven by a mock clock: no sockets, no sleeps. */
class GroupShardTest {
    static final String G = "group";
    static final int SESSION = 10_000;
    static final int REBALANCE = 30_000;

    MockScheduler scheduler;
    InMemoryStore store;
    GroupShard shard;

    static final class InMemoryStore implements GroupStore {
        final Map<String, StoredGroup> groups = new HashMap<>();
        int saves;
        /** Thrown by every save while set: a volume that refuses writes, or a slot taken over. */
        Exception failing;

        @Override
        public Map<String, StoredGroup> loadAll() {
            return new HashMap<>(groups);
        }

        @Override
        public void save(StoredGroup group) throws java.io.IOException {
            if (failing instanceof java.io.IOException io) {
                throw io;
            }
            if (failing instanceof RuntimeException r) {
                throw r;
            }
            saves++;
            groups.put(group.groupId(), group);
        }

        @Override
        public void delete(String groupId) {
            groups.remove(groupId);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        scheduler = new MockScheduler();
        store = new InMemoryStore();
        shard = newShard();
        shard.load();
    }

    final GroupCounters counters = new GroupCounters();

    GroupShard newShard() {
        return new GroupShard(0, GroupConfig.defaults(), scheduler.clock::get, scheduler, store,
                tp -> tp.topic().startsWith("t") && tp.partition() < 6, counters);
    }

    static byte[] subscription(String... topics) {
        return Utils.toArray(ConsumerProtocol.serializeSubscription(new ConsumerPartitionAssignor.Subscription(List.of(topics))));
    }

    static JoinGroupRequestData joinRequest(String memberId, String instanceId, String... protocols) {
        JoinGroupRequestData.JoinGroupRequestProtocolCollection ps = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        for (String p : protocols) {
            ps.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName(p).setMetadata(subscription("t1")));
        }
        return new JoinGroupRequestData().setGroupId(G).setMemberId(memberId).setGroupInstanceId(instanceId)
                .setSessionTimeoutMs(SESSION).setRebalanceTimeoutMs(REBALANCE).setProtocolType("consumer").setProtocols(ps);
    }

    AtomicReference<JoinGroupResponseData> join(String memberId, String instanceId, String... protocols) {
        AtomicReference<JoinGroupResponseData> ref = new AtomicReference<>();
        shard.join(joinRequest(memberId, instanceId, protocols.length == 0 ? new String[] {"range"} : protocols),
                new GroupShard.JoinContext("client", "/127.0.0.1", true), ref::set);
        return ref;
    }

    /** KIP-394 handshake plus the real join; returns the pending second join. */
    AtomicReference<JoinGroupResponseData> joinNew() {
        var first = join("", null);
        assertThat(Errors.forCode(first.get().errorCode())).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        return join(first.get().memberId(), null);
    }

    AtomicReference<SyncGroupResponseData> sync(String memberId, int generation, Map<String, byte[]> assignments) {
        AtomicReference<SyncGroupResponseData> ref = new AtomicReference<>();
        SyncGroupRequestData req = new SyncGroupRequestData().setGroupId(G).setMemberId(memberId).setGenerationId(generation);
        assignments.forEach((m, a) -> req.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(m).setAssignment(a)));
        shard.sync(req, ref::set);
        return ref;
    }

    /** Two members through a full first rebalance; returns their join responses. */
    List<JoinGroupResponseData> stableGroupOfTwo() {
        var a = joinNew();
        var b = joinNew();
        assertThat(a.get()).isNull();
        // The second member arrived during the initial delay: Apache extends it once more.
        scheduler.advance(3_000);
        assertThat(a.get()).isNull();
        scheduler.advance(3_000);
        assertThat(a.get()).isNotNull();
        assertThat(b.get()).isNotNull();
        JoinGroupResponseData leader = a.get().leader().equals(a.get().memberId()) ? a.get() : b.get();
        JoinGroupResponseData follower = leader == a.get() ? b.get() : a.get();
        var followerSync = sync(follower.memberId(), follower.generationId(), Map.of());
        assertThat(followerSync.get()).as("a follower waits for the leader").isNull();
        sync(leader.memberId(), leader.generationId(), Map.of(leader.memberId(), new byte[] {1}, follower.memberId(), new byte[] {2}));
        assertThat(followerSync.get().assignment()).containsExactly(2);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);
        return List.of(leader, follower);
    }

    @Test
    void aCoordinatorTakingTheSlotOverKeepsTheGroupStableAndItsMembersTheirGeneration() throws Exception {
        // Given a group of two through a rebalance, saved before its members heard their assignments
        List<JoinGroupResponseData> members = stableGroupOfTwo();
        JoinGroupResponseData leader = members.get(0);
        JoinGroupResponseData follower = members.get(1);
        GroupStore.StoredMembership saved = store.groups.get(G).membership();
        assertThat(saved.generationId()).isEqualTo(leader.generationId());
        assertThat(saved.leaderId()).isEqualTo(leader.memberId());
        assertThat(saved.members()).extracting(GroupStore.StoredMember::memberId)
                .containsExactlyInAnyOrder(leader.memberId(), follower.memberId());

        // When another coordinator takes the slot over from the same store (the old one closed)
        shard.close();
        shard = newShard();
        shard.load();

        // Then the group is Stable at that generation: heartbeats and commits of its members succeed, no rebalance
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);
        assertThat(shard.heartbeat(G, leader.memberId(), null, leader.generationId())).isEqualTo(Errors.NONE);
        TopicPartition tp = new TopicPartition("t1", 0);
        assertThat(shard.commit(G, leader.memberId(), null, leader.generationId(), List.of(new GroupShard.OffsetToCommit(tp, 7, -1, "")), -1))
                .containsEntry(tp, Errors.NONE);
        // (the leader's assignment came back with it)
        assertThat(sync(leader.memberId(), leader.generationId(), Map.of()).get().assignment()).containsExactly(1);
        GroupStore.StoredMembership kept = store.groups.get(G).membership();
        assertThat(kept.generationId()).as("a commit keeps the stored membership").isEqualTo(leader.generationId());
        assertThat(kept.members()).extracting(GroupStore.StoredMember::memberId).containsExactlyInAnyOrder(leader.memberId(), follower.memberId());
        assertThat(kept.members().stream().map(m -> m.assignment()[0]).toList()).containsExactlyInAnyOrder((byte) 1, (byte) 2);

        // And the follower, never heard from at the new coordinator, expires there, which starts a rebalance
        for (int i = 0; i < 4; i++) {
            scheduler.advance(SESSION / 2);
            assertThat(shard.heartbeat(G, leader.memberId(), null, leader.generationId())).isIn(Errors.NONE, Errors.REBALANCE_IN_PROGRESS);
        }
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
    }

    @Test
    void aLoadedGroupOverTheNewCoordinatorsGroupMaxSizeRebalances() throws Exception {
        stableGroupOfTwo();
        shard.close();
        GroupConfig d = GroupConfig.defaults();
        shard = new GroupShard(0, new GroupConfig(d.minSessionTimeoutMs(), d.maxSessionTimeoutMs(), d.initialRebalanceDelayMs(), 1,
                d.offsetsRetentionMs(), d.offsetMetadataMaxBytes(), d.offsetsRetentionCheckIntervalMs()), scheduler.clock::get, scheduler, store,
                tp -> true, counters);
        shard.load();
        assertThat(shard.stateOf(G)).as("Apache's onGroupLoaded: over group.max.size").isEqualTo(GroupState.PREPARING_REBALANCE);

        // The first member to rejoin stays, the second is turned away (Apache's acceptJoiningMember), and the group shrinks to one
        List<JoinGroupResponseData> members = List.copyOf(store.groups.get(G).membership().members().stream()
                .map(m -> new JoinGroupResponseData().setMemberId(m.memberId())).toList());
        var first = join(members.get(0).memberId(), null);
        var second = join(members.get(1).memberId(), null);
        assertThat(Errors.forCode(second.get().errorCode())).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        assertThat(first.get()).as("the rebalance completes with the member that stayed").isNotNull();
        assertThat(first.get().members()).hasSize(1);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.COMPLETING_REBALANCE);
    }

    @Test
    void aSyncWhoseAssignmentIsNotSavedAnswersTheStoreErrorAndTheGroupRebalances() {
        // Given two members through their join, the store refusing writes when the leader syncs
        var a = joinNew();
        var b = joinNew();
        scheduler.advance(6_000);
        JoinGroupResponseData leader = a.get().leader().equals(a.get().memberId()) ? a.get() : b.get();
        JoinGroupResponseData follower = leader == a.get() ? b.get() : a.get();
        var followerSync = sync(follower.memberId(), follower.generationId(), Map.of());
        store.failing = new java.io.IOException("volume refused the write");

        // When the leader syncs late in the follower's session
        scheduler.advance(SESSION - 1_000);
        var leaderSync = sync(leader.memberId(), leader.generationId(), Map.of(leader.memberId(), new byte[] {1}, follower.memberId(), new byte[] {2}));

        // Then nobody is told an assignment that is not saved: both hear the error, and the group rebalances
        assertThat(Errors.forCode(leaderSync.get().errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(Errors.forCode(followerSync.get().errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(store.groups).doesNotContainKey(G);
        assertThat(counters.completedRebalances()).isZero();
        // And the members answered restart their session timers (Apache's propagateAssignment): the follower has time to rejoin
        scheduler.advance(2_000);
        assertThat(shard.heartbeat(G, follower.memberId(), null, follower.generationId())).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void aSyncAfterTheSlotWasTakenOverAnswersNotCoordinator() {
        var a = joinNew();
        scheduler.advance(6_000);
        store.failing = new org.apache.kafka.common.errors.NotCoordinatorException("taken over");
        var s = sync(a.get().memberId(), a.get().generationId(), Map.of(a.get().memberId(), new byte[] {1}));
        assertThat(Errors.forCode(s.get().errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
    }

    @Test
    void aStaticMembersNewIncarnationIsSavedAndOneThatCouldNotBeIsTurnedBackToTheOld() {
        // Given a Stable group of one static member
        var a = join("", "instance-a");
        scheduler.advance(3_000);
        String oldId = a.get().memberId();
        sync(oldId, 1, Map.of(oldId, new byte[] {9}));

        // When its new incarnation joins while the store refuses writes
        store.failing = new java.io.IOException("volume refused the write");
        var refused = join("", "instance-a");

        // Then it is told so, and the old incarnation is still the member
        assertThat(Errors.forCode(refused.get().errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(shard.heartbeat(G, oldId, "instance-a", 1)).isEqualTo(Errors.NONE);
        assertThat(store.groups.get(G).membership().members()).extracting(GroupStore.StoredMember::memberId).containsExactly(oldId);

        // And once the store takes writes, a new incarnation is saved before it hears its member id
        store.failing = null;
        var again = join("", "instance-a");
        assertThat(Errors.forCode(again.get().errorCode())).isEqualTo(Errors.NONE);
        assertThat(store.groups.get(G).membership().members()).extracting(GroupStore.StoredMember::memberId)
                .containsExactly(again.get().memberId());
        assertThat(store.groups.get(G).membership().members().get(0).assignment()).containsExactly(9);
    }

    @Test
    void aGroupThatEmptiedIsLoadedEmptyByTheNextCoordinatorWithItsOffsets() throws Exception {
        // Given a stable group that committed, then both members left and the rebalance completed empty
        List<JoinGroupResponseData> members = stableGroupOfTwo();
        TopicPartition tp = new TopicPartition("t1", 1);
        shard.commit(G, members.get(0).memberId(), null, members.get(0).generationId(), List.of(new GroupShard.OffsetToCommit(tp, 3, -1, "")), -1);
        shard.leave(G, List.of(new GroupShard.Leaving(members.get(0).memberId(), null, "done"),
                new GroupShard.Leaving(members.get(1).memberId(), null, "done")));
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.EMPTY);
        assertThat(store.groups.get(G).membership().members()).as("the file names no member any more").isEmpty();

        // When another coordinator takes the slot over
        shard.close();
        shard = newShard();
        shard.load();

        // Then the group is Empty, at the generation it reached, with its offsets; the old members are unknown there
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.EMPTY);
        assertThat(shard.heartbeat(G, members.get(0).memberId(), null, members.get(0).generationId())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(shard.summaries().get(0).offsets()).containsEntry(tp, 3L);
    }

    @Test
    void aRebalanceIsCountedWhenTheLeadersSyncMakesTheGroupStableAndSummariesShowStateMembersAndOffsets() throws Exception {
        // Given a group of two through its first rebalance: one completed rebalance, not one per sync
        List<JoinGroupResponseData> members = stableGroupOfTwo();
        assertThat(counters.completedRebalances()).isEqualTo(1);

        // When the leader commits an offset
        JoinGroupResponseData leader = members.get(0);
        TopicPartition tp = new TopicPartition("t1", 2);
        shard.commit(G, leader.memberId(), null, leader.generationId(), List.of(new GroupShard.OffsetToCommit(tp, 42, -1, "")), -1);

        // Then the summary shows it, with the group's state and size
        assertThat(shard.summaries()).hasSize(1);
        GroupShard.GroupSummary summary = shard.summaries().get(0);
        assertThat(summary).extracting(GroupShard.GroupSummary::groupId, GroupShard.GroupSummary::state, GroupShard.GroupSummary::protocolType,
                GroupShard.GroupSummary::members, GroupShard.GroupSummary::offsets).containsExactly(G, GroupState.STABLE, "consumer", 2, Map.of(tp, 42L));
        assertThat(summary.memberList()).as("each member with the assignment the leader gave it (the group is Stable)")
                .extracting(m -> m.memberId() + " " + m.clientId() + " " + m.clientHost() + " " + java.util.Arrays.toString(m.assignment()))
                .containsExactlyInAnyOrder(leader.memberId() + " client /127.0.0.1 [1]", members.get(1).memberId() + " client /127.0.0.1 [2]");
        assertThat(shard.census()).isEqualTo(new GroupShard.Census(Map.of(GroupState.STABLE, 1), 1));
        assertThat(counters.offsetCommits()).isEqualTo(1);

        // And a rebalance that has not completed is not counted
        joinNew();
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(counters.completedRebalances()).isEqualTo(1);
    }

    @Test
    void aNewMemberMustFirstAskForItsMemberId() {
        var r = join("", null);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        assertThat(r.get().memberId()).startsWith("client-");
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.EMPTY);
        // The pending id expires after the session timeout if never used.
        scheduler.advance(SESSION + 1);
        assertThat(Errors.forCode(join(r.get().memberId(), null).get().errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void theFirstRebalanceWaitsTheInitialDelayThenGoesThroughCompletingToStable() {
        var a = joinNew();
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        scheduler.advance(2_999);
        assertThat(a.get()).isNull();
        scheduler.advance(1);
        assertThat(a.get().generationId()).isEqualTo(1);
        assertThat(a.get().leader()).isEqualTo(a.get().memberId());
        assertThat(a.get().members()).hasSize(1);
        assertThat(a.get().protocolName()).isEqualTo("range");
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.COMPLETING_REBALANCE);
        var s = sync(a.get().memberId(), 1, Map.of(a.get().memberId(), new byte[] {7}));
        assertThat(s.get().assignment()).containsExactly(7);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);
    }

    @Test
    void membersJoiningDuringTheInitialDelayExtendItUpToTheRebalanceTimeout() {
        var a = joinNew();
        scheduler.advance(2_000);
        var b = joinNew();
        scheduler.advance(1_500);
        assertThat(a.get()).as("a new member extended the delay").isNull();
        scheduler.advance(3_000);
        assertThat(a.get()).isNotNull();
        assertThat(b.get().generationId()).isEqualTo(1);
        assertThat(a.get().members().size() + b.get().members().size()).isEqualTo(2);
    }

    @Test
    void onlyTheLeaderGetsTheMemberListAndFollowersGetTheLeadersAssignment() {
        var members = stableGroupOfTwo();
        assertThat(members.get(0).members()).hasSize(2);
        assertThat(members.get(1).members()).isEmpty();
    }

    @Test
    void heartbeatsAnswerByStateAndCheckGenerationAndMember() {
        var members = stableGroupOfTwo();
        String leader = members.get(0).memberId();
        assertThat(shard.heartbeat(G, leader, null, 1)).isEqualTo(Errors.NONE);
        assertThat(shard.heartbeat(G, leader, null, 0)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(shard.heartbeat(G, "stranger", null, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(shard.heartbeat("", leader, null, 1)).isEqualTo(Errors.INVALID_GROUP_ID);
        join(leader, null);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(shard.heartbeat(G, members.get(1).memberId(), null, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void aSilentMemberIsRemovedAfterItsSessionTimeoutAndTheRestRebalance() {
        var members = stableGroupOfTwo();
        String leader = members.get(0).memberId();
        String follower = members.get(1).memberId();
        for (int i = 0; i < 3; i++) {
            scheduler.advance(SESSION / 2);
            assertThat(shard.heartbeat(G, leader, null, 1)).isIn(Errors.NONE, Errors.REBALANCE_IN_PROGRESS);
        }
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        var rejoin = join(leader, null);
        assertThat(rejoin.get().generationId()).isEqualTo(2);
        assertThat(rejoin.get().members()).extracting(m -> m.memberId()).containsExactly(leader);
        assertThat(shard.heartbeat(G, follower, null, 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aMemberThatDoesNotRejoinWithinTheRebalanceTimeoutIsDropped() {
        var members = stableGroupOfTwo();
        var rejoin = join(members.get(0).memberId(), null);
        // The follower stays alive (it heartbeats) but never rejoins.
        for (int t = 0; t < REBALANCE - 5_000; t += 5_000) {
            scheduler.advance(5_000);
            assertThat(shard.heartbeat(G, members.get(1).memberId(), null, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        }
        scheduler.advance(4_999);
        assertThat(rejoin.get()).isNull();
        scheduler.advance(1);
        assertThat(rejoin.get().generationId()).isEqualTo(2);
        assertThat(rejoin.get().members()).hasSize(1);
    }

    @Test
    void syncErrorsFollowTheProtocol() {
        var members = stableGroupOfTwo();
        String follower = members.get(1).memberId();
        assertThat(Errors.forCode(sync(follower, 5, Map.of()).get().errorCode())).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(Errors.forCode(sync("nobody", 1, Map.of()).get().errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        SyncGroupRequestData wrongProtocol = new SyncGroupRequestData().setGroupId(G).setMemberId(follower).setGenerationId(1)
                .setProtocolType("consumer").setProtocolName("roundrobin");
        AtomicReference<SyncGroupResponseData> r = new AtomicReference<>();
        shard.sync(wrongProtocol, r::set);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        join(members.get(0).memberId(), null);
        assertThat(Errors.forCode(sync(follower, 1, Map.of()).get().errorCode())).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void aRebalanceDuringCompletingAnswersWaitingSyncsWithRebalanceInProgress() {
        var a = joinNew();
        var b = joinNew();
        scheduler.advance(6_000);
        JoinGroupResponseData follower = a.get().leader().equals(a.get().memberId()) ? b.get() : a.get();
        var waiting = sync(follower.memberId(), 1, Map.of());
        joinNew();
        assertThat(Errors.forCode(waiting.get().errorCode())).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
    }

    @Test
    void membersThatNeverSyncAreRemovedAfterTheRebalanceTimeout() {
        var a = joinNew();
        var b = joinNew();
        scheduler.advance(6_000);
        JoinGroupResponseData leader = a.get().leader().equals(a.get().memberId()) ? a.get() : b.get();
        JoinGroupResponseData follower = leader == a.get() ? b.get() : a.get();
        sync(leader.memberId(), 1, Map.of(leader.memberId(), new byte[0], follower.memberId(), new byte[0]));
        for (int t = 0; t < REBALANCE; t += 5_000) {
            scheduler.advance(5_000);
            shard.heartbeat(G, follower.memberId(), null, 1);
            shard.heartbeat(G, leader.memberId(), null, 1);
        }
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(shard.group(G).has(follower.memberId())).isFalse();
    }

    @Test
    void inconsistentProtocolsAreRejected() {
        stableGroupOfTwo();
        JoinGroupRequestData other = joinRequest("", null, "roundrobin");
        AtomicReference<JoinGroupResponseData> r = new AtomicReference<>();
        shard.join(other, new GroupShard.JoinContext("c", "/h", false), r::set);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        JoinGroupRequestData wrongType = joinRequest("", null, "range").setProtocolType("connect");
        shard.join(wrongType, new GroupShard.JoinContext("c", "/h", false), r::set);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
    }

    @Test
    void sessionTimeoutsOutsideTheBrokerRangeAreRejected() {
        AtomicReference<JoinGroupResponseData> r = new AtomicReference<>();
        shard.join(joinRequest("", null, "range").setSessionTimeoutMs(1000), new GroupShard.JoinContext("c", "/h", true), r::set);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        shard.join(joinRequest("", null, "range").setGroupId(""), new GroupShard.JoinContext("c", "/h", true), r::set);
        assertThat(Errors.forCode(r.get().errorCode())).isEqualTo(Errors.INVALID_GROUP_ID);
    }

    @Test
    void aStaticMemberRestartingWithTheSameProtocolsReplacesItselfWithoutARebalance() {
        var a = join("", "instance-a");
        scheduler.advance(3_000);
        String oldId = a.get().memberId();
        sync(oldId, 1, Map.of(oldId, new byte[] {9}));
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);

        var again = join("", "instance-a");
        assertThat(Errors.forCode(again.get().errorCode())).isEqualTo(Errors.NONE);
        assertThat(again.get().memberId()).isNotEqualTo(oldId);
        assertThat(again.get().generationId()).isEqualTo(1);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);
        assertThat(sync(again.get().memberId(), 1, Map.of()).get().assignment()).containsExactly(9);
        assertThat(shard.heartbeat(G, oldId, "instance-a", 1)).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(shard.heartbeat(G, again.get().memberId(), "instance-a", 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void aStaticMemberIsNotDroppedForMissingARebalance() {
        var a = join("", "instance-a");
        var b = join("", "instance-b");
        scheduler.advance(6_000);
        String leader = a.get().leader();
        sync(a.get().memberId(), 1, Map.of());
        sync(b.get().memberId(), 1, Map.of());
        boolean aLeads = leader.equals(a.get().memberId());
        var rejoin = join(leader, aLeads ? "instance-a" : "instance-b");
        String other = aLeads ? b.get().memberId() : a.get().memberId();
        for (int t = 0; t < REBALANCE; t += 5_000) {
            scheduler.advance(5_000);
            shard.heartbeat(G, other, aLeads ? "instance-b" : "instance-a", 1);
        }
        assertThat(rejoin.get().members()).as("the static member that did not rejoin stays").hasSize(2);
    }

    @Test
    void leaveGroupRemovesMembersByIdOrInstanceAndRebalances() {
        var members = stableGroupOfTwo();
        var result = shard.leave(G, List.of(new GroupShard.Leaving(members.get(1).memberId(), null, "shutting down"),
                new GroupShard.Leaving("ghost", null, null), new GroupShard.Leaving("", "no-such-instance", null)));
        assertThat(result.getKey()).isEqualTo(Errors.NONE);
        assertThat(result.getValue()).containsExactly(Errors.NONE, Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
        var rejoin = join(members.get(0).memberId(), null);
        assertThat(rejoin.get().generationId()).as("the last member rejoined: no wait").isEqualTo(2);
    }

    /*
     * Apache 3.7 (GroupCoordinator.prepareRebalance → DelayedJoin.tryComplete): with no member left to wait for,
     * the join completes at once, initNextGeneration finds no members and the group is Empty (generation 3); it
     * stays Empty until the offsets-retention cleanup.
     */
    @Test
    void theLastMemberLeavingEmptiesTheGroupAtOnce() {
        var members = stableGroupOfTwo();
        shard.leave(G, List.of(new GroupShard.Leaving(members.get(1).memberId(), null, null)));
        join(members.get(0).memberId(), null);
        shard.leave(G, List.of(new GroupShard.Leaving(members.get(0).memberId(), null, null)));
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.EMPTY);
        assertThat(shard.describe(G).state()).isEqualTo(GroupState.EMPTY);
    }

    @Test
    void simpleGroupsCommitWithoutMembershipAndOffsetsSurviveAReload() throws Exception {
        var tp = new TopicPartition("t1", 0);
        var result = shard.commit("simple", "", null, -1, List.of(new GroupShard.OffsetToCommit(tp, 42, 3, "meta")), -1);
        assertThat(result).containsEntry(tp, Errors.NONE);
        assertThat(store.saves).isEqualTo(1);
        GroupShard reloaded = newShard();
        reloaded.load();
        CommittedOffset o = reloaded.fetch("simple", List.of(tp)).get(tp);
        assertThat(o.offset()).isEqualTo(42);
        assertThat(o.leaderEpoch()).isEqualTo(3);
        assertThat(o.metadata()).isEqualTo("meta");
        assertThat(reloaded.describe("simple").state()).isEqualTo(GroupState.EMPTY);
    }

    @Test
    void commitsAreCheckedAgainstMembershipAndGeneration() throws Exception {
        var members = stableGroupOfTwo();
        var tp = new TopicPartition("t1", 1);
        var ok = List.of(new GroupShard.OffsetToCommit(tp, 1, -1, ""));
        assertThat(shard.commit(G, members.get(0).memberId(), null, 1, ok, -1)).containsEntry(tp, Errors.NONE);
        assertThat(shard.commit(G, members.get(0).memberId(), null, 0, ok, -1)).containsEntry(tp, Errors.ILLEGAL_GENERATION);
        assertThat(shard.commit(G, "stranger", null, 1, ok, -1)).containsEntry(tp, Errors.UNKNOWN_MEMBER_ID);
        assertThat(shard.commit(G, "", null, -1, ok, -1)).as("only members commit to a live group").containsEntry(tp, Errors.UNKNOWN_MEMBER_ID);
        assertThat(shard.commit("other", "m", null, 3, ok, -1)).containsEntry(tp, Errors.ILLEGAL_GENERATION);
        var unknown = new TopicPartition("nope", 0);
        var big = new TopicPartition("t1", 2);
        var mixed = shard.commit(G, members.get(0).memberId(), null, 1, List.of(new GroupShard.OffsetToCommit(unknown, 1, -1, ""),
                new GroupShard.OffsetToCommit(big, 1, -1, "x".repeat(5000))), -1);
        assertThat(mixed).containsEntry(unknown, Errors.UNKNOWN_TOPIC_OR_PARTITION).containsEntry(big, Errors.OFFSET_METADATA_TOO_LARGE);
    }

    @Test
    void deleteGroupOnlyWhenEmptyAndOffsetDeleteRespectsSubscriptions() throws Exception {
        var members = stableGroupOfTwo();
        var t1 = new TopicPartition("t1", 0);
        var t2 = new TopicPartition("t2", 0);
        shard.commit(G, members.get(0).memberId(), null, 1, List.of(new GroupShard.OffsetToCommit(t1, 5, -1, ""),
                new GroupShard.OffsetToCommit(t2, 6, -1, "")), -1);
        assertThat(shard.deleteGroup(G)).isEqualTo(Errors.NON_EMPTY_GROUP);
        var del = shard.deleteOffsets(G, List.of(t1, t2));
        assertThat(del.partitions()).containsEntry(t1, Errors.GROUP_SUBSCRIBED_TO_TOPIC).containsEntry(t2, Errors.NONE);
        assertThat(shard.fetch(G, List.of(t1, t2)).get(t2)).isNull();
        assertThat(shard.deleteGroup("missing")).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        shard.leave(G, List.of(new GroupShard.Leaving(members.get(0).memberId(), null, null),
                new GroupShard.Leaving(members.get(1).memberId(), null, null)));
        scheduler.advance(REBALANCE);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.EMPTY);
        assertThat(shard.deleteGroup(G)).isEqualTo(Errors.NONE);
        assertThat(store.groups).doesNotContainKey(G);
    }

    @Test
    void offsetsOfAnEmptyGroupExpireAfterTheRetention() throws Exception {
        var tp = new TopicPartition("t1", 0);
        shard.commit("simple", "", null, -1, List.of(new GroupShard.OffsetToCommit(tp, 1, -1, "")), -1);
        scheduler.advance(GroupConfig.defaults().offsetsRetentionMs() - 1);
        shard.expireOffsets();
        assertThat(shard.fetch("simple", List.of(tp)).get(tp)).isNotNull();
        scheduler.advance(1);
        shard.expireOffsets();
        assertThat(shard.fetch("simple", List.of(tp)).get(tp)).isNull();
        assertThat(store.groups).isEmpty();
        assertThat(shard.describe("simple").state()).isEqualTo(GroupState.DEAD);
    }

    @Test
    void listAndDescribeReportStatesAsApacheNamesThem() {
        var members = stableGroupOfTwo();
        assertThat(shard.list(Set.of())).extracting(GroupShard.GroupDescription::groupId).containsExactly(G);
        assertThat(shard.list(Set.of(GroupState.EMPTY))).isEmpty();
        var d = shard.describe(G);
        assertThat(d.state().wireName()).isEqualTo("Stable");
        assertThat(d.protocolName()).isEqualTo("range");
        assertThat(d.members()).hasSize(2).allSatisfy(m -> assertThat(m.clientHost()).isEqualTo("/127.0.0.1"));
        assertThat(shard.describe("nope").state()).isEqualTo(GroupState.DEAD);
        assertThat(members).hasSize(2);
    }

    @Test
    void losingTheSlotAnswersWaitingMembersWithNotCoordinator() {
        var pending = joinNew();
        shard.close();
        assertThat(Errors.forCode(pending.get().errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(shard.heartbeat(G, "x", null, 1)).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(scheduler.keys()).isEmpty();
    }

    @Test
    void groupMaxSizeRefusesNewMembersButNotKnownOnes() {
        shard = new GroupShard(0, new GroupConfig(6_000, 1_800_000, 3_000, 2, 7L * 24 * 3600 * 1000, 4096, 600_000),
                scheduler.clock::get, scheduler, store, tp -> true);
        var members = stableGroupOfTwo();
        var third = join("", null);
        assertThat(Errors.forCode(third.get().errorCode())).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        var rejoin = join(members.get(0).memberId(), null);
        assertThat(rejoin.get()).as("a known member rejoins and waits for the rebalance").isNull();
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
    }

    @Test
    void aRejoinWithUnchangedMetadataDuringCompletingResendsTheJoinResponse() {
        var a = joinNew();
        scheduler.advance(3_000);
        String id = a.get().memberId();
        var again = join(id, null);
        assertThat(again.get().generationId()).isEqualTo(1);
        assertThat(again.get().members()).as("the leader gets the member list again").hasSize(1);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.COMPLETING_REBALANCE);
    }

    @Test
    void aFollowerRejoiningAStableGroupWithTheSameMetadataChangesNothing() {
        var members = stableGroupOfTwo();
        var again = join(members.get(1).memberId(), null);
        assertThat(Errors.forCode(again.get().errorCode())).isEqualTo(Errors.NONE);
        assertThat(again.get().generationId()).isEqualTo(1);
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.STABLE);
        var leaderAgain = join(members.get(0).memberId(), null);
        assertThat(leaderAgain.get()).as("the leader rejoining forces a rebalance").isNull();
        assertThat(shard.stateOf(G)).isEqualTo(GroupState.PREPARING_REBALANCE);
    }

    @Test
    void offsetsOfADeletedTopicAreDroppedAndAGroupLeftWithoutOffsetsIsGone() throws Exception {
        var kept = new TopicPartition("t1", 0);
        var gone = new TopicPartition("t2", 0);
        shard.commit("a", "", null, -1, List.of(new GroupShard.OffsetToCommit(kept, 1, -1, ""),
                new GroupShard.OffsetToCommit(gone, 2, -1, "")), -1);
        shard.commit("b", "", null, -1, List.of(new GroupShard.OffsetToCommit(gone, 3, -1, "")), -1);
        shard.removeOffsetsOfTopics(Set.of("t2"));
        assertThat(shard.fetch("a", null)).containsOnlyKeys(kept);
        assertThat(store.groups.get("a").offsets()).containsOnlyKeys(kept);
        assertThat(shard.describe("b").state()).isEqualTo(GroupState.DEAD);
        assertThat(store.groups).doesNotContainKey("b");
    }

    @Test
    void illegalTransitionsAreBugsNotNoOps() {
        ClassicGroup g = new ClassicGroup("x", GroupState.EMPTY, 0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> g.transitionTo(GroupState.STABLE, 0))
                .isInstanceOf(IllegalStateException.class);
    }
}
