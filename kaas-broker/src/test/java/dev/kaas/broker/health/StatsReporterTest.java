package dev.kaas.broker.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.group.GroupShard;
import dev.kaas.broker.group.GroupState;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
}
