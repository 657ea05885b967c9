package dev.kaas.controller.status;

import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicAssignment;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.LongPredicate;
import java.util.stream.Collectors;

/**
 * The text of {@code ./kaas status}: pure, from a {@link StatusSnapshot}, the time and a probe that
 * tells whether a pid is still one of this cluster's processes. Layout (one broker line per broker
 * that the assignment, the run directory or the cluster's shape knows):
 *
 * <pre>
 * kaas cluster in /data (port 9092, 2 brokers, 1 controller)
 * lease:       held by controller-1, epoch 3 (valid for 4.2 s more unless renewed)
 * controllers:
 *   controller 1  running (pid 4100)           holds the lease
 * cluster id:  q1w2e3…
 * assignment:  version 7, controller epoch 3
 * brokers:     1 alive (the assignment's live set)
 *   broker 1   alive      running (pid 4101)       partitions 4    group slots 50  txn slots 50  PLAINTEXT://localhost:9092
 *   broker 2   not alive  stopped                  partitions 0    group slots 0   txn slots 0   -
 * partitions:  4 in 1 topic, 0 without a leader
 * slots:       0 group and 0 transaction slots without an owner
 * reassigned:  2 partitions kept on a broker by a reassignment, 1 still moving
 *   orders-3                       on broker 2   moving (written by broker 1)
 *   orders-4                       on broker 2
 * </pre>
 */
final class StatusReport {
    private static final String BROKER_LINE = "  broker %-3d %-10s %-26s partitions %-4d group slots %-3d txn slots %-3d %s";

    private StatusReport() {
    }

    static String format(Path dataDir, StatusSnapshot s, long nowMs, LongPredicate running) {
        StringBuilder out = new StringBuilder();
        RunDir run = s.run();
        out.append("kaas cluster in ").append(dataDir);
        run.port().ifPresent(port -> out.append(" (port ").append(port).append(", ")
                .append(count(run.brokers(), "broker")).append(", ").append(count(run.controllers(), "controller")).append(')'));
        out.append('\n');
        field(out, "lease", lease(s.lease(), nowMs));
        controllers(out, s, nowMs, running);
        if (s.assignment().isEmpty()) {
            field(out, "assignment", "none published yet (brokers get one once a controller holds the lease)");
        } else {
            Assignment a = s.assignment().get();
            field(out, "cluster id", a.clusterId());
            String epochNote = s.lease().filter(l -> l.transitions() != a.controllerEpoch())
                    .map(l -> " (the lease is at epoch " + l.transitions() + ")").orElse("");
            field(out, "assignment", "version " + a.version() + ", controller epoch " + a.controllerEpoch() + epochNote);
        }
        brokers(out, s, running);
        s.assignment().ifPresent(a -> {
            long partitions = a.topics().stream().mapToLong(t -> t.partitions().size()).sum();
            long leaderless = a.topics().stream().flatMap(t -> t.partitions().stream())
                    .filter(p -> p.leader() == PartitionAssignment.NO_LEADER).count();
            field(out, "partitions", partitions + " in " + count(a.topics().size(), "topic") + ", " + leaderless + " without a leader");
            field(out, "slots", unowned(a.groupSlots()) + " group and " + unowned(a.txnSlots()) + " transaction slots without an owner");
            reassignments(out, a);
        });
        return out.toString();
    }

    /** At most this many reassigned partitions get a line of their own; the count covers them all. */
    static final int REASSIGNED_LINES = 20;

    /**
     * Partitions an AlterPartitionReassignments placed ({@code kafka-reassign-partitions.sh}): where
     * each is kept, and whether it is still moving there. Nothing when there are none.
     */
    private static void reassignments(StringBuilder out, Assignment a) {
        java.util.Set<Integer> alive = a.brokers().stream().map(BrokerInfo::id).collect(Collectors.toSet());
        // A drained broker takes nothing while another live broker is not drained (the balancer's rule).
        boolean drainHolds = alive.stream().anyMatch(id -> !a.drained().containsKey(id));
        List<String> moving = new java.util.ArrayList<>();
        List<String> waiting = new java.util.ArrayList<>();
        List<String> done = new java.util.ArrayList<>();
        for (TopicAssignment t : a.topics()) {
            for (PartitionAssignment p : t.partitions()) {
                if (p.target() == null) {
                    continue;
                }
                String writer = p.leader() != PartitionAssignment.NO_LEADER ? "written by broker " + p.leader()
                        : p.leaving() != null ? "broker " + p.leaving() + " is handing it off" : "no writer yet";
                List<String> into;
                String state;
                if (!p.reassigning()) {
                    into = done;
                    state = "";
                } else if (!alive.contains(p.target())) {
                    // The balancer serves it elsewhere until the target comes back.
                    into = waiting;
                    state = "waiting (broker " + p.target() + " not alive; " + writer + ")";
                } else if (drainHolds && a.drained().containsKey(p.target())) {
                    // Served elsewhere until the drain ends (DELETE .../drain, or the broker restarts).
                    into = waiting;
                    state = "waiting (broker " + p.target() + " drained; " + writer + ")";
                } else {
                    into = moving;
                    state = "moving (" + writer + ")";
                }
                into.add(String.format(Locale.ROOT, "  %-30s on broker %-3d %s", t.topic().name() + "-" + p.partition(), p.target(), state)
                        .stripTrailing());
            }
        }
        int all = moving.size() + waiting.size() + done.size();
        if (all == 0) {
            return;
        }
        field(out, "reassigned", count(all, "partition") + " kept on a broker by a reassignment, " + moving.size() + " still moving"
                + (waiting.isEmpty() ? "" : ", " + waiting.size() + " waiting for their broker"));
        // Those still under way first: they are what an operator is waiting for.
        List<String> lines = new java.util.ArrayList<>(moving);
        lines.addAll(waiting);
        lines.addAll(done);
        lines.stream().limit(REASSIGNED_LINES).forEach(l -> out.append(l).append('\n'));
        if (lines.size() > REASSIGNED_LINES) {
            out.append("  ... and ").append(lines.size() - REASSIGNED_LINES).append(" more\n");
        }
    }

