package dev.kaas.controller.cluster;

import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Computes the next assignment from the previous one, the catalog and the live brokers. Pure and
 * deterministic: same inputs, same output.
 *
 * <p>Three kinds of resource are balanced separately: partitions (all topics together, ties
 * broken towards the broker with the fewest partitions of the same topic, so a topic created on
 * N brokers spreads evenly over them), group slots and transaction slots.
 *
 * <p>Rules:
 * <ul>
 *   <li>A partition or slot whose owner is alive stays (same epoch).
 *   <li>An orphan (owner dead, absent, or -1 and not being relinquished) goes to the least loaded
 *       live broker, and its epoch becomes previous + 1: every change of writer is a new epoch,
 *       so a deposed writer's files carry a dead epoch. With no live broker the owner is -1 and
 *       the epoch is kept, so the next owner still gets a fresh one.
 *   <li>A move away from a live owner is a handoff in two publications: first the owner becomes
 *       -1 (same epoch) so the old owner closes the partition; the key is then in {@code closing}
 *       until the controller heard that the old owner applied it; only then is it an orphan and
 *       placed, under epoch + 1. While closing it keeps its place in the loads of its future
 *       owner, so the balance does not move anything twice.
 *   <li>Moves start only when a kind is uneven (max − min > 1 live broker loads), from the most
 *       loaded to the least loaded broker, at most {@code maxMoves} in flight (closing) at once
 *       over all kinds: the fewest moves that even the spread, paced.
 *   <li>A partition with a {@linkplain PartitionAssignment#target() target} (AlterPartitionReassignments)
 *       whose target broker is alive belongs there: it is handed off to it first (within the same
 *       budget), placed there as an orphan, and never moved away to even the spread. While the
 *       target is not alive it is placed as any other partition, and goes back when it returns.
 *       A handoff whose reassignment is cancelled while under way goes back to the broker it was
 *       leaving ({@link PartitionAssignment#leaving()}), once, as Apache reverts a cancelled one.
 * </ul>
 */
public final class Balancer {
    private Balancer() {
    }

    public static String partitionKey(String topicId, int partition) {
        return topicId + "/" + partition;
    }

    public static String groupSlotKey(int slot) {
        return "group-slot/" + slot;
    }

    public static String txnSlotKey(int slot) {
        return "txn-slot/" + slot;
    }

    /** As {@link #next(Assignment, List, List, long, long, String, Set, int)} with no move of a live placement. */
    public static Assignment next(Assignment prev, List<TopicSpec> catalog, List<BrokerInfo> alive,
                                  long version, long controllerEpoch, String clusterId) {
        return next(prev, catalog, alive, version, controllerEpoch, clusterId, Set.of(), 0);
    }

    /**
     * @param closing keys ({@link #partitionKey}, {@link #groupSlotKey}, {@link #txnSlotKey}) whose
     *                handoff was published and whose old owner has not yet reported it closed
     * @param maxMoves the most handoffs that may be in flight at once, counting {@code closing}
     */
    public static Assignment next(Assignment prev, List<TopicSpec> catalog, List<BrokerInfo> alive,
                                  long version, long controllerEpoch, String clusterId,
                                  Set<String> closing, int maxMoves) {
        List<BrokerInfo> brokers = alive.stream().sorted(Comparator.comparingInt(BrokerInfo::id)).toList();
        // A drained broker stays in the cluster (clients still reach it) but takes nothing: what it
        // owns is handed off to the others, paced by the same budget as any other move.
        Set<Integer> draining = prev.drained().keySet();
        List<Integer> ids = brokers.stream().map(BrokerInfo::id).filter(id -> !draining.contains(id)).toList();
        Set<Integer> drainingAlive = brokers.stream().map(BrokerInfo::id).filter(draining::contains)
                .collect(java.util.stream.Collectors.toSet());
        if (ids.isEmpty()) {
            // Only drained brokers are left (the last other one died mid-maintenance): a drain is a
            // preference, and leaving partitions without a writer while brokers run would be an outage.
            ids = brokers.stream().map(BrokerInfo::id).toList();
            drainingAlive = Set.of();
        }
        int[] budget = {Math.max(0, maxMoves - closing.size())};

        Map<String, PartitionAssignment> prevPartitions = new HashMap<>();
        for (TopicAssignment t : prev.topics()) {
            for (PartitionAssignment p : t.partitions()) {
                prevPartitions.put(partitionKey(t.topic().topicId(), p.partition()), p);
            }
        }
        List<TopicSpec> topics = catalog.stream().sorted(Comparator.comparing(TopicSpec::name)).toList();
        List<Item> partitionItems = new ArrayList<>();
        for (TopicSpec t : topics) {
            for (int p = 0; p < t.partitions(); p++) {
                PartitionAssignment before = prevPartitions.get(partitionKey(t.topicId(), p));
                Item item = new Item(partitionKey(t.topicId(), p), t.topicId(),
                        before == null ? null : before.leader(), before == null ? 0 : before.leaderEpoch());
                item.target = before == null ? null : before.target();
                item.leaving = before == null ? null : before.leaving();
                partitionItems.add(item);
            }
        }
        balance(partitionItems, ids, drainingAlive, closing, budget);
        List<TopicAssignment> out = new ArrayList<>();
        int i = 0;
        for (TopicSpec t : topics) {
            List<PartitionAssignment> parts = new ArrayList<>();
            for (int p = 0; p < t.partitions(); p++) {
                Item item = partitionItems.get(i++);
                // The broker a reassignment is leaving, while nobody writes the partition; forgotten once it is placed.
                Integer leaving = item.owner == PartitionAssignment.NO_LEADER ? item.leaving : null;
                parts.add(new PartitionAssignment(p, item.owner, item.epoch, item.target, leaving));
            }
            out.add(new TopicAssignment(t, parts));
        }
        List<SlotAssignment> groupSlots = slots(prev.groupSlots(), Balancer::groupSlotKey, ids, drainingAlive, closing, budget);
        List<SlotAssignment> txnSlots = slots(prev.txnSlots(), Balancer::txnSlotKey, ids, drainingAlive, closing, budget);
        return new Assignment(version, controllerEpoch, clusterId, brokers, out, groupSlots, txnSlots, prev.brokerConfigs(),
                prev.scramUsers(), prev.clientQuotas(), prev.acls(), prev.declaredUsers(), prev.drained());
    }

    private static List<SlotAssignment> slots(List<SlotAssignment> prev, java.util.function.IntFunction<String> key,
                                              List<Integer> ids, Set<Integer> draining, Set<String> closing, int[] budget) {
        Map<Integer, SlotAssignment> before = new HashMap<>();
        prev.forEach(s -> before.put(s.slot(), s));
        List<Item> items = new ArrayList<>();
        for (int s = 0; s < Assignment.SLOTS; s++) {
            SlotAssignment b = before.get(s);
            items.add(new Item(key.apply(s), "", b == null ? null : b.broker(), b == null ? 0 : b.epoch()));
        }
        balance(items, ids, draining, closing, budget);
        List<SlotAssignment> out = new ArrayList<>();
        for (int s = 0; s < Assignment.SLOTS; s++) {
            out.add(new SlotAssignment(s, items.get(s).owner, items.get(s).epoch));
        }
        return out;
    }

    /** One partition or slot being placed. {@code owner == null}: it did not exist before. */
    private static final class Item {
        final String key;
        final String group;
        final boolean existed;
        int owner;
        int epoch;
        /** The broker a reassignment placed it on (partitions only), null if none. */
        Integer target;
        /** The broker a reassignment's handoff is taking it from, while it closes there. */
        Integer leaving;

        Item(String key, String group, Integer owner, int epoch) {
            this.key = key;
            this.group = group;
            this.existed = owner != null;
            this.owner = owner == null ? PartitionAssignment.NO_LEADER : owner;
            this.epoch = epoch;
        }
    }

    /** Loads of one kind: per broker, and per broker within a group (a topic). */
    private static final class Loads {
        final Map<Integer, Integer> total = new TreeMap<>();
        final Map<String, Map<Integer, Integer>> byGroup = new HashMap<>();

        Loads(List<Integer> ids) {
            ids.forEach(id -> total.put(id, 0));
        }

        void add(int broker, String group, int delta) {
            total.merge(broker, delta, Integer::sum);
            byGroup.computeIfAbsent(group, g -> new HashMap<>()).merge(broker, delta, Integer::sum);
        }

        int inGroup(int broker, String group) {
            return byGroup.getOrDefault(group, Map.of()).getOrDefault(broker, 0);
        }

        /** Least total load, then fewest of {@code group}, then lowest id. */
        Integer target(String group) {
            Integer best = null;
            for (int b : total.keySet()) {
                if (best == null || total.get(b) < total.get(best)
                        || (total.get(b).equals(total.get(best)) && inGroup(b, group) < inGroup(best, group))) {
                    best = b;
                }
            }
            return best;
        }

        /** Most total load first; ties: the highest id first, the reverse of {@link #target}, so a move never goes back and forth. */
        List<Integer> donors() {
            List<Integer> out = new ArrayList<>(total.keySet());
            out.sort(Comparator.comparing((Integer b) -> total.get(b)).thenComparing(b -> b).reversed());
            return out;
        }

        Integer leastLoaded() {
            Integer best = null;
            for (int b : total.keySet()) {
                if (best == null || total.get(b) < total.get(best)) {
                    best = b;
                }
            }
            return best;
        }
    }

    /** A handoff whose reassignment was cancelled under way: it goes back to the broker it was leaving, once, if that one is alive. */
    private static boolean returning(Item item, Loads loads) {
        return item.target == null && item.leaving != null && loads.total.containsKey(item.leaving);
    }

    /** A reassigned item whose target is alive: it belongs there, and the spread works around it. */
    private static boolean pinnedAlive(Item item, Loads loads) {
        return item.target != null && loads.total.containsKey(item.target);
    }

    /** @param draining live brokers that keep what they own only until its handoff fits the budget */
    private static void balance(List<Item> items, List<Integer> ids, Set<Integer> draining, Set<String> closing, int[] budget) {
        Loads loads = new Loads(ids);
        List<Item> orphans = new ArrayList<>();
        List<Item> waiting = new ArrayList<>();
        for (Item item : items) {
            if (item.owner != PartitionAssignment.NO_LEADER && draining.contains(item.owner)) {
                // Handed off like a rebalance move (published without owner, placed once the drained
                // broker closed it), never taken from it while it still writes; with nowhere to go, it stays.
                if (budget[0] > 0 && !ids.isEmpty()) {
                    item.owner = PartitionAssignment.NO_LEADER;
                    waiting.add(item);
                    budget[0]--;
                }
            } else if (item.owner != PartitionAssignment.NO_LEADER && loads.total.containsKey(item.owner)) {
                loads.add(item.owner, item.group, 1);
            } else if (item.owner == PartitionAssignment.NO_LEADER && closing.contains(item.key)) {
                waiting.add(item);
            } else {
                orphans.add(item);
            }
        }
        // Reassignments first, paced by the same budget: an item away from its live target is handed off to it.
        for (Item item : items) {
            if (budget[0] > 0 && item.target != null && loads.total.containsKey(item.target)
                    && item.owner != item.target && loads.total.containsKey(item.owner)) {
                loads.add(item.owner, item.group, -1);
                item.leaving = item.owner;
                item.owner = PartitionAssignment.NO_LEADER;
                waiting.add(item);
                budget[0]--;
            }
        }
        for (Item item : orphans) {
            Integer target = pinnedAlive(item, loads) ? item.target : returning(item, loads) ? item.leaving : loads.target(item.group);
            if (target == null) {
                item.owner = PartitionAssignment.NO_LEADER;
                continue;
            }
            loads.add(target, item.group, 1);
            item.owner = target;
            // An orphan's previous owner is dead or has closed it: any placement is a change of writer.
            item.epoch = item.existed ? item.epoch + 1 : 0;
        }
        if (ids.isEmpty()) {
            return;
        }
        // A handoff in flight will land on whoever is least loaded when it completes: count it there now.
        for (Item item : waiting) {
            loads.add(pinnedAlive(item, loads) ? item.target : returning(item, loads) ? item.leaving : loads.target(item.group), item.group, 1);
        }
        while (budget[0] > 0) {
            int receiver = loads.leastLoaded();
            Item move = null;
            int donor = -1;
            // The most loaded broker first; one whose partitions are all reassigned to it gives way to the next.
            for (int candidate : loads.donors()) {
                if (loads.total.get(candidate) - loads.total.get(receiver) <= 1) {
                    break;
                }
                int bestGain = Integer.MIN_VALUE;
                for (Item item : items) {
                    if (item.owner != candidate || pinnedAlive(item, loads)) {
                        continue;
                    }
                    int gain = loads.inGroup(candidate, item.group) - loads.inGroup(receiver, item.group);
                    if (gain > bestGain) {
                        bestGain = gain;
                        move = item;
                    }
                }
                if (move != null) {
                    donor = candidate;
                    break;
                }
            }
            if (move == null) {
                return;
            }
            move.owner = PartitionAssignment.NO_LEADER;
            loads.add(donor, move.group, -1);
            loads.add(receiver, move.group, 1);
            budget[0]--;
        }
    }
}
