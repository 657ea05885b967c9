package dev.kaas.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * {@code ./kaas bench --chaos}: a 3-broker kaas (one controller) under a Java producer at a fixed
 * rate (3.7 defaults: idempotent, acks=all), while brokers are killed with SIGKILL one at a time
 * (victims drawn from a seeded {@link Random}, the seed printed) and started again, then one is
 * frozen with SIGSTOP until the controller deposes it. Per cycle it measures the <em>takeover</em>:
 * from the signal to the first acknowledgement, on every partition the victim led (leaders learnt
 * with the Admin client before the signal), of a record sent after the signal; and, for
 * comparison, when the metadata first showed those partitions led elsewhere. At the end it reads
 * every partition back and counts lost, duplicated and out-of-order records. A benchmark, not a
 * test: it prints, writes {@code chaos.md} to its work directory, and exits non-zero only if a
 * record was lost, duplicated or reordered.
 */
public final class ChaosBench {
    static final String TOPIC = "chaos";

    record Options(Path root, Path work, int brokers, int partitions, int cycles, int stopCycles, int rate, long seed) {
    }

    /** One cycle: what was done to whom, and how long each step took (-1: not measured). */
    record Cycle(int n, String signal, int victim, int moved, long takeoverMs, long leadersMovedMs, long backMs, String note) {
    }

    record Report(Options opts, List<Cycle> cycles, SequencedLoad.Check check, String table) {
        List<Long> takeovers(String signal) {
            return cycles.stream().filter(c -> c.signal().equals(signal)).map(Cycle::takeoverMs).toList();
        }
    }

    private final Options opts;
    private final SideBySide launcher;

    ChaosBench(Options opts) throws Exception {
        this.opts = opts;
        this.launcher = new SideBySide(new SideBySide.Options(opts.root(), opts.work(), 0, 1024, 1, 0, List.of("kaas")));
    }

