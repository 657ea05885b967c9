package dev.kaas.bench;

import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * {@code ./kaas bench --transactions}: transactional producers side by side, kaas against Apache
 * Kafka 3.7.2 (default, and {@code log.flush.interval.messages=1}), one broker each, started fresh
 * per repetition in alternating order. Workloads, with Apache's own tools:
 * <ul>
 *   <li>(t100) {@code kafka-producer-perf-test --transactional-id … --transaction-duration-ms 100}, 1 partition;</li>
 *   <li>(t10) the same with 10 ms transactions (the coordinator's share of the cost grows);</li>
 *   <li>(rc) {@code kafka-consumer-perf-test} with {@code isolation.level=read_committed} over what (t100) wrote.</li>
 * </ul>
 * The targets: at least 1.0x Apache default throughput and 2x Apache with fsync.
 */
public final class TransactionBench {
    private final SideBySide bench;
    private final int records;
    private final int reps;
    private final List<String> systems;
    private final int warmup;

    TransactionBench(SideBySide bench, int records, int reps, List<String> systems, int warmup) {
        this.bench = bench;
        this.records = records;
        this.reps = reps;
        this.systems = systems;
        this.warmup = warmup;
    }

    /**
     * Parses {@code --transactions [--records N] [--reps R] [--systems kaas,apache,apache-fsync] [--warmup W]}.
     * With {@code --warmup W}, every fresh broker first takes W records of the (t100) workload on a
     * topic of its own, not measured, so that what is measured is a broker past its JIT's compiling
     * (a broker that has run for a while) rather than one started seconds before.
     */
    static int main0(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse("--transactions", args, 500_000, 3, List.of("kaas", "apache", "apache-fsync"),
                Map.of("--warmup", 0L));
        new TransactionBench(a.launcher("transactions-", 0, a.systems), a.records, a.reps, a.systems, a.intOption("--warmup")).run();
        return 0;
    }

    void run() throws Exception {
        System.out.printf("transactions: %d records x 1024 B, transactions of 100 ms and 10 ms, %d repetitions, warm-up %d records, work dir %s%n",
                records, reps, warmup, bench.work());
        SideBySide.warmProbe();
        for (int rep = 0; rep < reps; rep++) {
            bench.showCommands(rep == 0);
            List<String> order = new ArrayList<>(systems);
            if (rep % 2 == 1) {
                Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("rep %d: %s%n", rep + 1, system);
                try (SideBySide.Server s = bench.startServer(system, rep)) {
                    SideBySide.createTopic(s, "t100", 1);
                    SideBySide.createTopic(s, "t10", 1);
                    if (warmup > 0) {
                        SideBySide.createTopic(s, "warm", 1);
                        bench.producerPerf(s, "warm", warmup, "all", 1,
                                List.of("--transactional-id", "bench-warm-" + rep, "--transaction-duration-ms", "100"));
                        // Apache by default has the warm-up in its page cache: written back now, not during (t100).
                        SideBySide.settleDisk();
                    }
                    measure(system, s, "t100", 100, rep);
                    measure(system, s, "t10", 10, rep);
                    SideBySide.Result rc = bench.consumerPerf(s, "t100", records, Map.of("isolation.level", "read_committed"));
                    bench.record(system, "(rc) read_committed MB/s", rc.mbPerSec());
                }
                SideBySide.deleteTree(bench.work().resolve(system + "-" + rep).resolve("data"));
                SideBySide.settleDisk();
            }
        }
        String title = String.format("%s, transactions: %d records x 1024 B, acks=all, 1 partition, %d reps, warm-up %d records (medians)",
                LocalDateTime.now().withNano(0), records, reps, warmup);
        System.out.println();
        System.out.println(title);
        bench.printTable();
    }

    private void measure(String system, SideBySide.Server s, String topic, int durationMs, int rep) throws Exception {
        SideBySide.ProducerRun run = bench.producerPerf(s, topic, records, "all", 1,
                List.of("--transactional-id", "bench-" + topic + "-" + rep, "--transaction-duration-ms", Integer.toString(durationMs)));
        SideBySide.Result r = run.results().get(0);
        bench.record(system, "(" + topic + ") txn " + durationMs + " ms MB/s", r.mbPerSec());
        bench.record(system, "(" + topic + ") p99 ms", r.p99Ms());
        bench.recordCost(system, "(" + topic + ")", run.cost());
    }
}
