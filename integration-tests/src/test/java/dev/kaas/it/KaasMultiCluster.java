package dev.kaas.it;

import java.io.IOException;
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
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A real multi-broker kaas on loopback: M controller processes and N broker processes (ids 1..N)
 * sharing one data directory, launched from the jars the reactor built, with ports chosen at run
 * time. Brokers are given every controller's address. Every wait is bounded.
 */
public final class KaasMultiCluster implements AutoCloseable {
    static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

    /**
     * One member process and its ports. The ports change only when a start finds one taken: the HTTP
     * port (only the harness uses it) at any start, the Kafka or gRPC port only before anyone was told it.
     */
    static final class Member {
        final String name;
        int http;
        int kafkaOrGrpc;
        Process process;
        int starts;
        boolean wasReady;

        Member(String name, int http, int kafkaOrGrpc) {
            this.name = name;
            this.http = http;
            this.kafkaOrGrpc = kafkaOrGrpc;
        }
    }

    private final Path dataDir;
    private final Path logDir;
    private final Map<Integer, Member> brokers = new TreeMap<>();
    private final Map<Integer, Member> controllers = new TreeMap<>();
    private final Map<String, String> brokerProps;
    private final Map<String, String> controllerProps;

    private KaasMultiCluster(Path dataDir, int brokerCount, int controllerCount, Map<String, String> brokerProps,
                             Map<String, String> controllerProps) throws IOException {
        this.dataDir = dataDir.toAbsolutePath();
        this.logDir = dataDir.resolveSibling(dataDir.getFileName() + "-logs");
        this.brokerProps = KaasCluster.withTestDefaults(brokerProps);
        this.controllerProps = controllerProps;
        Files.createDirectories(dataDir);
        Files.createDirectories(logDir);
        for (int j = 1; j <= controllerCount; j++) {
            controllers.put(j, new Member("controller-" + j, KaasCluster.freePort(), KaasCluster.freePort()));
        }
        for (int i = 1; i <= brokerCount; i++) {
            brokers.put(i, new Member("broker-" + i, KaasCluster.freePort(), KaasCluster.freePort()));
        }
    }

    /**
     * Starts {@code controllerCount} controllers (the first one leads) and the brokers listed in
     * {@code startBrokers} out of {@code brokerCount} configured (the others can join later).
     */
    public static KaasMultiCluster start(Path dataDir, int brokerCount, int controllerCount, Map<String, String> brokerProps,
                                         Map<String, String> controllerProps, int... startBrokers) throws Exception {
        KaasMultiCluster c = new KaasMultiCluster(dataDir, brokerCount, controllerCount, brokerProps, controllerProps);
        try {
            c.startController(1);
            for (int j = 2; j <= controllerCount; j++) {
                c.startController(j);
            }
            int[] which = startBrokers.length == 0 ? java.util.stream.IntStream.rangeClosed(1, brokerCount).toArray() : startBrokers;
            for (int i : which) {
                c.launchBroker(i);
            }
            for (int i : which) {
                c.awaitBrokerReady(i);
            }
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    public Path dataDir() {
        return dataDir;
    }

    public Path logDir() {
        return logDir;
    }

    public int kafkaPort(int broker) {
        return brokers.get(broker).kafkaOrGrpc;
    }

    /** Every broker's Kafka address, so a client survives any one of them being down. */
    public String bootstrap() {
        StringJoiner j = new StringJoiner(",");
        brokers.values().forEach(b -> j.add("127.0.0.1:" + b.kafkaOrGrpc));
        return j.toString();
    }

    public Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap());
        return p;
    }

    public Path brokerLog(int broker) {
        Member m = brokers.get(broker);
        return logDir.resolve(m.name + "-" + m.starts + ".log");
    }

    /** The HTTP port of broker {@code i}: health and metrics. */
    public int brokerHttpPort(int i) {
        return brokers.get(i).http;
    }

    /** The HTTP port of controller {@code j}: health, metrics, the REST admin API. */
    public int controllerHttpPort(int j) {
        return controllers.get(j).http;
    }

    public Path controllerLog(int controller) {
        Member m = controllers.get(controller);
        return logDir.resolve(m.name + "-" + m.starts + ".log");
    }

