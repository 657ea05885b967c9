package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.proto.AssignedTopic;
import dev.kaas.proto.CommittedOffsetStat;
import dev.kaas.proto.GroupStat;
import dev.kaas.proto.MemberStat;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import org.junit.jupiter.api.Test;

class ClusterStatsTest {
    static PartitionStat partition(String topic, int p, int epoch, long hw) {
        return PartitionStat.newBuilder().setTopic(topic).setPartition(p).setLeaderEpoch(epoch).setHighWatermark(hw).setLogStartOffset(2).build();
    }

    static GroupStat group(String id, String topic, int p, long committed) {
        return GroupStat.newBuilder().setGroupId(id).setState("Stable").setProtocolType("consumer").setMembers(1)
                .addOffsets(CommittedOffsetStat.newBuilder().setTopic(topic).setPartition(p).setOffset(committed)).build();
    }

    static final class Session implements BrokerSession {
        boolean open = true;

        public void sendAssignment(long version, long controllerEpoch, String json) {
        }

        public void nudge(int fromBroker) {
        }

        public void close(String reason) {
            open = false;
        }

        public void refuse(String reason) {
            open = false;
        }

        public void refuseForeign(String reason) {
            open = false;
        }

        @Override
        public boolean isOpen() {
            return open;
        }
    }

    final ClusterStats stats = new ClusterStats();
    final Session session1 = new Session();
    final Session session2 = new Session();

    @Test
    void lagIsTheLeadersHighWatermarkMinusTheCoordinatorsCommittedOffset() {
        // Given broker 1 coordinating group g, broker 2 leading t-0
        stats.report(1, session1, Stats.newBuilder().addGroups(group("g", "t", 0, 30)).addGroups(group("h", "u", 0, 4)).build());
        stats.report(2, session2, Stats.newBuilder().addPartitions(partition("t", 0, 3, 100)).build());

        // When
        ClusterStats.Snapshot s = stats.snapshot();

        // Then
        ClusterStats.GroupView g = s.groups().stream().filter(x -> x.groupId().equals("g")).findFirst().orElseThrow();
        assertThat(g.coordinator()).isEqualTo(1);
        assertThat(g.offsets()).containsExactly(new ClusterStats.OffsetView(new ClusterStats.PartitionKey("t", 0), 30, 70L));
        ClusterStats.GroupView h = s.groups().stream().filter(x -> x.groupId().equals("h")).findFirst().orElseThrow();
        assertThat(h.offsets().get(0).lag()).as("no leader reported u-0").isNull();
        assertThat(s.partitions().get(new ClusterStats.PartitionKey("t", 0)).leader()).isEqualTo(2);
    }

    @Test
    void aPartitionReportedByTwoBrokersIsTheHigherLeaderEpochs() {
        stats.report(1, session1, Stats.newBuilder().addPartitions(partition("t", 0, 7, 50)).addGroups(group("g", "t", 0, 10)).build());
        stats.report(2, session2, Stats.newBuilder().addPartitions(partition("t", 0, 6, 40)).build());

        ClusterStats.Snapshot s = stats.snapshot();

        assertThat(s.partitions().get(new ClusterStats.PartitionKey("t", 0)).leader()).isEqualTo(1);
        assertThat(s.groups().get(0).offsets().get(0).lag()).isEqualTo(40);
    }

    @Test
    void aReportReplacesTheLastAndGoesWithItsStreamButNotWithAnOlderOne() {
        stats.report(1, session1, Stats.newBuilder().addPartitions(partition("t", 0, 1, 5)).build());
        stats.report(1, session1, Stats.newBuilder().addPartitions(partition("t", 1, 1, 5)).setTruncated(true).build());
        assertThat(stats.snapshot().partitions()).containsOnlyKeys(new ClusterStats.PartitionKey("t", 1));
        assertThat(stats.snapshot().truncated()).isTrue();

        // A new stream of broker 1 reports; the old stream's end comes after: the report stays
        Session next = new Session();
        stats.report(1, next, Stats.newBuilder().addPartitions(partition("t", 2, 1, 5)).build());
        stats.gone(1, session1);
        assertThat(stats.snapshot().partitions()).containsOnlyKeys(new ClusterStats.PartitionKey("t", 2));

        stats.gone(1, next);
        assertThat(stats.snapshot().partitions()).isEmpty();
        assertThat(stats.snapshot().groups()).isEmpty();
    }

    @Test
    void aStreamTheControllerClosedStopsCountingAtOnce() {
        // Given broker 1's report, then its stream closed by the controller (a session timeout, a step-down): gRPC tells no one
        stats.report(1, session1, Stats.newBuilder().addPartitions(partition("t", 0, 1, 5)).addGroups(group("g", "t", 0, 1)).build());
        session1.close("no report within the broker session timeout");

        assertThat(stats.snapshot().partitions()).isEmpty();
        assertThat(stats.snapshot().groups()).isEmpty();
    }

    @Test
    void aGroupTwoBrokersReportIsTheLaterReportsAndLagIsNeverNegative() {
        // Given the group's old coordinator (broker 1) and its new one (broker 2), which reported later
        stats.report(1, session1, Stats.newBuilder().addGroups(group("g", "t", 0, 10)).build());
        stats.report(2, session2, Stats.newBuilder().addGroups(group("g", "t", 0, 25)).addPartitions(partition("t", 0, 1, 20)).build());

        ClusterStats.GroupView g = stats.snapshot().groups().get(0);

        assertThat(stats.snapshot().groups()).hasSize(1);
        assertThat(g.coordinator()).isEqualTo(2);
        assertThat(g.offsets().get(0).committed()).isEqualTo(25);
        // The commit was reported after the high watermark it passed: not -5
        assertThat(g.offsets().get(0).lag()).isZero();
    }

    @Test
    void aGroupsMembersAreCarriedWithTheirAssignment() {
        GroupStat g = group("g", "t", 0, 1).toBuilder().setMembers(2)
                .addMemberList(MemberStat.newBuilder().setMemberId("m-1").setClientId("c1").setClientHost("/10.0.0.1")
                        .addAssignment(AssignedTopic.newBuilder().setTopic("t").addPartitions(0).addPartitions(1)))
                .addMemberList(MemberStat.newBuilder().setMemberId("m-2").setGroupInstanceId("static-2").setClientId("c2").setClientHost("/10.0.0.2"))
                .build();
        stats.report(1, session1, Stats.newBuilder().addGroups(g).build());

        ClusterStats.GroupView view = stats.snapshot().groups().get(0);

        assertThat(view.members()).isEqualTo(2);
        assertThat(view.memberList()).containsExactly(
                new ClusterStats.MemberView("m-1", null, "c1", "/10.0.0.1", java.util.Map.of("t", java.util.List.of(0, 1))),
                new ClusterStats.MemberView("m-2", "static-2", "c2", "/10.0.0.2", java.util.Map.of()));
    }
}

