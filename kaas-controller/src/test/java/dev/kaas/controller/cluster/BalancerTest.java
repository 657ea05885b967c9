package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
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

    /** Keys a drained broker's assignment gave up (published without owner): the handoffs the controller waits on. */
    private static Set<String> released(Assignment before, Assignment after) {
        Set<String> keys = new HashSet<>();
        for (int p = 0; p < parts(after).size(); p++) {
            if (parts(before).get(p).leader() != PartitionAssignment.NO_LEADER && parts(after).get(p).leader() == PartitionAssignment.NO_LEADER) {
                keys.add(Balancer.partitionKey(after.topics().get(0).topic().topicId(), p));
            }
        }
        for (int sl = 0; sl < Assignment.SLOTS; sl++) {
            if (before.groupSlots().get(sl).broker() != PartitionAssignment.NO_LEADER && after.groupSlots().get(sl).broker() == PartitionAssignment.NO_LEADER) {
                keys.add(Balancer.groupSlotKey(sl));
            }
            if (before.txnSlots().get(sl).broker() != PartitionAssignment.NO_LEADER && after.txnSlots().get(sl).broker() == PartitionAssignment.NO_LEADER) {
                keys.add(Balancer.txnSlotKey(sl));
            }
        }
        return keys;
    }

    @Test
    void aDrainedBrokerHandsOffEverythingItOwnsPacedByTheBudgetAndTakesNothing() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1), broker(2)), 1, 1, "c");
        int owned = (int) (parts(a).stream().filter(p -> p.leader() == 2).count()
                + a.groupSlots().stream().filter(sl -> sl.broker() == 2).count() + a.txnSlots().stream().filter(sl -> sl.broker() == 2).count());
        Assignment drained = a.withDrained(Map.of(2, "incarnation-1"));
        Set<String> closing = new HashSet<>();
        Assignment next = drained;
        int rounds = 0;
        while (rounds++ < 100) {
            Assignment before = next;
            next = Balancer.next(before, List.of(T), List.of(broker(1), broker(2)), before.version() + 1, 1, "c", closing, 3);
            assertThat(next.drained()).as("the drain is carried in every assignment").containsOnlyKeys(2);
            assertThat(next.brokers()).as("a drained broker stays in the cluster").extracting(BrokerInfo::id).containsExactly(1, 2);
            Set<String> now = released(before, next);
            assertThat(closing.size() + now.size()).as("handoffs in flight within the budget").isLessThanOrEqualTo(3);
            // Never taken from it while it writes: whatever it lost, it lost to "no owner" first.
            for (int p = 0; p < 4; p++) {
                if (parts(before).get(p).leader() == 2) {
                    assertThat(parts(next).get(p).leader()).isIn(2, PartitionAssignment.NO_LEADER);
                }
            }
            for (int sl = 0; sl < Assignment.SLOTS; sl++) {
                if (before.groupSlots().get(sl).broker() == 2) {
                    assertThat(next.groupSlots().get(sl).broker()).isIn(2, PartitionAssignment.NO_LEADER);
                }
                if (before.txnSlots().get(sl).broker() == 2) {
                    assertThat(next.txnSlots().get(sl).broker()).isIn(2, PartitionAssignment.NO_LEADER);
                }
            }
            // The drained broker closes what it was asked to before the next round.
            closing.clear();
            closing.addAll(now);
            if (closing.isEmpty() && parts(next).stream().noneMatch(p -> p.leader() == 2 || p.leader() == PartitionAssignment.NO_LEADER)
                    && next.groupSlots().stream().noneMatch(sl -> sl.broker() == 2 || sl.broker() == PartitionAssignment.NO_LEADER)
                    && next.txnSlots().stream().noneMatch(sl -> sl.broker() == 2 || sl.broker() == PartitionAssignment.NO_LEADER)) {
                break;
            }
        }
        assertThat(rounds).as("paced: %d items over a budget of 3", owned).isGreaterThan(owned / 3);
        assertThat(parts(next)).extracting(PartitionAssignment::leader).containsOnly(1);
        assertThat(next.groupSlots()).extracting(SlotAssignment::broker).containsOnly(1);
        assertThat(next.txnSlots()).extracting(SlotAssignment::broker).containsOnly(1);

        // Undrained: the balancer spreads load back to it.
        Assignment undrained = Balancer.next(next.withDrained(Map.of()), List.of(T), List.of(broker(1), broker(2)), next.version() + 1, 1, "c",
                Set.of(), 3);
        assertThat(released(next, undrained)).as("moves back to broker 2 begin").isNotEmpty();
    }

    @Test
    void aDrainedBrokerThatIsTheOnlyOneKeepsWhatItOwnsAndADeadOneLosesItAtOnce() {
        Assignment a = Balancer.next(Assignment.empty("c"), List.of(T), List.of(broker(1), broker(2)), 1, 1, "c");
        Assignment alone = Balancer.next(a.withDrained(Map.of(1, "i", 2, "j")), List.of(T), List.of(broker(1), broker(2)), 2, 1, "c", Set.of(), 10);
        assertThat(parts(alone)).isEqualTo(parts(a));
        Assignment dead = Balancer.next(a.withDrained(Map.of(2, "j")), List.of(T), List.of(broker(1)), 2, 1, "c", Set.of(), 10);
        assertThat(parts(dead)).extracting(PartitionAssignment::leader).containsOnly(1);
        // The other broker dies while 2 is drained: a drain is a preference, not a reason to leave partitions without a writer.
        Assignment onlyDrained = Balancer.next(a.withDrained(Map.of(2, "j")), List.of(T), List.of(broker(2)), 2, 1, "c", Set.of(), 10);
        assertThat(parts(onlyDrained)).extracting(PartitionAssignment::leader).containsOnly(2);
        assertThat(onlyDrained.groupSlots()).extracting(SlotAssignment::broker).containsOnly(2);
        assertThat(onlyDrained.drained()).containsOnlyKeys(2);
    }

    private static final TopicSpec TWELVE = new TopicSpec("twelve", "id-12", 12, Map.of());

    private static List<BrokerInfo> brokers(int... ids) {
        return IntStream.of(ids).mapToObj(BalancerTest::broker).toList();
    }

    private static Map<Integer, Integer> partitionLoads(Assignment a) {
        Map<Integer, Integer> load = new TreeMap<>();
        a.brokers().forEach(b -> load.put(b.id(), 0));
        a.topics().forEach(t -> t.partitions().forEach(p -> {
            if (p.leader() != PartitionAssignment.NO_LEADER) {
                load.merge(p.leader(), 1, Integer::sum);
            }
        }));
        return load;
    }

    /** What the controller does: publish, record handoffs, complete them when the old owner reports, until stable. */
    private static Assignment settle(Assignment from, List<TopicSpec> catalog, List<BrokerInfo> alive, int maxMoves, int[] movesOut) {
        Assignment a = from;
        Set<String> closing = new HashSet<>();
        for (int round = 0; round < 1000; round++) {
            Assignment next = Balancer.next(a, catalog, alive, a.version() + 1, 1, "c", closing, maxMoves);
            // Every key that went from a live owner to none is a handoff; the old owner "reports" at once.
            Set<Integer> liveIds = new HashSet<>();
            alive.forEach(x -> liveIds.add(x.id()));
            Map<String, Integer> was = owners(a);
            Set<String> started = new HashSet<>();
            owners(next).forEach((key, owner) -> {
                Integer before = was.get(key);
                if (owner == PartitionAssignment.NO_LEADER && before != null && liveIds.contains(before)) {
                    started.add(key);
                }
            });
            assertThat(closing.size() + started.size()).as("handoffs in flight").isLessThanOrEqualTo(Math.max(maxMoves, closing.size()));
            movesOut[0] += started.size();
            boolean same = next.topics().equals(a.topics()) && next.groupSlots().equals(a.groupSlots())
                    && next.txnSlots().equals(a.txnSlots()) && next.brokers().equals(a.brokers());
            if (same && closing.isEmpty() && started.isEmpty()) {
                return next;
            }
            // Reported closed after this publication: the next round places them.
            closing = started;
            a = next;
        }
        throw new AssertionError("did not settle");
    }

    private static Map<String, Integer> owners(Assignment a) {
        Map<String, Integer> out = new HashMap<>();
        a.topics().forEach(t -> t.partitions().forEach(p -> out.put(Balancer.partitionKey(t.topic().topicId(), p.partition()), p.leader())));
        a.groupSlots().forEach(sl -> out.put(Balancer.groupSlotKey(sl.slot()), sl.broker()));
        a.txnSlots().forEach(sl -> out.put(Balancer.txnSlotKey(sl.slot()), sl.broker()));
        return out;
    }

    @Test
    void twelvePartitionsOnThreeBrokersSpreadFourFourFourAndSlotsWithinOne() {
        Assignment a = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        assertThat(partitionLoads(a).values()).containsOnly(4);
        Map<Integer, Long> groupSlots = new TreeMap<>();
        a.groupSlots().forEach(s -> groupSlots.merge(s.broker(), 1L, Long::sum));
        assertThat(groupSlots.keySet()).containsExactly(1, 2, 3);
        assertThat(groupSlots.values()).allSatisfy(n -> assertThat(n).isBetween(16L, 17L));
    }

    @Test
    void aJoinMovesTheFewestPartitionsThatEvenTheSpreadAndEveryMoveIsANewEpoch() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        assertThat(partitionLoads(two).values()).containsOnly(6);
        int[] moves = {0};
        Assignment three = settle(two, List.of(TWELVE), brokers(1, 2, 3), 4, moves);
        assertThat(partitionLoads(three).values()).containsOnly(4);
        // 4 partitions + 16 group slots + 16 txn slots must reach broker 3; nothing else moves.
        assertThat(moves[0]).isEqualTo(4 + 16 + 16);
        List<PartitionAssignment> before = two.topics().get(0).partitions();
        List<PartitionAssignment> after = three.topics().get(0).partitions();
        for (int p = 0; p < 12; p++) {
            if (after.get(p).leader() == before.get(p).leader()) {
                assertThat(after.get(p).leaderEpoch()).isEqualTo(before.get(p).leaderEpoch());
            } else {
                assertThat(after.get(p).leader()).isEqualTo(3);
                assertThat(after.get(p).leaderEpoch()).isEqualTo(before.get(p).leaderEpoch() + 1);
            }
        }
    }

    @Test
    void aLeaveMovesOnlyTheLeaversPartitionsAndSpreadsThemEvenly() {
        Assignment three = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        int[] moves = {0};
        Assignment two = settle(three, List.of(TWELVE), brokers(1, 3), 32, moves);
        assertThat(moves[0]).as("orphans are placed, not handed off").isZero();
        assertThat(partitionLoads(two).values()).containsOnly(6);
        for (int p = 0; p < 12; p++) {
            PartitionAssignment was = three.topics().get(0).partitions().get(p);
            PartitionAssignment now = two.topics().get(0).partitions().get(p);
            assertThat(now.leader() == was.leader()).isEqualTo(was.leader() != 2);
        }
    }

    /** {@code a} with partition {@code p} of TWELVE reassigned to {@code target} (what ControllerCore.reassignPartitions publishes from). */
    private static Assignment reassign(Assignment a, int p, Integer target) {
        List<PartitionAssignment> parts = new ArrayList<>(a.topics().get(0).partitions());
        PartitionAssignment was = parts.get(p);
        parts.set(p, new PartitionAssignment(p, was.leader(), was.leaderEpoch(), target, was.leaving()));
        return new Assignment(a.version(), a.controllerEpoch(), a.clusterId(), a.brokers(),
                List.of(new dev.kaas.common.model.TopicAssignment(a.topics().get(0).topic(), parts)), a.groupSlots(), a.txnSlots());
    }

    @Test
    void aReassignedPartitionIsHandedOffToItsTargetAndTheSpreadWorksAroundIt() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        // The lowest-numbered partition: the first one the spread would pick to move back.
        int p = IntStream.range(0, 12).filter(i -> two.topics().get(0).partitions().get(i).leader() == 1).findFirst().orElseThrow();
        PartitionAssignment before = two.topics().get(0).partitions().get(p);

        int[] moves = {0};
        Assignment after = settle(reassign(two, p, 2), List.of(TWELVE), brokers(1, 2), 32, moves);

        PartitionAssignment moved = after.topics().get(0).partitions().get(p);
        assertThat(moved.leader()).isEqualTo(2);
        assertThat(moved.leaderEpoch()).as("a new writer, a new epoch").isEqualTo(before.leaderEpoch() + 1);
        assertThat(moved.target()).isEqualTo(2);
        assertThat(moved.reassigning()).isFalse();
        assertThat(partitionLoads(after).values()).as("another partition made room for it").containsOnly(6);
        assertThat(moves[0]).as("the reassigned one, and one from broker 2 to broker 1").isEqualTo(2);

        Assignment later = settle(after, List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        assertThat(later.topics()).isEqualTo(after.topics());

        // A join evens the spread with the other partitions: the reassigned one keeps its writer and epoch.
        Assignment joined = settle(after, List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        assertThat(joined.topics().get(0).partitions().get(p)).isEqualTo(moved);
        assertThat(partitionLoads(joined).values()).containsOnly(4);
    }

    @Test
    void aPartitionWhoseTargetIsDownStaysServedAndGoesToItWhenItReturns() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        int p = IntStream.range(0, 12).filter(i -> two.topics().get(0).partitions().get(i).leader() == 1).findFirst().orElseThrow();

        Assignment waiting = settle(reassign(two, p, 3), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        assertThat(waiting.topics().get(0).partitions().get(p).leader()).isEqualTo(1);
        assertThat(waiting.topics().get(0).partitions().get(p).reassigning()).isTrue();

        Assignment withoutOne = settle(waiting, List.of(TWELVE), brokers(2), 32, new int[1]);
        assertThat(withoutOne.topics().get(0).partitions().get(p).leader()).as("an orphan is served wherever it can be").isEqualTo(2);

        Assignment back = settle(withoutOne, List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        assertThat(back.topics().get(0).partitions().get(p).leader()).isEqualTo(3);
        assertThat(back.topics().get(0).partitions().get(p).target()).isEqualTo(3);
    }

    @Test
    void aPartitionReassignedOntoADrainedBrokerStaysServedElsewhereUntilTheDrainEnds() {
        Assignment three = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        int p = IntStream.range(0, 12).filter(i -> three.topics().get(0).partitions().get(i).leader() == 1).findFirst().orElseThrow();

        Assignment drained = settle(reassign(three, p, 3).withDrained(Map.of(3, "incarnation-3")), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        PartitionAssignment waiting = drained.topics().get(0).partitions().get(p);
        assertThat(waiting.leader()).as("never placed on the drained broker").isIn(1, 2);
        assertThat(waiting.reassigning()).isTrue();
        assertThat(drained.topics().get(0).partitions()).extracting(PartitionAssignment::leader).doesNotContain(3);

        Assignment undrained = settle(drained.withDrained(Map.of()), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        assertThat(undrained.topics().get(0).partitions().get(p).leader()).as("it moves once the drain ends").isEqualTo(3);
        assertThat(undrained.topics().get(0).partitions().get(p).reassigning()).isFalse();
    }

    @Test
    void aBrokerWhosePartitionsAreAllReassignedToItDoesNotStopTheSpread() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        Assignment pinned = two;
        for (int p = 0; p < 12; p++) {
            if (two.topics().get(0).partitions().get(p).leader() == 1) {
                pinned = reassign(pinned, p, 1);
            }
        }
        // Broker 1 holds 6, all reassigned to it; broker 2 holds 6; broker 3 joins with none.
        Assignment three = settle(pinned, List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);

        assertThat(partitionLoads(three)).containsEntry(1, 6).containsEntry(2, 3).containsEntry(3, 3);
    }

    @Test
    void aCancelledHandoffGoesBackToTheBrokerItWasLeavingOnce() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        int p = IntStream.range(0, 12).filter(i -> two.topics().get(0).partitions().get(i).leader() == 1).findFirst().orElseThrow();
        Assignment started = Balancer.next(reassign(two, p, 2), List.of(TWELVE), brokers(1, 2), 10, 1, "c", Set.of(), 1);
        PartitionAssignment moving = started.topics().get(0).partitions().get(p);
        assertThat(moving.leaving()).isEqualTo(1);

        Assignment cancelled = reassign(started, p, null);
        Assignment stillClosing = Balancer.next(cancelled, List.of(TWELVE), brokers(1, 2), 11, 1, "c", Set.of(Balancer.partitionKey("id-12", p)), 1);
        assertThat(stillClosing.topics().get(0).partitions().get(p).leaving()).as("kept while it closes").isEqualTo(1);
        Assignment placed = Balancer.next(stillClosing, List.of(TWELVE), brokers(1, 2), 12, 1, "c", Set.of(), 1);

        PartitionAssignment back = placed.topics().get(0).partitions().get(p);
        assertThat(back.leader()).isEqualTo(1);
        assertThat(back.leaderEpoch()).isEqualTo(moving.leaderEpoch() + 1);
        assertThat(back.leaving()).isNull();
        assertThat(back.target()).isNull();
    }

    @Test
    void aReassignmentWaitsForTheHandoffBudget() {
        Assignment three = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2, 3), 32, new int[1]);
        int p = IntStream.range(0, 12).filter(i -> three.topics().get(0).partitions().get(i).leader() == 1).findFirst().orElseThrow();

        Assignment held = Balancer.next(reassign(three, p, 2), List.of(TWELVE), brokers(1, 2, 3), 10, 1, "c", Set.of(), 0);
        Assignment started = Balancer.next(reassign(three, p, 2), List.of(TWELVE), brokers(1, 2, 3), 10, 1, "c", Set.of(), 1);

        assertThat(held.topics().get(0).partitions().get(p).leader()).as("no budget: it stays").isEqualTo(1);
        assertThat(started.topics().get(0).partitions().get(p).leader()).as("first the old writer lets go")
                .isEqualTo(PartitionAssignment.NO_LEADER);
        assertThat(started.topics().get(0).partitions().get(p).target()).isEqualTo(2);
    }

    @Test
    void aHandoffThatIsStillClosingIsNotPlacedAndDoesNotMoveAnythingElse() {
        Assignment two = settle(Assignment.empty("c"), List.of(TWELVE), brokers(1, 2), 32, new int[1]);
        Assignment first = Balancer.next(two, List.of(TWELVE), brokers(1, 2, 3), 10, 1, "c", Set.of(), 1);
        List<PartitionAssignment> parts = first.topics().get(0).partitions();
        int moving = IntStream.range(0, 12).filter(p -> parts.get(p).leader() == PartitionAssignment.NO_LEADER).findFirst().orElseThrow();
        Assignment again = Balancer.next(first, List.of(TWELVE), brokers(1, 2, 3), 11, 1, "c",
                Set.of(Balancer.partitionKey("id-12", moving)), 1);
        assertThat(again.topics()).as("the one handoff in flight uses the whole budget").isEqualTo(first.topics());
        assertThat(again.groupSlots()).isEqualTo(first.groupSlots());
    }

    @Test
    void epochsOnlyEverGrowAcrossRandomJoinsLeavesAndTopicChanges() {
        Random random = new Random(42);
        Assignment a = Assignment.empty("c");
        Map<String, Integer> highest = new HashMap<>();
        List<TopicSpec> catalog = new ArrayList<>(List.of(TWELVE, T));
        for (int step = 0; step < 200; step++) {
            List<BrokerInfo> alive = new ArrayList<>();
            for (int id = 1; id <= 4; id++) {
                if (random.nextInt(3) > 0) {
                    alive.add(broker(id));
                }
            }
            if (random.nextInt(10) == 0) {
                catalog.add(new TopicSpec("x" + step, "id-x" + step, 1 + random.nextInt(5), Map.of()));
            }
            a = settle(a, catalog, alive, 1 + random.nextInt(40), new int[1]);
            Map<Integer, Integer> loads = partitionLoads(a);
            if (!alive.isEmpty()) {
                assertThat(java.util.Collections.max(loads.values()) - java.util.Collections.min(loads.values())).isLessThanOrEqualTo(1);
            }
            for (var t : a.topics()) {
                for (PartitionAssignment p : t.partitions()) {
                    String key = t.topic().topicId() + "/" + p.partition();
                    Integer top = highest.get(key);
                    Integer lastOwner = highest.get("owner:" + key);
                    if (top != null) {
                        assertThat(p.leaderEpoch()).as("epoch of %s", key).isGreaterThanOrEqualTo(top);
                    }
                    if (lastOwner != null && p.leader() != PartitionAssignment.NO_LEADER && lastOwner != p.leader()) {
                        assertThat(p.leaderEpoch()).as("a new owner of %s gets a new epoch", key).isGreaterThan(top);
                    }
                    highest.put(key, p.leaderEpoch());
                    if (p.leader() != PartitionAssignment.NO_LEADER) {
                        highest.put("owner:" + key, p.leader());
                    }
                }
            }
        }
    }
}
