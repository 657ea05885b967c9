package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BalancerTest {
    private static final TopicSpec T = new TopicSpec("t", "id-t", 4, Map.of());
    private static BrokerInfo broker(int id) {
        return new BrokerInfo(id, List.of());
    }

    private static List<PartitionAssignment> parts(Assignment a) {
        return a.topics().get(0).partitions();
    }

    @Test
    void newPartitionsSpreadOverLiveBrokersAtEpochZero() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1), broker(2)), 1, 5, "c");
        assertThat(parts(a)).extracting(PartitionAssignment::leader).containsExactly(1, 2, 1, 2);
        assertThat(parts(a)).extracting(PartitionAssignment::leaderEpoch).containsOnly(0);
        assertThat(a.groupSlots()).hasSize(50).extracting(SlotAssignment::broker).containsOnly(1, 2);
        assertThat(a.txnSlots()).hasSize(50);
        assertThat(a.version()).isEqualTo(1);
        assertThat(a.controllerEpoch()).isEqualTo(5);
    }

    @Test
    void livePlacementsStayWithTheirEpoch() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1)), 1, 1, "c");
        Assignment b = Balancer.next(a, List.of(T), List.of(broker(1), broker(2)), 2, 1, "c");
        assertThat(parts(b)).isEqualTo(parts(a));
        assertThat(b.groupSlots()).isEqualTo(a.groupSlots());
    }

    @Test
    void orphansMoveToSurvivorsWithANewEpoch() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1), broker(2)), 1, 1, "c");
        Assignment b = Balancer.next(a, List.of(T), List.of(broker(2)), 2, 1, "c");
        for (int p = 0; p < 4; p++) {
            PartitionAssignment before = parts(a).get(p);
            PartitionAssignment after = parts(b).get(p);
            assertThat(after.leader()).isEqualTo(2);
            assertThat(after.leaderEpoch()).isEqualTo(before.leader() == 1 ? before.leaderEpoch() + 1 : before.leaderEpoch());
        }
    }

    @Test
    void withoutBrokersPartitionsHaveNoLeaderAndTheNextOneGetsAFreshEpoch() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1)), 1, 1, "c");
        Assignment none = Balancer.next(a, List.of(T), List.of(), 2, 1, "c");
        assertThat(parts(none)).extracting(PartitionAssignment::leader).containsOnly(PartitionAssignment.NO_LEADER);
        assertThat(parts(none)).extracting(PartitionAssignment::leaderEpoch).containsOnly(0);
        Assignment back = Balancer.next(none, List.of(T), List.of(broker(1)), 3, 1, "c");
        assertThat(parts(back)).extracting(PartitionAssignment::leaderEpoch).containsOnly(1);
        assertThat(back.groupSlots()).extracting(SlotAssignment::epoch).containsOnly(1);
    }

    @Test
    void deletedTopicsDisappear() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1)), 1, 1, "c");
        Assignment b = Balancer.next(a, List.of(), List.of(broker(1)), 2, 1, "c");
        assertThat(b.topics()).isEmpty();
    }
}
