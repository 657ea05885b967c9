package dev.kaas.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Runs kaas and Apache Kafka 3.7.2 side by side on this machine with the Apache 3.7.2 perf tools
 * and prints medians and kaas/Apache ratios. Apache runs twice: default durability (page-cache
 * acknowledgements) and {@code log.flush.interval.messages=1} (fsync per batch, kaas's default).
 *
 * <p>Each repetition starts every system fresh on an empty data directory (same file system),
 * alternating the order of systems between repetitions, and runs: (a) 1 partition, acks=all,
 * idempotent, batch.size 64 KiB, linger.ms 5; (b) the same over 12 partitions from 4 producer
 * processes; (c) acks=1; (d) consumer-perf-test reading (a)'s topic; (e) end-to-end latency,
 * one record at a time. Peak RSS is the broker processes' VmHWM after (b). Nothing is left running.
 */
public final class SideBySide {
    static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    record Options(Path root, Path work, int records, int recordSize, int reps, int e2eMessages, List<String> systems) {
    }

    record Server(String name, List<Process> processes, int port, long startToFirstProduceMs) implements AutoCloseable {
        String bootstrap() {
            return "127.0.0.1:" + port;
        }

        /** CPU time (user + system) the server processes have used so far. */
        long cpuMs() {
            return processes.stream().mapToLong(SideBySide::cpuMs).sum();
        }

        long peakRssKb() throws IOException {
            long sum = 0;
            for (Process p : processes) {
                for (String line : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
                    if (line.startsWith("VmHWM:")) {
                        sum += Long.parseLong(line.replaceAll("[^0-9]", ""));
                    }
                }
            }
            return sum;
        }

        @Override
        public void close() throws InterruptedException {
            for (int i = processes.size() - 1; i >= 0; i--) {
                Process p = processes.get(i);
                p.destroy();
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** One measurement: throughput and latency as the perf tools report them. */
    record Result(double mbPerSec, double recordsPerSec, double p50Ms, double p99Ms) {
    }

    /** What a workload cost the machine: wall time, and the CPU time of the server and of the client processes. */
    record Cost(double wallS, double serverCpuS, double clientCpuS) {
    }

    /** A producer-perf-test workload: one result per producer process, and what the whole run cost. */
    record ProducerRun(List<Result> results, Cost cost) {
    }

    private final Options opts;
    private final ApacheDist dist;
    private final Map<String, Map<String, List<Double>>> samples = new LinkedHashMap<>();
    /** Each distinct command line shown once: the harness prints every process it starts. */
    private final java.util.Set<String> shown = new java.util.LinkedHashSet<>();
    private boolean showCommands;
    /** Apache (broker, format, producer-perf-test) started through the distribution's scripts instead of by this harness. */
    private boolean viaScripts;

    SideBySide(Options opts) throws IOException {
        this.opts = opts;
        this.dist = ApacheDist.under(opts.root());
    }

    public static void main(String[] args) throws Exception {
        // The cluster workloads parse their own options; ./kaas bench passes every argument here.
        List<String> given = List.of(args);
        if (given.contains("--chaos")) {
            System.exit(ChaosBench.main0(args));
        } else if (given.contains("--partitions")) {
            System.exit(PartitionScale.main0(args));
        } else if (given.contains("--cluster")) {
            System.exit(ClusterBench.main0(args));
        } else if (given.contains("--transactions")) {
            System.exit(TransactionBench.main0(args));
        } else if (given.contains("--compaction")) {
            System.exit(CompactionBench.main0(args));
        } else if (given.contains("--sasl-ssl")) {
            System.exit(SecureBench.main0(args));
        }
        Path root = Path.of(".").toAbsolutePath().normalize();
        int records = 1_000_000;
        int reps = 3;
        int e2e = 5_000;
        List<String> systems = List.of("kaas", "apache", "apache-fsync");
        boolean checkApache = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--reps" -> reps = Integer.parseInt(args[++i]);
                case "--e2e-messages" -> e2e = Integer.parseInt(args[++i]);
                case "--root" -> root = Path.of(args[++i]).toAbsolutePath().normalize();
                case "--systems" -> systems = List.of(args[++i].split(","));
                case "--check-apache" -> checkApache = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "run-");
        SideBySide bench = new SideBySide(new Options(root, work, records, 1024, reps, e2e, systems));
        if (checkApache) {
            System.exit(bench.checkApache().agree() ? 0 : 1);
        }
        bench.run();
    }

    /**
     * The harness's own check of its Apache baseline: Apache 3.7.2 alone, workload (a), started by
     * this harness and started from a plain shell through the distribution's scripts, one after the
     * other (order alternating) on a fresh data directory each time. Prints both; true when their
     * medians agree within 10 %.
     */
    ApacheCheck checkApache() throws Exception {
        warmProbe();
        System.out.printf("apache check: workload (a), %d records x %d B, %d repetitions per launch, work dir %s%n", opts.records(),
                opts.recordSize(), opts.reps(), opts.work());
        Map<String, List<Double>> mb = new LinkedHashMap<>();
        for (int rep = 0; rep < opts.reps(); rep++) {
            showCommands = rep == 0;
            List<Boolean> order = rep % 2 == 0 ? List.of(false, true) : List.of(true, false);
            for (boolean scripts : order) {
                String launch = scripts ? "plain shell" : "harness";
                viaScripts = scripts;
                Path dir = opts.work().resolve((scripts ? "shell-" : "harness-") + rep);
                Files.createDirectories(dir);
                System.out.printf("rep %d: apache started by the %s%n", rep + 1, launch);
                try (Server s = startApache(dir, false)) {
                    createTopic(s, "a", 1);
                    Result a = producerPerf(s, "a", opts.records(), "all", 1).results().get(0);
                    mb.computeIfAbsent(launch, k -> new ArrayList<>()).add(a.mbPerSec());
                    System.out.printf("  (a) acks=all 1p MB/s %-12s %10.2f%n", launch, a.mbPerSec());
                } finally {
                    viaScripts = false;
                }
                deleteTree(dir.resolve("data"));
                settleDisk();
            }
        }
        double harness = median(mb.get("harness"));
        double shell = median(mb.get("plain shell"));
        ApacheCheck check = new ApacheCheck(harness, shell);
        double ratio = harness / shell;
        boolean agree = check.agree();
        String report = String.format("%napache check %s: (a) MB/s, medians of %d: harness %.2f %s, plain shell %.2f %s, harness/shell %.2fx: %s%n",
                LocalDateTime.now().withNano(0), opts.reps(), harness, mb.get("harness"), shell, mb.get("plain shell"), ratio,
                agree ? "agree within 10 %" : "DISAGREE by more than 10 %");
        System.out.print(report);
        Files.writeString(opts.work().resolve("apache-check.md"), report);
        return check;
    }

    /** Medians of workload (a) MB/s with Apache started by the harness and from a plain shell. */
    record ApacheCheck(double harnessMbPerSec, double shellMbPerSec) {
        boolean agree() {
            return Math.abs(harnessMbPerSec / shellMbPerSec - 1) <= 0.10;
        }
    }

    Path root() {
        return opts.root();
    }

    Path work() {
        return opts.work();
    }

    ApacheDist dist() {
        return dist;
    }

    /** Whether {@link #start} prints (once each) and records the command lines it runs. */
    void showCommands(boolean show) {
        showCommands = show;
    }

    /** Every sample taken: metric, then system, then one value per repetition. */
    Map<String, Map<String, List<Double>>> samples() {
        return samples;
    }

    void run() throws Exception {
        warmProbe();
        List<String> systems = opts.systems();
        System.out.printf("side-by-side: %d records x %d B, %d repetitions, work dir %s%n", opts.records(), opts.recordSize(), opts.reps(), opts.work());
        for (int rep = 0; rep < opts.reps(); rep++) {
            showCommands = rep == 0;
            List<String> order = new ArrayList<>(systems);
            if (rep % 2 == 1) {
                java.util.Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("rep %d: %s%n", rep + 1, system);
                try (Server s = startServer(system, rep)) {
                    record(system, "start-to-first-produce ms", s.startToFirstProduceMs());
                    createTopic(s, "a", 1);
                    createTopic(s, "b", 12);
                    createTopic(s, "c", 1);
                    createTopic(s, "e", 1);
                    ProducerRun runA = producerPerf(s, "a", opts.records(), "all", 1);
                    Result a = runA.results().get(0);
                    record(system, "(a) acks=all 1p MB/s", a.mbPerSec());
                    record(system, "(a) acks=all 1p records/s", a.recordsPerSec());
                    record(system, "(a) p50 ms", a.p50Ms());
                    record(system, "(a) p99 ms", a.p99Ms());
                    recordCost(system, "(a)", runA.cost());
                    ProducerRun runB = producerPerf(s, "b", opts.records() / 4, "all", 4);
                    List<Result> b = runB.results();
                    record(system, "(b) acks=all 12p x4 MB/s", b.stream().mapToDouble(Result::mbPerSec).sum());
                    record(system, "(b) acks=all 12p x4 records/s", b.stream().mapToDouble(Result::recordsPerSec).sum());
                    record(system, "(b) p50 ms", median(b.stream().map(Result::p50Ms).toList()));
                    record(system, "(b) p99 ms", b.stream().mapToDouble(Result::p99Ms).max().orElse(0));
                    recordCost(system, "(b)", runB.cost());
                    record(system, "peak RSS MiB (after b)", s.peakRssKb() / 1024.0);
                    Result c = producerPerf(s, "c", opts.records(), "1", 1).results().get(0);
                    record(system, "(c) acks=1 MB/s", c.mbPerSec());
                    record(system, "(c) p99 ms", c.p99Ms());
                    Result d = consumerPerf(s, "a", opts.records());
                    record(system, "(d) consume MB/s", d.mbPerSec());
                    record(system, "(d) consume records/s", d.recordsPerSec());
                    Result e = endToEnd(s, "e");
                    record(system, "(e) e2e p50 ms", e.p50Ms());
                    record(system, "(e) e2e p99 ms", e.p99Ms());
                }
                // Gigabytes per system and repetition: free them before the next one (logs stay),
                // and let the file system settle, so the next start-up does not share the disk with
                // this one's deletion and write-back.
                deleteTree(opts.work().resolve(system + "-" + rep).resolve("data"));
                settleDisk();
            }
        }
        printTable();
    }

    /**
     * CPU seconds per GB written, for the server and the clients, and how busy the machine was:
     * on a machine this small, the clients' share bounds what any server can reach.
     */
    void recordCost(String system, String workload, Cost c) {
        double gb = (double) opts.records() * opts.recordSize() / 1e9;
        record(system, workload + " server CPU s/GB", c.serverCpuS() / gb);
        record(system, workload + " client CPU s/GB", c.clientCpuS() / gb);
        record(system, workload + " machine busy %", 100 * (c.serverCpuS() + c.clientCpuS()) / (CORES * c.wallS()));
    }

    static final int CORES = Runtime.getRuntime().availableProcessors();

    /** CPU time (user + system) of a live process; 0 once it has exited. */
    static long cpuMs(Process p) {
        return p.info().totalCpuDuration().map(java.time.Duration::toMillis).orElse(0L);
    }

    /**
     * Waits for every process, sampling their CPU time every 100 ms (it cannot be read once a
     * process has exited, so the client figure misses at most the last 100 ms of each).
     */
    static long awaitAll(List<Process> running, String what) throws InterruptedException {
        long[] cpu = new long[running.size()];
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        boolean alive = true;
        while (alive) {
            alive = false;
            for (int i = 0; i < running.size(); i++) {
                if (running.get(i).isAlive()) {
                    alive = true;
                    cpu[i] = Math.max(cpu[i], cpuMs(running.get(i)));
                }
            }
            if (System.nanoTime() > deadline) {
                running.forEach(Process::destroyForcibly);
                throw new IllegalStateException(what + " did not finish");
            }
            if (alive) {
                Thread.sleep(100);
            }
        }
        return java.util.Arrays.stream(cpu).sum();
    }

    void record(String system, String metric, double value) {
        samples.computeIfAbsent(metric, k -> new LinkedHashMap<>()).computeIfAbsent(system, k -> new ArrayList<>()).add(value);
        System.out.printf("  %-32s %-13s %10.2f%n", metric, system, value);
    }

    void printTable() {
        StringBuilder t = new StringBuilder();
        t.append(String.format("%n%s, %d records x %d B, %d reps (medians)%n", LocalDateTime.now().withNano(0), opts.records(), opts.recordSize(), opts.reps()));
        t.append(String.format("| %-32s | %12s | %12s | %12s | %14s | %14s |%n", "metric", "kaas", "apache", "apache-fsync", "kaas/apache", "kaas/ap-fsync"));
        t.append("|---|---|---|---|---|---|\n");
        for (var e : samples.entrySet()) {
            double k = median(e.getValue().getOrDefault("kaas", List.of()));
            double a = median(e.getValue().getOrDefault("apache", List.of()));
            double f = median(e.getValue().getOrDefault("apache-fsync", List.of()));
            t.append(String.format("| %-32s | %12.2f | %12.2f | %12.2f | %14s | %14s |%n", e.getKey(), k, a, f, ratio(k, a), ratio(k, f)));
        }
        System.out.print(t);
        try {
            Files.writeString(opts.work().resolve("results.md"), t.toString());
            System.out.println("table written to " + opts.work().resolve("results.md"));
        } catch (IOException ignored) {
            // The table is on stdout anyway.
        }
    }

    static String ratio(double a, double b) {
        return b == 0 || Double.isNaN(a) || Double.isNaN(b) ? "-" : String.format("%.2fx", a / b);
    }

    static double median(List<Double> xs) {
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        List<Double> s = xs.stream().sorted().toList();
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    // ------------------------------------------------------------------ servers

    Server startServer(String system, int rep) throws Exception {
        return startServer(system, rep, List.of(), List.of());
    }

    /** As {@link #startServer(String, int)}, with broker settings: {@code -D} options for kaas, server.properties lines for Apache. */
    Server startServer(String system, int rep, List<String> kaasProps, List<String> apacheProps) throws Exception {
        return startServer(system, rep, kaasProps, apacheProps, List.of());
    }

    /**
     * As {@link #startServer(String, int, List, List)}, with listeners besides PLAINTEXT
     * ({@code SASL_SSL://127.0.0.1:port}, each named as its security protocol) on either system.
     * The start-up probe and the {@link Server}'s bootstrap stay on PLAINTEXT.
     */
    Server startServer(String system, int rep, List<String> kaasProps, List<String> apacheProps, List<String> moreListeners) throws Exception {
        Path dir = opts.work().resolve(system + "-" + rep);
        Files.createDirectories(dir);
        return system.equals("kaas") ? startKaas(dir, kaasProps, moreListeners)
                : startApache(dir, system.equals("apache-fsync"), apacheProps, moreListeners);
    }

    /** The name of a listener {@code NAME://host:port}. */
    static String listenerName(String listener) {
        return listener.substring(0, listener.indexOf("://"));
    }

    Server startKaas(Path dir) throws Exception {
        return startKaas(dir, List.of(), List.of());
    }

    Server startKaas(Path dir, List<String> extraProps, List<String> moreListeners) throws Exception {
        String more = moreListeners.stream().map(l -> "," + l).collect(java.util.stream.Collectors.joining());
        List<String> listenerProps = new ArrayList<>();
        if (!moreListeners.isEmpty()) {
            listenerProps.add("-Dkaas.broker.listener-security-protocol-map=PLAINTEXT:PLAINTEXT" + moreListeners.stream()
                    .map(SideBySide::listenerName).map(n -> "," + n + ":" + n).collect(java.util.stream.Collectors.joining()));
        }
        int port = freePort();
        int grpc = freePort();
        long t0 = System.nanoTime();
        Path root = opts.root();
        // As ./kaas starts them: both at once, from the app directory, with the AppCDS archive the
        // build made, and the controller on the client JIT and the serial collector.
        Process controller = launchApp(root.resolve("kaas-controller/target/quarkus-app"), dir.resolve("controller.log"),
                List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmn16m", "-Dkaas.data-dir=" + dir.resolve("data"),
                "-Dquarkus.http.port=" + freePort(), "-Dquarkus.grpc.server.port=" + grpc));
        Process broker = launchApp(root.resolve("kaas-broker/target/quarkus-app"), dir.resolve("broker.log"),
                concat(concat(concat(brokerJvmOptions(), extraProps.stream().map(p -> "-D" + p).toList()), List.of("-Dkaas.data-dir=" + dir.resolve("data"),
                "-Dquarkus.http.port=" + freePort(), "-Dquarkus.grpc.clients.controller.port=" + grpc,
                "-Dkaas.broker.listeners=PLAINTEXT://127.0.0.1:" + port + more,
                "-Dkaas.broker.advertised-listeners=PLAINTEXT://127.0.0.1:" + port + more)), listenerProps));
        long ms = firstProduce(port, t0, List.of(controller, broker));
        return new Server("kaas", List.of(controller, broker), port, ms);
    }

    Server startApache(Path dir, boolean fsync) throws Exception {
        return startApache(dir, fsync, List.of());
    }

    Server startApache(Path dir, boolean fsync, List<String> extraProps) throws Exception {
        return startApache(dir, fsync, extraProps, List.of());
    }

    Server startApache(Path dir, boolean fsync, List<String> extraProps, List<String> moreListeners) throws Exception {
        int port = freePort();
        int cport = freePort();
        Path props = dir.resolve("server.properties");
        Files.writeString(props, LocalApacheCluster.serverProperties(1, "1@127.0.0.1:" + cport, port, cport, dir.resolve("data"), 1,
                concat(fsync ? List.of("log.flush.interval.messages=1") : List.of(), extraProps), moreListeners));
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs);
        List<String> formatArgs = List.of("format", "-t", Uuid.randomUuid().toString(), "-c", props.toString());
        Process format = viaScripts ? startScript("storage.sh", formatArgs, logs, dir.resolve("format.log"))
                : start("kafka-storage.sh format", dist.toolCommand(JAVA, "-Xmx256M", logs, "kafka.tools.StorageTool", formatArgs), null,
                dir.resolve("format.log"));
        if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
            throw new IllegalStateException("kafka-storage format failed: " + Files.readString(dir.resolve("format.log")));
        }
        long t0 = System.nanoTime();
        Process kafka = viaScripts ? startScript("server-start.sh", List.of(props.toString()), logs, dir.resolve("kafka.log"))
                : start("kafka-server-start.sh", dist.serverCommand(JAVA, props, logs), null, dir.resolve("kafka.log"));
        long ms = firstProduce(port, t0, List.of(kafka));
        return new Server(fsync ? "apache-fsync" : "apache", List.of(kafka), port, ms);
    }

    /**
     * A script of the distribution's layout ({@code kaas-bench/apache-dist/bin}), run by bash with
     * nothing of this JVM's environment but PATH, HOME and JAVA_HOME: Apache as a user starts it
     * from a shell.
     */
    Process startScript(String script, List<String> args, Path logDir, Path log) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("bash", dist.bin(script).toString()));
        cmd.addAll(args);
        System.out.printf("  plain shell:%n    $ LOG_DIR=%s JAVA_HOME=%s %s%n", logDir, JAVA.getParent().getParent(), String.join(" ", cmd));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        String path = env.getOrDefault("PATH", "/usr/bin:/bin");
        String home = env.getOrDefault("HOME", "/tmp");
        env.clear();
        env.put("PATH", path);
        env.put("HOME", home);
        env.put("JAVA_HOME", JAVA.getParent().getParent().toString());
        env.put("LOG_DIR", logDir.toString());
        return pb.start();
    }

    /** The broker's JVM options as {@code ./kaas} gives them by default. */
    static final List<String> BROKER_JVM_DEFAULT = List.of("-XX:+UseParallelGC", "-Xms64m");

    /**
     * The brokers' JVM options: {@code KAAS_BENCH_BROKER_JAVA_OPTS} (split on spaces) replaces
     * the default, as {@code KAAS_JAVA_OPTS} does for {@code ./kaas}: for profiling (JFR, NMT)
     * or comparing collectors. Give the collector too, or the JVM picks its own.
     */
    static List<String> brokerJvmOptions() {
        String given = System.getenv("KAAS_BENCH_BROKER_JAVA_OPTS");
        return given == null || given.isBlank() ? BROKER_JVM_DEFAULT : List.of(given.trim().split("\\s+"));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    Process launchApp(Path appDir, Path log, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(JAVA.toString());
        if (Files.exists(appDir.resolve("app-cds.jsa"))) {
            cmd.add("-XX:SharedArchiveFile=app-cds.jsa");
        }
        cmd.addAll(args);
        cmd.add("-jar");
        cmd.add("quarkus-run.jar");
        return start(appDir.getParent().getParent().getFileName().toString(), cmd, appDir, log);
    }

    /**
     * Starts a process with its output in {@code log}. In the first repetition every command line
     * is printed (the class path of the Apache distribution abbreviated) and written out in full
     * to commands.txt in the work directory; later repetitions run the same commands with other
     * ports and directories.
     */
    Process start(String what, List<String> cmd, Path workingDir, Path log) throws IOException {
        String shownCmd = (workingDir == null ? "" : "(cd " + workingDir + " && ") + dist.show(cmd) + (workingDir == null ? "" : ")");
        if (showCommands && shown.add(shownCmd)) {
            System.out.printf("  %s:%n    $ %s%n", what, shownCmd);
            try {
                Files.writeString(opts.work().resolve("commands.txt"),
                        what + ":\n" + (workingDir == null ? "" : "cd " + workingDir + "\n") + String.join(" ", cmd) + "\n\n",
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            } catch (IOException ignored) {
                // Printed above anyway.
            }
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        if (workingDir != null) {
            pb.directory(workingDir.toFile());
        }
        return pb.start();
    }

    /**
     * Loads the producer classes in this JVM before any server starts, so the first system timed
     * does not pay for them in its start-to-first-produce.
     */
    static void warmProbe() throws IOException {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:" + freePort());
        p.put("max.block.ms", "200");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>("warmup", new byte[] {1})).get(2, TimeUnit.SECONDS);
        } catch (Exception expected) {
            // Nothing listens there: only the class loading was wanted.
        }
    }

    /** The topic the start-up probe writes to, auto-created with the broker's default partition count (1). */
    static final String PROBE_TOPIC = "warmup";

    /** Milliseconds from process launch to the first acknowledged acks=all produce (to {@link #PROBE_TOPIC}). */
    static long firstProduce(int port, long t0, List<Process> processes) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:" + port);
        p.put("max.block.ms", "500");
        p.put("delivery.timeout.ms", "1500");
        p.put("request.timeout.ms", "1000");
        p.put("reconnect.backoff.ms", "20");
        p.put("retry.backoff.ms", "20");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            for (Process pr : processes) {
                if (!pr.isAlive()) {
                    throw new IllegalStateException("server exited during start-up");
                }
            }
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                producer.send(new ProducerRecord<>(PROBE_TOPIC, new byte[] {1})).get(2, TimeUnit.SECONDS);
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            } catch (Exception notYet) {
                Thread.sleep(20);
            }
        }
        throw new IllegalStateException("no successful produce within 120 s");
    }

    static void createTopic(Server s, String name, int partitions) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", s.bootstrap());
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ workloads

    static final Pattern PRODUCER = Pattern.compile(
            "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), [\\d.]+ ms avg latency, [\\d.]+ ms max latency, (\\d+) ms 50th, \\d+ ms 95th, (\\d+) ms 99th");

    ProducerRun producerPerf(Server s, String topic, int records, String acks, int processes) throws Exception {
        return producerPerf(s, topic, records, acks, processes, List.of());
    }

    /** As {@link #producerPerf(Server, String, int, String, int)}, with more of the tool's options ({@code --transactional-id …}). */
    ProducerRun producerPerf(Server s, String topic, int records, String acks, int processes, List<String> extra) throws Exception {
        long serverCpu0 = s.cpuMs();
        long t0 = System.nanoTime();
        List<Process> running = new ArrayList<>();
        List<Path> outs = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            Path out = opts.work().resolve("producer-" + s.name() + "-" + topic + "-" + i + "-" + System.nanoTime() + ".log");
            outs.add(out);
            List<String> args = new ArrayList<>(producerArgs(s.bootstrap(), topic, records, acks));
            args.addAll(extra);
            running.add(viaScripts ? startScript("producer-perf-test.sh", args, opts.work().resolve("logs"), out)
                    : start("kafka-producer-perf-test.sh", dist.toolCommand(JAVA, "-Xmx512M", opts.work().resolve("logs"),
                    "org.apache.kafka.tools.ProducerPerformance", args), null, out));
        }
        long clientCpu = awaitAll(running, "producer-perf-test");
        Cost cost = new Cost((System.nanoTime() - t0) / 1e9, (s.cpuMs() - serverCpu0) / 1e3, clientCpu / 1e3);
        List<Result> results = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            String text = Files.readString(outs.get(i));
            Matcher m = PRODUCER.matcher(text);
            String last = null;
            while (m.find()) {
                last = m.group();
            }
            if (last == null) {
                throw new IllegalStateException("no summary from producer-perf-test: " + text);
            }
            m = PRODUCER.matcher(last);
            m.find();
            results.add(new Result(Double.parseDouble(m.group(3)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(4)),
                    Double.parseDouble(m.group(5))));
        }
        return new ProducerRun(results, cost);
    }

    List<String> producerArgs(String bootstrap, String topic, int records, String acks) {
        return List.of("--topic", topic, "--num-records", Integer.toString(records), "--record-size", Integer.toString(opts.recordSize()),
                "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bootstrap, "acks=" + acks,
                "enable.idempotence=" + acks.equals("all"), "batch.size=65536", "linger.ms=5");
    }

    Result consumerPerf(Server s, String topic, int records) throws Exception {
        return consumerPerf(s, topic, records, Map.of());
    }

    /** As {@link #consumerPerf(Server, String, int)}, with consumer settings ({@code isolation.level=read_committed}). */
    Result consumerPerf(Server s, String topic, int records, Map<String, String> consumerConfig) throws Exception {
        Path out = opts.work().resolve("consumer-" + s.name() + "-" + System.nanoTime() + ".log");
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", s.bootstrap(), "--topic", topic, "--messages",
                Integer.toString(records), "--timeout", "60000"));
        if (!consumerConfig.isEmpty()) {
            Path config = opts.work().resolve("consumer-" + System.nanoTime() + ".properties");
            StringBuilder props = new StringBuilder();
            consumerConfig.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
            Files.writeString(config, props);
            args.addAll(List.of("--consumer.config", config.toString()));
        }
        Process p = start("kafka-consumer-perf-test.sh", dist.toolCommand(JAVA, "-Xmx512M", opts.work().resolve("logs"),
                "org.apache.kafka.tools.ConsumerPerformance", args), null, out);
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("consumer-perf-test did not finish");
        }
        // CSV: start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            String[] f = line.split(",\\s*");
            if (f.length >= 10 && f[2].matches("[\\d.]+")) {
                return new Result(Double.parseDouble(f[8]), Double.parseDouble(f[9]), Double.NaN, Double.NaN);
            }
        }
        throw new IllegalStateException("no summary from consumer-perf-test: " + Files.readString(out));
    }

    static final Pattern E2E = Pattern.compile("Percentiles: 50th = (\\d+), 99th = (\\d+), 99.9th = (\\d+)");

    Result endToEnd(Server s, String topic) throws Exception {
        return endToEnd(s, topic, List.of());
    }

    /** As {@link #endToEnd(Server, String)}; {@code clientConfig} is empty or the tool's optional properties file (both clients). */
    Result endToEnd(Server s, String topic, List<String> clientConfig) throws Exception {
        Path out = opts.work().resolve("e2e-" + s.name() + "-" + System.nanoTime() + ".log");
        List<String> args = new ArrayList<>(List.of(s.bootstrap(), topic, Integer.toString(opts.e2eMessages()), "all",
                Integer.toString(opts.recordSize())));
        args.addAll(clientConfig);
        // Through kafka-run-class.sh, as the tool's documentation runs it (its default 256 MiB heap).
        Process p = start("kafka-run-class.sh EndToEndLatency", dist.toolCommand(JAVA, "-Xmx256M", opts.work().resolve("logs"),
                "org.apache.kafka.tools.EndToEndLatency", args), null, out);
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("end-to-end latency did not finish");
        }
        Matcher m = E2E.matcher(Files.readString(out));
        if (!m.find()) {
            throw new IllegalStateException("no percentiles from kafka-e2e-latency: " + Files.readString(out));
        }
        return new Result(Double.NaN, Double.NaN, Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)));
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static void settleDisk() throws InterruptedException {
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor(120, TimeUnit.SECONDS);
        } catch (IOException noSync) {
            // Not a Linux-like system: nothing to settle with.
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }


}
