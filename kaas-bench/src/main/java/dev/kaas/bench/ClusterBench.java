package dev.kaas.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * {@code ./kaas bench --cluster}: kaas with 3 brokers (and its controller) against Apache Kafka
 * 3.7.2 as 3 KRaft nodes (combined mode), topics at replication factor 3 with
 * {@code min.insync.replicas=2}, producers with {@code acks=all}: what a replicated Apache cluster
 * pays for durability against kaas's shared volume (kaas accepts the replication factor and keeps
 * one copy, fsynced before every acknowledgement). The producers are SideBySide's: (a) one
 * {@code kafka-producer-perf-test} on 1 partition, (b) four on 12 partitions. Each repetition
 * starts both systems fresh, alternating their order.
 */
public final class ClusterBench {
    static final List<String> SYSTEMS = List.of("kaas-3", "apache-3");
    static final Map<String, String> TOPIC_CONFIG = Map.of("min.insync.replicas", "2");

    private final SideBySide bench;
    private final int records;
    private final int reps;

    ClusterBench(SideBySide bench, int records, int reps) {
        this.bench = bench;
        this.records = records;
        this.reps = reps;
    }

    /** Parses {@code --cluster [--records N] [--reps R]}. */
    static int main0(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse("--cluster", args, 1_000_000, 3, null, Map.of());
        new ClusterBench(a.launcher("cluster-", 0, SYSTEMS), a.records, a.reps).run();
        return 0;
    }

    void run() throws Exception {
        System.out.printf("cluster: kaas 3 brokers vs Apache 3 KRaft nodes, RF=3, min.insync.replicas=2, acks=all, %d records x 1024 B, %d repetitions,"
                + " work dir %s%n", records, reps, bench.work());
        SideBySide.warmProbe();
        for (int rep = 0; rep < reps; rep++) {
            bench.showCommands(rep == 0);
            List<String> order = new ArrayList<>(SYSTEMS);
            if (rep % 2 == 1) {
                Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("rep %d: %s%n", rep + 1, system);
                Path dir = bench.work().resolve(system + "-" + rep);
                Files.createDirectories(dir);
                if (system.equals("kaas-3")) {
                    try (LocalKaasCluster c = LocalKaasCluster.start(bench, dir, 3, Map.of())) {
                        measure(system, c, c.asServer(system));
                    }
                } else {
                    try (LocalApacheCluster c = LocalApacheCluster.start(bench, bench.dist(), dir, 3,
                            List.of("default.replication.factor=3", "min.insync.replicas=2"))) {
                        measure(system, c, c.asServer(system));
                    }
                }
                SideBySide.deleteTree(dir.resolve("data"));
                for (int n = 1; n <= 3; n++) {
                    SideBySide.deleteTree(dir.resolve("node-" + n).resolve("data"));
                }
                SideBySide.settleDisk();
            }
        }
        printTable();
    }

    private void measure(String system, ServerSystem cluster, SideBySide.Server server) throws Exception {
        bench.record(system, "start-to-first-produce ms", cluster.startToFirstProduceMs());
        try (Admin admin = Placement.admin(cluster.bootstrap())) {
            admin.createTopics(List.of(new NewTopic("a", 1, (short) 3).configs(TOPIC_CONFIG), new NewTopic("b", 12, (short) 3).configs(TOPIC_CONFIG)))
                    .all().get(60, TimeUnit.SECONDS);
        }
        SideBySide.ProducerRun runA = bench.producerPerf(server, "a", records, "all", 1);
        SideBySide.Result a = runA.results().get(0);
        bench.record(system, "(a) acks=all 1p MB/s", a.mbPerSec());
        bench.record(system, "(a) p50 ms", a.p50Ms());
        bench.record(system, "(a) p99 ms", a.p99Ms());
        bench.recordCost(system, "(a)", runA.cost());
        SideBySide.ProducerRun runB = bench.producerPerf(server, "b", records / 4, "all", 4);
        bench.record(system, "(b) acks=all 12p x4 MB/s", runB.results().stream().mapToDouble(SideBySide.Result::mbPerSec).sum());
        bench.record(system, "(b) p50 ms", SideBySide.median(runB.results().stream().map(SideBySide.Result::p50Ms).toList()));
        bench.record(system, "(b) p99 ms", runB.results().stream().mapToDouble(SideBySide.Result::p99Ms).max().orElse(0));
        bench.recordCost(system, "(b)", runB.cost());
        bench.record(system, "peak RSS MiB (after b)", server.peakRssKb() / 1024.0);
    }

    private void printTable() throws Exception {
        StringBuilder t = new StringBuilder();
        t.append(String.format("%n%s, cluster: RF=3, min.insync.replicas=2, acks=all, %d records x 1024 B, %d reps (medians)%n",
                LocalDateTime.now().withNano(0), records, reps));
        t.append("| metric | kaas-3 | apache-3 | kaas-3/apache-3 |\n|---|---|---|---|\n");
        for (var e : bench.samples().entrySet()) {
            Map<String, List<Double>> by = new LinkedHashMap<>(e.getValue());
            double k = SideBySide.median(by.getOrDefault("kaas-3", List.of()));
            double a = SideBySide.median(by.getOrDefault("apache-3", List.of()));
            t.append(String.format("| %s | %.2f | %.2f | %s |%n", e.getKey(), k, a, SideBySide.ratio(k, a)));
        }
        System.out.print(t);
        Files.writeString(bench.work().resolve("cluster.md"), t.toString());
        System.out.println("written to " + bench.work().resolve("cluster.md"));
    }
}