    public void startController(int j) throws Exception {
        Member m = controllers.get(j);
        for (int attempt = 1; ; attempt++) {
            List<String> args = new ArrayList<>(List.of(
                    "-Dquarkus.http.port=" + m.http,
                    "-Dquarkus.grpc.server.port=" + m.kafkaOrGrpc,
                    "-Dkaas.controller.id=controller-" + j,
                    "-Dkaas.controller.startup-grace=1s"));
            controllerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
            m.process = launch(m, KaasCluster.jarOf("kaas-controller"), args, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmn16m");
            // The first controller to start leads (ready); later ones are standbys: alive, not ready.
            // Brokers are given every controller's gRPC address when they launch.
            if (started(m, j == 1 || !anyControllerLeads(j) ? "ready" : "live", attempt,
                    m.wasReady || brokers.values().stream().anyMatch(b -> b.starts > 0))) {
                return;
            }
        }
    }

    /**
     * Waits for {@code m}'s start; false when it exited because a port was taken, after giving it a
     * fresh HTTP port and, unless someone was told it ({@code mainPortKnown}), a fresh Kafka or gRPC
     * port: the caller launches it again.
     */
    private boolean started(Member m, String health, int attempt, boolean mainPortKnown) throws Exception {
        try {
            awaitHealth(m, health);
            m.wasReady = true;
            return true;
        } catch (KaasCluster.PortInUse e) {
            if (attempt == KaasCluster.BIND_ATTEMPTS) {
                throw e;
            }
            m.http = KaasCluster.freePort();
            if (!mainPortKnown) {
                m.kafkaOrGrpc = KaasCluster.freePort();
            }
            return false;
        }
    }

    private boolean anyControllerLeads(int except) {
        return controllers.entrySet().stream().anyMatch(e -> e.getKey() != except && e.getValue().process != null
                && e.getValue().process.isAlive() && healthOk(e.getValue().http, "ready"));
    }

    public void startBroker(int i) throws Exception {
        launchBroker(i);
        awaitBrokerReady(i);
    }

    private void launchBroker(int i) throws IOException {
        Member m = brokers.get(i);
        StringJoiner controllerAddresses = new StringJoiner(",");
        controllers.values().forEach(c -> controllerAddresses.add("127.0.0.1:" + c.kafkaOrGrpc));
        List<String> args = new ArrayList<>(List.of(
                "-Dquarkus.http.port=" + m.http,
                "-Dkaas.broker.id=" + i,
                "-Dkaas.broker.controllers=" + controllerAddresses,
                "-Dkaas.broker.listeners=PLAINTEXT://127.0.0.1:" + m.kafkaOrGrpc,
                "-Dkaas.broker.advertised-listeners=PLAINTEXT://127.0.0.1:" + m.kafkaOrGrpc));
        brokerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
        m.process = launch(m, KaasCluster.jarOf("kaas-broker"), args, "-XX:+UseParallelGC", "-Xms64m");
    }

    /** Waits for broker {@code i}'s launch; one that found a port taken is launched again on fresh ports. */
    public void awaitBrokerReady(int i) throws Exception {
        Member m = brokers.get(i);
        // Clients know the Kafka port once the broker has served: after that a restart keeps it.
        for (int attempt = 1; !started(m, "ready", attempt, m.wasReady); attempt++) {
            launchBroker(i);
        }
    }

    /** SIGKILL: no shutdown hook, no flush, no handoff. */
    public void killBroker(int i) throws InterruptedException {
        kill(brokers.get(i));
    }

    /** SIGTERM: a controlled shutdown. */
    public void stopBroker(int i) throws InterruptedException {
        stop(brokers.get(i).process, 60);
    }

    public void killController(int j) throws InterruptedException {
        kill(controllers.get(j));
    }

    /** SIGSTOP a controller: its connections stay open, it answers nothing. */
    public void freezeController(int j) throws Exception {
        signal(controllers.get(j), "STOP");
    }

    public void thawController(int j) throws Exception {
        signal(controllers.get(j), "CONT");
    }

    /** The controller's process id, for a thread dump when a test fails. */
    public long controllerPid(int j) {
        Member m = controllers.get(j);
        return m.process == null ? -1 : m.process.pid();
    }

    public boolean controllerReady(int j) {
        Member m = controllers.get(j);
        return m.process != null && m.process.isAlive() && healthOk(m.http, "ready");
    }

    /** SIGSTOP: the process hangs with its connections open, as a stuck JVM or a paused VM would. */
    public void freezeBroker(int i) throws Exception {
        signal(brokers.get(i), "STOP");
    }

    public void thawBroker(int i) throws Exception {
        signal(brokers.get(i), "CONT");
    }

    public boolean brokerAlive(int i) {
        Process p = brokers.get(i).process;
        return p != null && p.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        List<Member> all = new ArrayList<>(brokers.values());
        all.addAll(controllers.values());
        for (Member m : all) {
            if (m.process != null && m.process.isAlive()) {
                try {
                    signal(m, "CONT");
                } catch (Exception ignored) {
                    // best effort: a frozen broker must be thawed to stop
                }
            }
        }
        for (Member m : brokers.values()) {
            stop(m.process, 30);
        }
        for (Member m : controllers.values()) {
            stop(m.process, 30);
        }
    }

    private static void signal(Member m, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(m.process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + m.name + " failed");
        }
    }

    private static void kill(Member m) throws InterruptedException {
        m.process.destroyForcibly();
        if (!m.process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(m.name + " did not die");
        }
    }

    private static void stop(Process p, int seconds) throws InterruptedException {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Process launch(Member m, Path jar, List<String> props, String... jvm) throws IOException {
        m.starts++;
        List<String> args = new ArrayList<>();
        args.add("-Xmx384m");
        args.addAll(List.of(jvm));
        args.add("-Dkaas.data-dir=" + dataDir);
        args.addAll(props);
        return KaasCluster.app(jar, args).redirectErrorStream(true)
                .redirectOutput(logDir.resolve(m.name + "-" + m.starts + ".log").toFile()).start();
    }

    private static boolean healthOk(int http, String which) {
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            var r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/q/health/" + which))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void awaitHealth(Member m, String which) throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!m.process.isAlive()) {
                Path log = logDir.resolve(m.name + "-" + m.starts + ".log");
                String message = m.name + " exited during start-up with " + m.process.exitValue()
                        + "; the end of its log (" + logDir + "):\n" + KaasCluster.tail(log, 30);
                if (Files.exists(log) && KaasCluster.portTaken(Files.readString(log))) {
                    throw new KaasCluster.PortInUse(message);
                }
                throw new IllegalStateException(message);
            }
            if (healthOk(m.http, which) && KaasCluster.listeningOn(logDir.resolve(m.name + "-" + m.starts + ".log"), m.http)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(m.name + " not " + which + " within " + READY_TIMEOUT + " (see " + logDir + ")");
    }
}
