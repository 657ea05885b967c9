package dev.kaas.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A real standalone kaas on loopback: the controller and broker jars the reactor just built,
 * launched as child processes with ports chosen at run time and a data directory of the test's.
 * Every wait is bounded.
 */
public final class KaasCluster implements AutoCloseable {
    static final Path ROOT = Path.of(System.getProperty("kaas.root", "..")).toAbsolutePath().normalize();
    static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** Starts tried before giving up when a port chosen at run time was taken before the process bound it. */
    static final int BIND_ATTEMPTS = 5;

    private final Path dataDir;
    private final Path logDir;
    private int kafkaPort;
    /** The test fixed the Kafka listeners: their ports are not this class's to change. */
    private boolean listenersFixed;
    private int brokerHttp = freePort();
    private int controllerHttp = freePort();
    private int controllerGrpc = freePort();
    private boolean brokerWasReady;
    private Map<String, String> brokerProps;
    /** System properties of the controller beyond what every test controller gets. */
    private Map<String, String> controllerProps = Map.of();
    private Process controller;
    private Process broker;
    private int brokerStarts;

    private String listeners;
    private String advertised;
    /** Brokers 2..N of a cluster started with {@link #startForClients}; broker 1 is {@link #broker}. */
    private final List<Process> otherBrokers = new ArrayList<>();
    private int brokerCount = 1;

    private KaasCluster(Path dataDir, Map<String, String> brokerProps, int kafkaPort) throws IOException {
        this.dataDir = dataDir.toAbsolutePath();
        this.kafkaPort = kafkaPort;
        this.listeners = "PLAINTEXT://127.0.0.1:" + kafkaPort;
        this.advertised = listeners;
        this.logDir = dataDir.resolveSibling(dataDir.getFileName() + "-logs");
        this.brokerProps = withTestDefaults(brokerProps);
        Files.createDirectories(logDir);
    }

    /**
     * The broker settings every test cluster starts with unless the test sets them: as Apache's own
     * test harness and its quickstart {@code server.properties} do, a new group's first rebalance does
     * not wait {@code group.initial.rebalance.delay.ms} (3 s) for more members. The delay itself is
     * unit-tested ({@code GroupShardTest}).
     */
    static Map<String, String> withTestDefaults(Map<String, String> brokerProps) {
        Map<String, String> props = new java.util.HashMap<>(brokerProps);
        props.putIfAbsent("kaas.group.initial-rebalance-delay", "0s");
        return Map.copyOf(props);
    }

    public static KaasCluster start(Path dataDir) throws Exception {
        return start(dataDir, Map.of());
    }

    public static KaasCluster start(Path dataDir, Map<String, String> brokerProps) throws Exception {
        return launch(new KaasCluster(dataDir, brokerProps, freePort()));
    }

    /** As {@link #start(Path, Map)}, the controller started with {@code controllerProps} as well. */
    public static KaasCluster start(Path dataDir, Map<String, String> brokerProps, Map<String, String> controllerProps) throws Exception {
        KaasCluster c = new KaasCluster(dataDir, brokerProps, freePort());
        c.controllerProps = Map.copyOf(controllerProps);
        return launch(c);
    }