    private static String lease(Optional<LeaseRecord> lease, long nowMs) {
        if (lease.isEmpty()) {
            return "none yet (no controller has taken it)";
        }
        LeaseRecord l = lease.get();
        if (l.holder() == null) {
            return "free, epoch " + l.transitions() + " (released by its last holder)";
        }
        long left = l.renewDeadlineMs() - nowMs;
        if (left > 0) {
            return "held by " + l.holder() + ", epoch " + l.transitions() + " (valid for " + seconds(left) + " more unless renewed)";
        }
        return "expired " + seconds(-left) + " ago, epoch " + l.transitions() + " (last holder " + l.holder() + ")";
    }

    /** Only what this machine's run directory knows: the script names controller j {@code controller-j}. */
    private static void controllers(StringBuilder out, StatusSnapshot s, long nowMs, LongPredicate running) {
        RunDir run = s.run();
        SortedSet<Integer> ids = upTo(run.controllers());
        ids.addAll(run.controllerPids().keySet());
        if (ids.isEmpty()) {
            return;
        }
        out.append("controllers:\n");
        for (int id : ids) {
            boolean holds = s.lease().filter(l -> ("controller-" + id).equals(l.holder()) && nowMs < l.renewDeadlineMs()).isPresent();
            out.append(String.format(Locale.ROOT, "  controller %-2d %-26s %s", id,
                    process(run.controllerPids().get(id), id <= run.controllers(), running), holds ? "holds the lease" : "").stripTrailing())
                    .append('\n');
        }
    }

    private static void brokers(StringBuilder out, StatusSnapshot s, LongPredicate running) {
        RunDir run = s.run();
        Optional<Assignment> assignment = s.assignment();
        Map<Integer, BrokerInfo> live = new HashMap<>();
        Map<Integer, Integer> partitions = new HashMap<>();
        Map<Integer, Integer> groupSlots = new HashMap<>();
        Map<Integer, Integer> txnSlots = new HashMap<>();
        SortedSet<Integer> ids = upTo(run.brokers());
        ids.addAll(run.brokerPids().keySet());
        assignment.ifPresent(a -> {
            a.brokers().forEach(b -> live.put(b.id(), b));
            for (TopicAssignment t : a.topics()) {
                t.partitions().stream().filter(p -> p.leader() != PartitionAssignment.NO_LEADER)
                        .forEach(p -> partitions.merge(p.leader(), 1, Integer::sum));
            }
            tally(a.groupSlots(), groupSlots);
            tally(a.txnSlots(), txnSlots);
        });
        ids.addAll(live.keySet());
        ids.addAll(partitions.keySet());
        ids.addAll(groupSlots.keySet());
        ids.addAll(txnSlots.keySet());
        field(out, "brokers", assignment.isEmpty() ? "liveness unknown until an assignment is published"
                : live.size() + " alive (the assignment's live set)");
        for (int id : ids) {
            String alive = assignment.isEmpty() ? "-" : live.containsKey(id) ? "alive" : "not alive";
            String endpoints = Optional.ofNullable(live.get(id))
                    .map(b -> b.endpoints().stream().map(e -> e.listener() + "://" + e.host() + ":" + e.port()).collect(Collectors.joining(",")))
                    .filter(e -> !e.isEmpty()).orElse("-");
            out.append(String.format(Locale.ROOT, BROKER_LINE, id, alive,
                    process(run.brokerPids().get(id), id <= run.brokers(), running),
                    partitions.getOrDefault(id, 0), groupSlots.getOrDefault(id, 0), txnSlots.getOrDefault(id, 0), endpoints))
                    .append('\n');
        }
    }

    /** A pid file that names a live process, one whose process is gone (killed, crashed), or none. */
    private static String process(Long pid, boolean partOfTheCluster, LongPredicate running) {
        if (pid != null) {
            return (running.test(pid) ? "running" : "not running") + " (pid " + pid + ")";
        }
        return partOfTheCluster ? "stopped" : "-";
    }

    private static void tally(List<SlotAssignment> slots, Map<Integer, Integer> into) {
        slots.stream().filter(s -> s.broker() != PartitionAssignment.NO_LEADER).forEach(s -> into.merge(s.broker(), 1, Integer::sum));
    }

    private static long unowned(List<SlotAssignment> slots) {
        return slots.stream().filter(s -> s.broker() == PartitionAssignment.NO_LEADER).count();
    }

    private static SortedSet<Integer> upTo(int n) {
        SortedSet<Integer> ids = new TreeSet<>();
        for (int i = 1; i <= n; i++) {
            ids.add(i);
        }
        return ids;
    }

    private static void field(StringBuilder out, String name, String value) {
        out.append(String.format(Locale.ROOT, "%-13s", name + ":")).append(value).append('\n');
    }

    private static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    private static String seconds(long ms) {
        return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
