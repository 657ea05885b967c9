package dev.kaas.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** ClassicGroup keeps its own membership invariants: counts, indexes, leader, and callbacks answered once. */
class ClassicGroupTest {
    final ClassicGroup group = new ClassicGroup("g", GroupState.EMPTY, 0);
    final List<JoinGroupResponseData> joins = new ArrayList<>();
    final List<SyncGroupResponseData> syncs = new ArrayList<>();

    static Member member(String id, String instanceId) {
        return new Member(id, instanceId, "client", "/127.0.0.1", 30_000, 10_000, "consumer", Map.of("range", new byte[] {1}));
    }

    @Test
    void joinAnswersAreCountedAndGivenOnce() {
        // Given two members awaiting their JoinGroup answer
        Member a = member("a", null);
        Member b = member("b", null);
        group.add(a, joins::add);
        group.add(b, joins::add);
        assertThat(group.hasAllMembersJoined()).isTrue();

        // When a is answered twice and b leaves
        group.completeJoin(a, new JoinGroupResponseData());
        group.completeJoin(a, new JoinGroupResponseData());
        group.remove("b");

        // Then a got one answer, and nobody is counted as awaiting
        assertThat(joins).hasSize(1);
        assertThat(a.isAwaitingJoin()).isFalse();
        assertThat(group.hasAllMembersJoined()).as("one member, not awaiting").isFalse();
        group.awaitJoin(a, joins::add);
        assertThat(group.hasAllMembersJoined()).isTrue();
        assertThatThrownBy(() -> group.awaitJoin(a, joins::add)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void replacingAStaticMemberFencesTheOldOneAndKeepsItsPlace() {
        // Given a static leader awaiting both a JoinGroup and a SyncGroup answer, with an assignment
        Member old = member("old", "instance-1");
        group.add(old, joins::add);
        group.add(member("other", null), null);
        group.awaitSync(old, syncs::add);
        group.assign(Map.of("old", new byte[] {7}));

        // When its new incarnation replaces it
        Member fresh = member("new", "instance-1");
        group.replaceStaticMember("old", fresh, new JoinGroupResponseData().setErrorCode(Errors.FENCED_INSTANCE_ID.code()),
                new SyncGroupResponseData().setErrorCode(Errors.FENCED_INSTANCE_ID.code()));

        // Then the old one's waits are answered FENCED_INSTANCE_ID once, and the new one has its place
        assertThat(joins).extracting(JoinGroupResponseData::errorCode).containsExactly(Errors.FENCED_INSTANCE_ID.code());
        assertThat(syncs).extracting(SyncGroupResponseData::errorCode).containsExactly(Errors.FENCED_INSTANCE_ID.code());
        assertThat(group.memberIds()).containsExactlyInAnyOrder("new", "other");
        assertThat(group.staticMemberId("instance-1")).isEqualTo("new");
        assertThat(group.leaderId()).isEqualTo("new");
        assertThat(fresh.assignment).containsExactly(7);
        group.awaitJoin(fresh, joins::add);
        group.awaitJoin(group.get("other"), joins::add);
        assertThat(group.hasAllMembersJoined()).as("the old member's wait no longer counts").isTrue();
    }

    @Test
    void aRestartedRebalanceAnswersWaitingSyncsOnceAndVoidsAssignments() {
        // Given a member waiting on SyncGroup with an assignment
        Member a = member("a", null);
        group.add(a, null);
        group.awaitSync(a, syncs::add);
        group.assign(Map.of("a", new byte[] {1}));

        // When the rebalance restarts twice
        group.resetAssignments(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
        group.resetAssignments(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));

        // Then
        assertThat(syncs).hasSize(1);
        assertThat(a.assignment).isEmpty();
        assertThat(a.isAwaitingSync()).isFalse();
    }

    @Test
    void aGroupWhoseLastMemberLeftMidRebalanceAcceptsAnyMemberOfItsProtocolType() {
        // Given a group preparing a rebalance whose last member has just been removed (session
        // expiry), before the rebalance completes and empties it: a restarted application's members
        // join in that moment (a Kafka Streams instance restarted after a SIGKILL did)
        Member a = member("a", null);
        group.add(a, null);
        group.transitionTo(GroupState.PREPARING_REBALANCE, 0);
        group.remove("a");

        // Then, as in Apache (every protocol is supported by all of zero members), a member of the
        // group's protocol type is accepted whatever its protocols, and only such a member
        assertThat(group.supportsProtocols("consumer", java.util.Set.of("stream"))).isTrue();
        assertThat(group.supportsProtocols("connect", java.util.Set.of("stream"))).isFalse();
        assertThat(group.supportsProtocols("consumer", java.util.Set.of())).isFalse();
    }
}
