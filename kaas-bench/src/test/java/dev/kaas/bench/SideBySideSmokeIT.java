package dev.kaas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Not a benchmark: runs the side-by-side harness with tiny counts against kaas and Apache Kafka
 * 3.7.2, and the chaos run with two kill -9 cycles, so a change that breaks the harness (a server
 * that no longer starts, perf-tool output that no longer parses, a process left behind) fails the
 * build instead of the next benchmark.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SideBySideSmokeIT {

    @Test
    void theHarnessMeasuresBothSystemsAndLeavesNothingRunning() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "smoke-");
        SideBySide bench = new SideBySide(new SideBySide.Options(root, work, 2_000, 1024, 1, 50, List.of("kaas", "apache")));

        bench.run();

        assertThat(bench.samples()).containsKeys("start-to-first-produce ms", "(a) acks=all 1p MB/s", "(b) acks=all 12p x4 MB/s",
                "(b) client CPU s/GB", "peak RSS MiB (after b)", "(c) acks=1 MB/s", "(d) consume MB/s", "(e) e2e p99 ms");
        bench.samples().forEach((metric, bySystem) -> {
            assertThat(bySystem.keySet()).as(metric).containsExactlyInAnyOrder("kaas", "apache");
            bySystem.values().forEach(values -> assertThat(values).as(metric).hasSize(1).allSatisfy(v -> assertThat(v).isFinite().isNotNegative()));
        });
        // Measured, not merely present: a broken probe, parser or CPU reading would give 0.
        for (String metric : List.of("start-to-first-produce ms", "(a) acks=all 1p MB/s", "(b) acks=all 12p x4 MB/s",
                "(a) server CPU s/GB", "(a) client CPU s/GB", "(b) server CPU s/GB", "(b) client CPU s/GB",
                "peak RSS MiB (after b)", "(d) consume records/s")) {
            bench.samples().get(metric).forEach((system, values) -> assertThat(values.get(0)).as(metric + " " + system).isPositive());
        }
        String table = Files.readString(work.resolve("results.md"));
        assertThat(table).containsPattern("\\| start-to-first-produce ms +\\| +[\\d.]+ \\| +[\\d.]+ \\| +NaN \\| +[\\d.]+x \\|");
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)).isEmpty();
        // Every process the harness started is on record, Apache's from the distribution's own jars and log4j configuration.
        String commands = Files.readString(work.resolve("commands.txt"));
        assertThat(commands).contains("kafka.Kafka", "org.apache.kafka.tools.ProducerPerformance", "org.apache.kafka.tools.ConsumerPerformance",
                "org.apache.kafka.tools.EndToEndLatency", "kafka.tools.StorageTool", "quarkus-run.jar",
                "apache-dist/target/kafka_2.13-3.7.2/config/log4j.properties", "-XX:MaxInlineLevel=15");
        assertThat(commands).doesNotContain("slf4j-jboss-logmanager", "kaas-bench/target/classes", ".m2/repository");
    }

    /**
     * About a minute, so not in the default suite's 25 (the durability it counts is ClusterIT's to
     * guard): {@code ./mvnw verify -Dkaas.bench.chaos-smoke=true} adds it.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "kaas.bench.chaos-smoke", matches = "true",
            disabledReason = "-Dkaas.bench.chaos-smoke=true runs it")
    void theChaosRunKillsAndRestartsBrokersUnderLoadAndCountsWhatItReadsBack() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "smoke-chaos-");
        // Two kill -9 cycles at a low rate; the SIGSTOP cycle waits out the producer's 30 s request
        // timeout, too slow for a smoke run.
        ChaosBench chaos = new ChaosBench(new ChaosBench.Options(root, work, 3, 12, 2, 0, 200, 42L));

        ChaosBench.Report report = chaos.run();

        assertThat(report.check().clean()).as("nothing lost, duplicated or reordered: %s", report.check()).isTrue();
        assertThat(report.check().acknowledged()).isPositive().isEqualTo(report.check().sent() - report.check().failed());
        assertThat(report.check().read()).isGreaterThanOrEqualTo(report.check().acknowledged());
        assertThat(report.cycles()).hasSize(2).allSatisfy(c -> {
            assertThat(c.moved()).as("partitions the victim led").isEqualTo(4);
            assertThat(c.takeoverMs()).as("takeover").isNotNegative();
            assertThat(c.leadersMovedMs()).as("metadata moved").isNotNegative();
        });
        assertThat(Files.readString(work.resolve("chaos.md"))).contains("| lost (acknowledged, absent at its offset) | 0 |", "seed 42",
                "takeover after kill -9");
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)).isEmpty();
    }

    /**
     * Two more Apache launches (about 20 s, so not in the default suite's 25 minutes; the harness
     * test above still launches Apache as the harness does): {@code -Dkaas.bench.apache-check-smoke=true}.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "kaas.bench.apache-check-smoke", matches = "true",
            disabledReason = "-Dkaas.bench.apache-check-smoke=true runs it")
    void theApacheCheckMeasuresBothLaunches() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "smoke-check-");
        SideBySide bench = new SideBySide(new SideBySide.Options(root, work, 2_000, 1024, 1, 50, List.of("apache")));

        SideBySide.ApacheCheck check = bench.checkApache();

        // Agreement is the full-size check's business; with 2,000 records only the measuring is checked.
        assertThat(check.harnessMbPerSec()).isPositive().isFinite();
        assertThat(check.shellMbPerSec()).isPositive().isFinite();
        assertThat(Files.readString(work.resolve("apache-check.md"))).contains("harness/shell");
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)).isEmpty();
    }

    /**
     * The SASL_SSL run with tiny counts, and two of its paired rounds (about a minute, so not in the default suite's 25):
     * {@code -Dkaas.bench.sasl-smoke=true}.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "kaas.bench.sasl-smoke", matches = "true",
            disabledReason = "-Dkaas.bench.sasl-smoke=true runs it")
    void theSaslSslRunMeasuresBothSystemsOverTheSecureListener() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "smoke-sasl-");
        SideBySide bench = new SideBySide(new SideBySide.Options(root, work, 2_000, 1024, 1, 50, List.of("kaas", "apache")));

        new SecureBench(bench, 2_000, 1, List.of("kaas", "apache"), 2).run();

        for (String metric : List.of("(a) acks=all 1p MB/s", "(b) acks=all 12p x4 MB/s", "(d) consume MB/s")) {
            bench.samples().get(metric).forEach((system, values) -> assertThat(values.get(0)).as(metric + " " + system).isPositive());
        }
        assertThat(Files.readString(work.resolve("pairs.md"))).as("the paired rounds and their summary")
                .containsPattern("round 1 \\(kaas first\\): \\(a\\) kaas [0-9.]+, apache [0-9.]+ MB/s, [0-9.]+; \\(d\\) kaas [0-9.]+, apache [0-9.]+ MB/s")
                .containsPattern("round 2 \\(apache first\\)").contains("(a) acks=all 1p: median", "(d) consume: median");
        assertThat(Files.readString(work.resolve("commands.txt"))).contains("--producer.config", "client-sasl-ssl.properties");
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)).isEmpty();
    }
}