    /** Parses {@code --chaos [--cycles N] [--stop-cycles N] [--rate R] [--seed S] [--root DIR]}; returns the exit code. */
    static int main0(String[] args) throws Exception {
        Path root = Path.of(".").toAbsolutePath().normalize();
        int cycles = 20;
        int stopCycles = 1;
        int rate = 2_000;
        long seed = new Random().nextLong();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--chaos" -> {
                }
                case "--root" -> root = Path.of(args[++i]).toAbsolutePath().normalize();
                case "--cycles" -> cycles = Integer.parseInt(args[++i]);
                case "--stop-cycles" -> stopCycles = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown option for --chaos: " + args[i]
                        + " (options: --cycles N, --stop-cycles N, --rate RECORDS_PER_S, --seed S)");
            }
        }
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "chaos-");
        Report r = new ChaosBench(new Options(root, work, 3, 12, cycles, stopCycles, rate, seed)).run();
        return r.check().clean() ? 0 : 1;
    }

    Report run() throws Exception {
        System.out.printf("chaos: kaas, %d brokers + 1 controller, topic %s of %d partitions, %d records/s, %d kill -9 cycles + %d SIGSTOP cycle(s),"
                + " seed %d, work dir %s%n", opts.brokers(), TOPIC, opts.partitions(), opts.rate(), opts.cycles(), opts.stopCycles(), opts.seed(), opts.work());
        SideBySide.warmProbe();
        launcher.showCommands(true);
        Random random = new Random(opts.seed());
        List<Cycle> cycles = new ArrayList<>();
        SequencedLoad.Check check;
        try (LocalKaasCluster cluster = LocalKaasCluster.start(launcher, opts.work().resolve("kaas"), opts.brokers(), Map.of());
             Admin admin = Placement.admin(cluster.bootstrap())) {
            launcher.showCommands(false);
            // The balancer evens out all partitions together: without the start-up probe's topic,
            // the 12 partitions are the whole load and an even placement is 4/4/4.
            admin.deleteTopics(List.of(SideBySide.PROBE_TOPIC)).all().get(60, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic(TOPIC, opts.partitions(), (short) 1))).all().get(60, TimeUnit.SECONDS);
            Map<Integer, Integer> initial = Placement.await(admin, TOPIC, l -> Placement.balanced(l, opts.brokers()), Duration.ofSeconds(60));
            System.out.printf("cluster ready in %d ms; placement %s%n", cluster.startToFirstProduceMs(), Placement.spread(initial));
            try (SequencedLoad load = new SequencedLoad(cluster.bootstrap(), TOPIC, opts.partitions(), opts.rate())) {
                awaitFlowing(load);
                for (int n = 1; n <= opts.cycles(); n++) {
                    cycles.add(killCycle(n, 1 + random.nextInt(opts.brokers()), cluster, admin, load));
                }
                for (int n = 1; n <= opts.stopCycles(); n++) {
                    cycles.add(stopCycle(opts.cycles() + n, 1 + random.nextInt(opts.brokers()), cluster, admin, load));
                }
                load.stop();
                System.out.printf("stopped producing: %d sent, %d acknowledged, %d failed; reading %d partitions back%n", load.sent(), load.acked(),
                        load.failed(), opts.partitions());
                load.failures().stream().limit(5).forEach(e -> System.out.println("  failed send: " + e));
                check = load.check(cluster.bootstrap());
            }
        }
        Report report = new Report(opts, cycles, check, table(cycles, check));
        if (check.clean()) {
            // Logs stay; the records are kept only when they are evidence.
            SideBySide.deleteTree(opts.work().resolve("kaas/data"));
        }
        System.out.print(report.table());
        Files.writeString(opts.work().resolve("chaos.md"), report.table());
        System.out.println("written to " + opts.work().resolve("chaos.md"));
        return report;
    }

    private Cycle killCycle(int n, int victim, LocalKaasCluster cluster, Admin admin, SequencedLoad load) throws Exception {
        Set<Integer> moved = Placement.ledBy(Placement.leaders(admin, TOPIC), victim);
        long t0 = System.nanoTime();
        cluster.kill(victim);
        load.watch(t0, System.nanoTime());
        long[] takeover = awaitTakeover(load, admin, moved, victim, t0, Duration.ofSeconds(120));
        long t1 = System.nanoTime();
        cluster.restart(victim);
        long readyMs = ms(System.nanoTime() - t1);
        Placement.await(admin, TOPIC, l -> Placement.balanced(l, opts.brokers()), Duration.ofSeconds(120));
        long backMs = ms(System.nanoTime() - t1);
        Cycle c = new Cycle(n, "kill -9", victim, moved.size(), takeover[0], takeover[1], backMs, "ready after " + readyMs + " ms");
        print(c);
        awaitFlowing(load);
        return c;
    }

    private Cycle stopCycle(int n, int victim, LocalKaasCluster cluster, Admin admin, SequencedLoad load) throws Exception {
        Set<Integer> moved = Placement.ledBy(Placement.leaders(admin, TOPIC), victim);
        long t0 = System.nanoTime();
        cluster.freeze(victim);
        load.watch(t0, System.nanoTime());
        long[] takeover = awaitTakeover(load, admin, moved, victim, t0, Duration.ofSeconds(180));
        long t1 = System.nanoTime();
        cluster.thaw(victim);
        String note;
        try {
            // Deposed while it slept, the broker finds its controller stream gone, reconnects and rejoins.
            cluster.awaitBrokerReady(victim);
            Placement.await(admin, TOPIC, l -> Placement.balanced(l, opts.brokers()), Duration.ofSeconds(90));
            note = "thawed, rejoined by itself";
        } catch (IllegalStateException notBack) {
            System.out.printf("  the thawed broker %d did not rejoin within 90 s (%s); killing and restarting it%n", victim, notBack.getMessage());
            cluster.kill(victim);
            cluster.restart(victim);
            Placement.await(admin, TOPIC, l -> Placement.balanced(l, opts.brokers()), Duration.ofSeconds(120));
            note = "thawed, did NOT rejoin within 90 s: restarted";
        }
        Cycle c = new Cycle(n, "SIGSTOP", victim, moved.size(), takeover[0], takeover[1], ms(System.nanoTime() - t1), note);
        print(c);
        awaitFlowing(load);
        return c;
    }

    /**
     * Polls until every partition in {@code moved} has an acknowledgement of a record sent after
     * the signal, and until the metadata shows none of them led by the victim; returns both, in ms
     * from {@code t0}. The metadata figure is polled (about every 100 ms, longer while the Admin
     * client's request to a dead broker times out), so it is an upper bound.
     */
    private static long[] awaitTakeover(SequencedLoad load, Admin admin, Set<Integer> moved, int victim, long t0, Duration bound) throws Exception {
        long deadline = t0 + bound.toNanos();
        long acked = -1;
        long metadata = -1;
        while (acked < 0 || metadata < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("partitions " + moved + " of broker " + victim + " not taken over within " + bound
                        + " (acknowledged: " + (acked >= 0) + ", metadata moved: " + (metadata >= 0) + ")");
            }
            if (acked < 0) {
                acked = load.takeoverMs(moved);
            }
            if (metadata < 0) {
                try {
                    Map<Integer, Integer> now = Placement.leaders(admin, TOPIC);
                    if (moved.stream().allMatch(p -> now.get(p) != victim && now.get(p) != -1)) {
                        metadata = ms(System.nanoTime() - t0);
                    }
                } catch (Exception notNow) {
                    // the Admin client asked the dead broker: ask again
                }
            }
            Thread.sleep(acked < 0 ? 10 : 100);
        }
        return new long[] {acked, metadata};
    }

    /**
     * Waits until every partition has acknowledged a record sent after now: the cluster serves the
     * whole topic again (a placement read from one broker's metadata alone could be stale).
     */
    private void awaitFlowing(SequencedLoad load) throws InterruptedException {
        long t = System.nanoTime();
        load.watch(t, t);
        Set<Integer> all = java.util.stream.IntStream.range(0, opts.partitions()).boxed().collect(java.util.stream.Collectors.toSet());
        long deadline = t + TimeUnit.SECONDS.toNanos(120);
        while (load.takeoverMs(all) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not every partition acknowledged a record within 120 s (failures so far: " + load.failed() + ")");
            }
            Thread.sleep(20);
        }
    }

    private static void print(Cycle c) {
        System.out.printf("cycle %2d: %-7s broker %d (%d partitions): takeover %5d ms (metadata moved %5d ms); back at 4/4/4 in %5d ms, %s%n",
                c.n(), c.signal(), c.victim(), c.moved(), c.takeoverMs(), c.leadersMovedMs(), c.backMs(), c.note());
    }

    String table(List<Cycle> cycles, SequencedLoad.Check check) {
        StringBuilder t = new StringBuilder();
        t.append(String.format("%n%s, chaos: %d brokers, %d partitions, %d records/s, seed %d, %d kill -9 + %d SIGSTOP cycles%n",
                LocalDateTime.now().withNano(0), opts.brokers(), opts.partitions(), opts.rate(), opts.seed(), opts.cycles(), opts.stopCycles()));
        t.append("| metric | value |\n|---|---|\n");
        t.append(String.format("| acknowledged | %d |%n", check.acknowledged()));
        t.append(String.format("| lost (acknowledged, absent at its offset) | %d |%n", check.lost()));
        t.append(String.format("| duplicated (same value twice) | %d |%n", check.duplicated()));
        t.append(String.format("| out of order (seq not increasing in a partition) | %d |%n", check.outOfOrder()));
        t.append(String.format("| failed sends | %d |%n", check.failed()));
        t.append(String.format("| records read back | %d |%n", check.read()));
        for (String signal : List.of("kill -9", "SIGSTOP")) {
            List<Cycle> of = cycles.stream().filter(c -> c.signal().equals(signal)).toList();
            if (of.isEmpty()) {
                continue;
            }
            t.append(String.format("| takeover after %s, first ack on every moved partition, p50 / p99 / max ms (%d cycles) | %s |%n", signal, of.size(),
                    percentiles(of.stream().map(Cycle::takeoverMs).toList())));
            t.append(String.format("| metadata shows them moved after %s, p50 / p99 / max ms | %s |%n", signal,
                    percentiles(of.stream().map(Cycle::leadersMovedMs).toList())));
        }
        t.append(String.format("%nper cycle (victims from seed %d):%n", opts.seed()));
        for (Cycle c : cycles) {
            t.append(String.format("- %d: %s broker %d (%d partitions): takeover %d ms, metadata moved %d ms, back at an even placement in %d ms (%s)%n",
                    c.n(), c.signal(), c.victim(), c.moved(), c.takeoverMs(), c.leadersMovedMs(), c.backMs(), c.note()));
        }
        t.append(String.format("%nresult: %s%n", check.clean() ? "no acknowledged record lost, duplicated or reordered"
                : "FAILED: records lost, duplicated or reordered"));
        return t.toString();
    }

    static String percentiles(List<Long> xs) {
        return String.format("%d / %d / %d", percentile(xs, 50), percentile(xs, 99), xs.stream().mapToLong(Long::longValue).max().orElse(-1));
    }

    /** Nearest-rank percentile; -1 for no samples. */
    static long percentile(List<Long> xs, double p) {
        if (xs.isEmpty()) {
            return -1;
        }
        List<Long> s = xs.stream().sorted().toList();
        int rank = (int) Math.ceil(p / 100 * s.size());
        return s.get(Math.max(0, rank - 1));
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
