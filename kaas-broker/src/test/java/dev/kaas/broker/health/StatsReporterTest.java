package dev.kaas.broker.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.group.GroupShard;
import dev.kaas.broker.group.GroupState;
import dev.kaas.proto.MemberStat;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class StatsReporterTest {
    static PartitionStat partition(String topic, int p) {
        return PartitionStat.newBuilder().setTopic(topic).setPartition(p).setHighWatermark(10).build();
    }

    static GroupShard.GroupSummary group(String id, int offsets) {
        Map<TopicPartition, Long> o = new LinkedHashMap<>();
        for (int i = 0; i < offsets; i++) {
            o.put(new TopicPartition("t", i), (long) i);
        }
        return new GroupShard.GroupSummary(id, GroupState.STABLE, "consumer", 1, o);
    }

    @Test
    void aReportCarriesEverythingWhenItFits() {
        Stats s = StatsReporter.stats(List.of(partition("t", 0), partition("t", 1)), List.of(group("g", 2)), 100);

        assertThat(s.getTruncated()).isFalse();
        assertThat(s.getPartitionsCount()).isEqualTo(2);
        assertThat(s.getGroups(0).getGroupId()).isEqualTo("g");
        assertThat(s.getGroups(0).getState()).isEqualTo("Stable");
        assertThat(s.getGroups(0).getOffsetsList()).extracting(o -> o.getPartition() + "=" + o.getOffset()).containsExactly("0=0", "1=1");
    }

    @Test
    void partitionsGroupsAndOffsetsAreEachBoundedAndTheCutIsFlagged() {
        List<PartitionStat> partitions = new ArrayList<>();
        List<GroupShard.GroupSummary> groups = new ArrayList<>();
        for (int i = 9; i >= 0; i--) {
            partitions.add(partition("t", i));
            groups.add(group("g" + i, 3));
        }

        Stats s = StatsReporter.stats(partitions, groups, 5);

        assertThat(s.getTruncated()).isTrue();
        assertThat(s.getPartitionsList()).as("the same ones every time: in name order").extracting(PartitionStat::getPartition)
                .containsExactly(0, 1, 2, 3, 4);
        assertThat(s.getGroups(0).getGroupId()).isEqualTo("g0");
        assertThat(s.getGroupsCount()).isLessThanOrEqualTo(5);
        assertThat(s.getGroupsList().stream().mapToInt(g -> g.getOffsetsCount()).sum()).isEqualTo(5);
    }

    @Test
    void aReportStaysUnderGrpcsMessageLimitWhateverTheNames() {
        String longName = "x".repeat(249);
        List<PartitionStat> partitions = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            partitions.add(partition(longName, i));
        }

        Stats s = StatsReporter.stats(partitions, List.of(), 100_000);

        assertThat(s.getTruncated()).isTrue();
        assertThat(s.getSerializedSize()).isLessThanOrEqualTo(StatsReporter.MAX_BYTES);
    }

    static GroupShard.MemberDescription member(String id, byte[] assignment) {
        return new GroupShard.MemberDescription(id, null, "client-" + id, "/127.0.0.1", new byte[0], assignment);
    }

    @Test
    void membersCarryTheirDecodedConsumerAssignmentAndAreBoundedToo() {
        byte[] assigned = org.apache.kafka.common.utils.Utils.toArray(ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(
                List.of(new TopicPartition("b", 1), new TopicPartition("a", 2), new TopicPartition("a", 0)))));
        List<GroupShard.MemberDescription> members = new ArrayList<>();
        members.add(member("m1", assigned));
        members.add(member("m2", new byte[] {0, 7, 1}));
        for (int i = 3; i <= 10; i++) {
            members.add(member("m" + i, new byte[0]));
        }
        var group = new GroupShard.GroupSummary("g", GroupState.STABLE, "consumer", members.size(), Map.of(), members);

        Stats s = StatsReporter.stats(List.of(), List.of(group), 5);

        var g = s.getGroups(0);
        assertThat(g.getMembers()).as("the count is every member's").isEqualTo(10);
        assertThat(g.getMemberListCount()).isEqualTo(5);
        assertThat(s.getTruncated()).isTrue();
        MemberStat m1 = g.getMemberList(0);
        assertThat(m1.getClientId()).isEqualTo("client-m1");
        assertThat(m1.getGroupInstanceId()).isEmpty();
        assertThat(m1.getAssignmentList()).extracting(t -> t.getTopic() + "=" + t.getPartitionsList()).containsExactly("a=[0, 2]", "b=[1]");
        assertThat(g.getMemberList(1).getAssignmentList()).as("bytes the consumer protocol cannot read: no assignment").isEmpty();

        List<TopicPartition> many = new ArrayList<>();
        for (int p = 0; p < StatsReporter.MAX_ASSIGNMENT_BYTES / 4 + 1; p++) {
            many.add(new TopicPartition("t", p));
        }
        byte[] huge = org.apache.kafka.common.utils.Utils.toArray(ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(many)));
        assertThat(huge.length).isGreaterThan(StatsReporter.MAX_ASSIGNMENT_BYTES);
        assertThat(StatsReporter.member(member("big", huge), "consumer", Long.MAX_VALUE / 8).getAssignmentList())
                .as("a valid assignment too large to decode here: none").isEmpty();
        assertThat(StatsReporter.member(member("late", assigned), "consumer", 1).getAssignmentList())
                .as("no room left in the report: not decoded").isEmpty();
        assertThat(StatsReporter.member(member("fits", assigned), "consumer", StatsReporter.MAX_BYTES).getAssignmentList()).hasSize(2);

        var connect = new GroupShard.GroupSummary("c", GroupState.STABLE, "connect", 1, Map.of(), List.of(member("w", assigned)));
        assertThat(StatsReporter.stats(List.of(), List.of(connect), 5).getGroups(0).getMemberList(0).getAssignmentList())
                .as("another protocol's bytes are not the consumer protocol's").isEmpty();
    }
}