    /**
     * A cluster for client and tool tests: one broker, or {@code kaas.it.brokers} brokers when the
     * build runs the client suites against a multi-broker cluster (the {@code three-brokers}
     * failsafe execution). Clients bootstrap from broker 1 and find the others through Metadata,
     * as against an Apache cluster.
     */
    public static KaasCluster startForClients(Path dataDir) throws Exception {
        KaasCluster c = new KaasCluster(dataDir, Map.of(), freePort());
        c.brokerCount = Integer.getInteger("kaas.it.brokers", 1);
        launch(c);
        // The suite must not pass on fewer brokers than it claims to run on.
        try (var admin = org.apache.kafka.clients.admin.Admin.create(c.clientProps())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int seen = 0;
            while (System.nanoTime() < deadline) {
                seen = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).size();
                if (seen == c.brokerCount) {
                    return c;
                }
                Thread.sleep(100);
            }
            c.close();
            throw new IllegalStateException("cluster lists " + seen + " brokers, not " + c.brokerCount);
        }
    }

    /** A cluster whose broker has the given Apache-syntax listeners; the first one is {@link #kafkaPort()}. */
    public static KaasCluster startWithListeners(Path dataDir, String listeners, String advertised) throws Exception {
        return startWithListeners(dataDir, listeners, advertised, Map.of());
    }

    /** As {@link #startWithListeners(Path, String, String)}, with broker settings (system properties). */
    public static KaasCluster startWithListeners(Path dataDir, String listeners, String advertised, Map<String, String> brokerProps)
            throws Exception {
        int first = Integer.parseInt(listeners.split(",")[0].replaceAll(".*:", ""));
        KaasCluster c = new KaasCluster(dataDir, brokerProps, first);
        c.listeners = listeners;
        c.advertised = advertised;
        c.listenersFixed = true;
        return launch(c);
    }

    private static KaasCluster launch(KaasCluster c) throws Exception {
        try {
            c.startController();
            c.startBroker();
            for (int id = 2; id <= c.brokerCount; id++) {
                c.startOtherBroker(id);
            }
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    public String bootstrap() {
        return "127.0.0.1:" + kafkaPort;
    }

    /** Broker 1's HTTP port: health and the Prometheus scrape endpoint. */
    public int brokerHttpPort() {
        return brokerHttp;
    }

    /** The controller's HTTP port: health and its Prometheus scrape endpoint (consumer lag). */
    public int controllerHttpPort() {
        return controllerHttp;
    }

    public int kafkaPort() {
        return kafkaPort;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** Bytes of partition 0's segment files ({@code .log}) of {@code topic}: what retention and compaction free. */
    /** The base offset of the partition-0 segment appends go to (the active one, which no cleaner touches). */
    public long activeSegmentBase(String topic) throws IOException {
        try (java.util.stream.Stream<Path> dirs = Files.list(dataDir)) {
            Path dir = dirs.filter(d -> d.getFileName().toString().startsWith(topic + "-")).findFirst().orElseThrow().resolve("0");
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                return files.map(f -> f.getFileName().toString()).filter(n -> n.matches("[0-9a-f]{8}-[0-9]{20}\\.log"))
                        .mapToLong(n -> Long.parseLong(n.substring(9, 29))).max().orElse(0);
            }
        }
    }

    public long segmentBytes(String topic) throws IOException {
        try (java.util.stream.Stream<Path> dirs = Files.list(dataDir)) {
            Path dir = dirs.filter(d -> d.getFileName().toString().startsWith(topic + "-")).findFirst().orElseThrow().resolve("0");
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                return files.filter(f -> f.toString().endsWith(".log")).mapToLong(f -> f.toFile().length()).sum();
            }
        }
    }

    public Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap());
        return p;
    }

    /*
     * A free port is found by binding port 0 and closing it, so another process on the machine can take it
     * before the child binds it. The children cannot report a port-0 choice back, so a start that fails on
     * "address already in use" is retried with fresh ports for everything nobody has been told about yet.
     */
    public void startController() throws Exception {
        for (int attempt = 1; ; attempt++) {
            List<String> args = new ArrayList<>(List.of(
                    "-Dquarkus.http.port=" + controllerHttp,
                    "-Dquarkus.grpc.server.port=" + controllerGrpc,
                    "-Dkaas.controller.startup-grace=1s"));
            controllerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
            controller = launch("controller", jar("kaas-controller"), args);
            try {
                awaitReady(controller, controllerHttp, "controller", controllerLog());
                return;
            } catch (PortInUse e) {
                if (attempt == BIND_ATTEMPTS) {
                    throw e;
                }
                controllerHttp = freePort();
                if (brokerStarts == 0) {
                    controllerGrpc = freePort();
                }
            }
        }
    }

    /** Sets a broker property for the broker's next start (a restart with another setting). */
    public void brokerProperty(String key, String value) {
        Map<String, String> props = new java.util.HashMap<>(brokerProps);
        props.put(key, value);
        brokerProps = props;
    }

    public void startBroker() throws Exception {
        for (int attempt = 1; ; attempt++) {
            List<String> args = new ArrayList<>(List.of(
                    "-Dquarkus.http.port=" + brokerHttp,
                    "-Dquarkus.grpc.clients.controller.port=" + controllerGrpc,
                    "-Dkaas.broker.listeners=" + listeners,
                    "-Dkaas.broker.advertised-listeners=" + advertised));
            brokerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
            broker = launch("broker-" + (++brokerStarts), jar("kaas-broker"), args);
            try {
                awaitReady(broker, brokerHttp, "broker", brokerLog());
                brokerWasReady = true;
                return;
            } catch (PortInUse e) {
                if (attempt == BIND_ATTEMPTS) {
                    throw e;
                }
                brokerHttp = freePort();
                // Clients know the Kafka port once the broker has served: after that a restart keeps it.
                if (!listenersFixed && !brokerWasReady) {
                    kafkaPort = freePort();
                    listeners = "PLAINTEXT://127.0.0.1:" + kafkaPort;
                    advertised = listeners;
                }
            }
        }
    }

    private void startOtherBroker(int id) throws Exception {
        for (int attempt = 1; ; attempt++) {
            int http = freePort();
            int kafka = freePort();
            List<String> args = new ArrayList<>(List.of(
                    "-Dquarkus.http.port=" + http,
                    "-Dquarkus.grpc.clients.controller.port=" + controllerGrpc,
                    "-Dkaas.broker.id=" + id,
                    "-Dkaas.broker.listeners=PLAINTEXT://127.0.0.1:" + kafka,
                    "-Dkaas.broker.advertised-listeners=PLAINTEXT://127.0.0.1:" + kafka));
            // Configured as broker 1 is, as an operator configures a cluster.
            brokerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
            Process p = launch("broker-id" + id + "-" + attempt, jar("kaas-broker"), args);
            otherBrokers.add(p);
            try {
                awaitReady(p, http, "broker " + id, logDir.resolve("broker-id" + id + "-" + attempt + ".log"));
                return;
            } catch (PortInUse e) {
                if (attempt == BIND_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** SIGKILL: no shutdown hook, no flush, no snapshot. */
    public void killBroker() throws InterruptedException {
        broker.destroyForcibly();
        if (!broker.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("broker did not die");
        }
    }

    /** SIGTERM: a clean shutdown. */
    public void stopBroker() throws InterruptedException {
        stop(broker);
    }

    public void stopController() throws InterruptedException {
        stop(controller);
    }

    /** The broker's process id, to measure what it holds. */
    public long brokerPid() {
        return broker.pid();
    }

    /**
     * The broker's resident set after a full collection (jcmd GC.run), from /proc: what it
     * holds, with garbage not counted.
     */
    public long brokerRssAfterGc() throws Exception {
        long pid = brokerPid();
        Path jcmd = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
        Process gc = new ProcessBuilder(jcmd.toString(), String.valueOf(pid), "GC.run").redirectErrorStream(true).start();
        gc.getInputStream().readAllBytes();
        if (!gc.waitFor(60, TimeUnit.SECONDS)) {
            gc.destroyForcibly();
            throw new IllegalStateException("jcmd GC.run did not finish");
        }
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    public boolean brokerAlive() {
        return broker != null && broker.isAlive();
    }

    /** The log of the controller's latest start. */
    public Path controllerLog() {
        return logDir.resolve("controller.log");
    }

    public Path brokerLog() {
        return logDir.resolve("broker-" + brokerStarts + ".log");
    }

    @Override
    public void close() throws InterruptedException {
        for (Process p : otherBrokers) {
            stop(p);
        }
        stop(broker);
        stop(controller);
    }

    private static void stop(Process p) throws InterruptedException {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The Quarkus run jar of {@code module}, as the reactor built it. */
    static Path jarOf(String module) {
        return jar(module);
    }

    private static Path jar(String module) {
        Path jar = ROOT.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("missing " + jar + ": build the reactor first");
        }
        return jar;
    }

    /**
     * How a test starts a Quarkus app: from its own directory, with the class-data archive its
     * build made ({@code quarkus.package.jar.appcds.enabled}; the JVM maps it only for the jar
     * path it was made with, so the path is relative), as {@code ./kaas} starts it. About a
     * tenth less CPU per start; a process that cannot map it runs without it.
     */
    static ProcessBuilder app(Path jar, List<String> jvm) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Files.exists(jar.resolveSibling("app-cds.jsa"))) {
            cmd.add("-XX:SharedArchiveFile=app-cds.jsa");
            cmd.add("-Xlog:cds=off");
            cmd.add("-Xlog:cds+dynamic=off");
        }
        cmd.addAll(jvm);
        cmd.add("-jar");
        cmd.add(jar.getFileName().toString());
        return new ProcessBuilder(cmd).directory(jar.getParent().toFile());
    }

    private Process launch(String name, Path jar, List<String> props) throws IOException {
        List<String> jvm = new ArrayList<>();
        jvm.add("-Xmx512m");
        // The single-broker suites time nothing: C1 alone starts a broker with about 40% less CPU,
        // which two test JVMs side by side on two cores need more than peak speed.
        jvm.add("-XX:TieredStopAtLevel=1");
        jvm.add("-Dkaas.data-dir=" + dataDir);
        jvm.addAll(props);
        ProcessBuilder pb = app(jar, jvm).redirectErrorStream(true)
                .redirectOutput(logDir.resolve(name + ".log").toFile());
        return pb.start();
    }

    /** A child exited during start-up because a port it was given had been taken in the meantime. */
    static final class PortInUse extends IllegalStateException {
        PortInUse(String message) {
            super(message);
        }
    }

    private static void awaitReady(Process p, int httpPort, String what, Path log) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                String message = what + " exited during start-up with " + p.exitValue();
                if (Files.exists(log) && portTaken(Files.readString(log))) {
                    throw new PortInUse(message + ": a port was taken (" + log + ")");
                }
                throw new IllegalStateException(message);
            }
            try {
                var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && listeningOn(log, httpPort)) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(what + " not ready within " + READY_TIMEOUT + "\n--- log tail:\n" + tail(log, 60)
                + "\n--- threads:\n" + threadDump(p.pid()));
    }

    /**
     * Whether the process writing {@code log} said it listens on {@code port}: a health answer on
     * a port proves nothing by itself, since another test's process may hold a port chosen free
     * a moment before (ours then fails to bind and exits).
     */
    static boolean listeningOn(Path log, int port) {
        try {
            return Files.exists(log) && Files.readString(log).contains("Listening on: http://127.0.0.1:" + port);
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    /**
     * The last lines of a process's log, for a failure's message (its directory is deleted with the
     * test's); the health checks' per-probe lines (SRHCK01001) left out.
     */
    static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log).stream().filter(l -> !l.contains("SRHCK01001")).toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(no log: " + e + ")";
        }
    }

    /** A stuck process's threads (jcmd Thread.print), cut to 40,000 characters. */
    static String threadDump(long pid) {
        try {
            Path out = Files.createTempFile("kaas-threads-", ".txt");
            Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid),
                    "Thread.print").redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!jcmd.waitFor(20, TimeUnit.SECONDS)) {
                jcmd.destroyForcibly();
            }
            String dump = Files.readString(out);
            Files.deleteIfExists(out);
            return dump.length() > 40_000 ? dump.substring(0, 40_000) : dump;
        } catch (IOException | InterruptedException | RuntimeException e) {
            return "(no thread dump: " + e + ")";
        }
    }

    /** Vert.x/Netty and gRPC say "Address already in use"; Quarkus HTTP says the port "seems to be in use". */
    static boolean portTaken(String log) {
        return log.contains("already in use") || log.contains("seems to be in use");
    }

    /** A free loopback port outside the kernel's ephemeral range (see {@link TestPorts}). */
    public static int freePort() {
        return TestPorts.one();
    }
}
