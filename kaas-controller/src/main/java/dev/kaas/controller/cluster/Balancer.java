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
import java.util.TreeMap;

/**
 * Computes the next assignment from the previous one, the catalog and the live brokers. Pure and
 * deterministic: same inputs, same output.
 *
 * <p>Rules: a partition or slot whose owner is alive stays (same epoch). An orphan goes to the
 * least-loaded live broker (ties: lowest id), and its epoch becomes previous + 1, so every change
 * of writer is a new epoch and a deposed writer's files carry a dead epoch. With no live broker
 * the owner is -1 and the epoch is kept, so the next owner still gets a fresh one.
 */
public final class Balancer {
    private Balancer() {
    }

    public static Assignment next(Assignment prev, List<TopicSpec> catalog, List<BrokerInfo> alive,
                                  long version, long controllerEpoch, String clusterId) {
        List<BrokerInfo> brokers = alive.stream().sorted(Comparator.comparingInt(BrokerInfo::id)).toList();
        Map<Integer, Integer> load = new TreeMap<>();
        brokers.forEach(b -> load.put(b.id(), 0));

        Map<String, PartitionAssignment> prevPartitions = new HashMap<>();
        for (TopicAssignment t : prev.topics()) {
            for (PartitionAssignment p : t.partitions()) {
                prevPartitions.put(t.topic().topicId() + "/" + p.partition(), p);
            }
        }
        List<TopicSpec> topics = catalog.stream().sorted(Comparator.comparing(TopicSpec::name)).toList();

        // First pass keeps every live placement, so loads are known before orphans are placed.
        Map<String, PartitionAssignment> kept = new HashMap<>();
        for (TopicSpec t : topics) {
            for (int p = 0; p < t.partitions(); p++) {
                PartitionAssignment before = prevPartitions.get(t.topicId() + "/" + p);
                if (before != null && load.containsKey(before.leader())) {
                    kept.put(t.topicId() + "/" + p, before);
                    load.merge(before.leader(), 1, Integer::sum);
                }
            }
        }
        List<TopicAssignment> out = new ArrayList<>();
        for (TopicSpec t : topics) {
            List<PartitionAssignment> parts = new ArrayList<>();
            for (int p = 0; p < t.partitions(); p++) {
                String key = t.topicId() + "/" + p;
                PartitionAssignment keep = kept.get(key);
                if (keep != null) {
                    parts.add(keep);
                    continue;
                }
                PartitionAssignment before = prevPartitions.get(key);
                parts.add(place(p, before, load));
            }
            out.add(new TopicAssignment(t, parts));
        }
        List<SlotAssignment> groupSlots = slots(prev.groupSlots(), load);
        List<SlotAssignment> txnSlots = slots(prev.txnSlots(), load);
        return new Assignment(version, controllerEpoch, clusterId, brokers, out, groupSlots, txnSlots);
    }

    private static PartitionAssignment place(int partition, PartitionAssignment before, Map<Integer, Integer> load) {
        Integer target = leastLoaded(load);
        if (target == null) {
            return new PartitionAssignment(partition, PartitionAssignment.NO_LEADER, before == null ? 0 : before.leaderEpoch());
        }
        load.merge(target, 1, Integer::sum);
        // An orphan's previous leader is dead or absent, so any placement is a change of writer.
        return new PartitionAssignment(partition, target, before == null ? 0 : before.leaderEpoch() + 1);
    }

    private static List<SlotAssignment> slots(List<SlotAssignment> prev, Map<Integer, Integer> load) {
        Map<Integer, SlotAssignment> before = new HashMap<>();
        prev.forEach(s -> before.put(s.slot(), s));
        // Slots are balanced among themselves, separately from partitions.
        Map<Integer, Integer> slotLoad = new TreeMap<>();
        load.keySet().forEach(b -> slotLoad.put(b, 0));
        SlotAssignment[] out = new SlotAssignment[Assignment.SLOTS];
        for (int s = 0; s < Assignment.SLOTS; s++) {
            SlotAssignment b = before.get(s);
            if (b != null && slotLoad.containsKey(b.broker())) {
                out[s] = b;
                slotLoad.merge(b.broker(), 1, Integer::sum);
            }
        }
        for (int s = 0; s < Assignment.SLOTS; s++) {
            if (out[s] != null) {
                continue;
            }
            SlotAssignment b = before.get(s);
            Integer target = leastLoaded(slotLoad);
            if (target == null) {
                out[s] = new SlotAssignment(s, PartitionAssignment.NO_LEADER, b == null ? 0 : b.epoch());
            } else {
                slotLoad.merge(target, 1, Integer::sum);
                out[s] = new SlotAssignment(s, target, b == null ? 0 : b.epoch() + 1);
            }
        }
        return List.of(out);
    }

    private static Integer leastLoaded(Map<Integer, Integer> load) {
        Integer best = null;
        for (var e : load.entrySet()) {
            if (best == null || e.getValue() < load.get(best)) {
                best = e.getKey();
            }
        }
        return best;
    }
}
