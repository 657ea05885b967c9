package dev.kaas.bench;

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
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * A multi-broker kaas on loopback for the benchmarks: one controller and N brokers (ids 1..N)
 * sharing one data directory, each broker with its own Kafka listener and HTTP port, all ports
 * chosen at run time. Every process starts as {@code ./kaas} starts its pair: from the app
 * directory with the AppCDS archive the build made, the controller on the client JIT and the
 * serial collector, brokers on G1, default heaps. Brokers can be killed (SIGKILL), frozen
 * (SIGSTOP), thawed and started again; every wait is bounded.
 */
final class LocalKaasCluster implements ServerSystem {
    static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

    private final SideBySide launcher;
    private final Path dir;
    private final Path data;
    private final Map<String, String> controllerProps;
    private final int controllerHttp;
    private final int controllerGrpc;
    private final int[] kafka;
    private final int[] http;
    private final int[] starts;
    private final Process[] brokers;
    private Process controller;
    private long startToFirstProduceMs;

    private LocalKaasCluster(SideBySide launcher, Path dir, int brokerCount, Map<String, String> controllerProps) throws IOException {
        this.launcher = launcher;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.controllerProps = controllerProps;
        Files.createDirectories(data);
        Files.createDirectories(dir.resolve("logs"));
        controllerHttp = SideBySide.freePort();
        controllerGrpc = SideBySide.freePort();
        kafka = new int[brokerCount + 1];
        http = new int[brokerCount + 1];
        starts = new int[brokerCount + 1];
        brokers = new Process[brokerCount + 1];
        for (int i = 1; i <= brokerCount; i++) {
            kafka[i] = SideBySide.freePort();
            http[i] = SideBySide.freePort();
        }
    }

    /**
     * Launches the controller and every broker at once, as {@code ./kaas} does, and returns when
     * all are ready and an acks=all produce has been acknowledged (its time from launch is
     * {@link #startToFirstProduceMs}).
     */
    static LocalKaasCluster start(SideBySide launcher, Path dir, int brokerCount, Map<String, String> controllerProps) throws Exception {
        LocalKaasCluster c = new LocalKaasCluster(launcher, dir, brokerCount, controllerProps);
        try {
            long t0 = System.nanoTime();
            c.launchController();
            for (int i = 1; i <= brokerCount; i++) {
                c.launchBroker(i);
            }
            awaitReady("controller", c.controller, c.controllerHttp);
            for (int i = 1; i <= brokerCount; i++) {
                c.awaitBrokerReady(i);
            }
            c.startToFirstProduceMs = SideBySide.firstProduce(c.kafka[1], t0, c.processes());
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    int brokerCount() {
        return brokers.length - 1;
    }

    @Override
    public long startToFirstProduceMs() {
        return startToFirstProduceMs;
    }

    int kafkaPort(int broker) {
        return kafka[broker];
    }

    /** Every broker's address, so a client survives any one of them being down. */
    @Override
    public String bootstrap() {
        StringJoiner j = new StringJoiner(",");
        for (int i = 1; i < kafka.length; i++) {
            j.add("127.0.0.1:" + kafka[i]);
        }
        return j.toString();
    }

    /** The live server processes: the controller first, then the brokers. */
    @Override
    public List<Process> processes() {
        List<Process> out = new ArrayList<>();
        if (controller != null && controller.isAlive()) {
            out.add(controller);
        }
        for (int i = 1; i < brokers.length; i++) {
            if (brokers[i] != null && brokers[i].isAlive()) {
                out.add(brokers[i]);
            }
        }
        return out;
    }

    /** A view for SideBySide's workloads (CPU, RSS, bootstrap); closing the cluster stays this class's job. */
    SideBySide.Server asServer(String name) {
        return new SideBySide.Server(name, processes(), kafka[1], startToFirstProduceMs);
    }

    Path dataDir() {
        return data;
    }

    Path logDir() {
        return dir.resolve("logs");
    }

    /** SIGKILL: no shutdown hook, no flush, no handoff. Returns once the process is reaped. */
    void kill(int broker) throws InterruptedException {
        Process p = brokers[broker];
        p.destroyForcibly();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("broker " + broker + " did not die");
        }
    }

    /** SIGSTOP: the process hangs with its connections open, as a stuck JVM or a paused VM would. */
    void freeze(int broker) throws Exception {
        signal(brokers[broker], "STOP");
    }

    void thaw(int broker) throws Exception {
        signal(brokers[broker], "CONT");
    }

    /** Starts a broker that was killed (or stopped) again, under the same id and ports, and waits until it is ready. */
    void restart(int broker) throws Exception {
        if (brokers[broker] != null && brokers[broker].isAlive()) {
            throw new IllegalStateException("broker " + broker + " is still running");
        }
        launchBroker(broker);
        awaitBrokerReady(broker);
    }

    void awaitBrokerReady(int broker) throws Exception {
        awaitReady("broker " + broker + " (log " + logDir().resolve("broker-" + broker + "-" + starts[broker] + ".log") + ")",
                brokers[broker], http[broker]);
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 1; i < brokers.length; i++) {
            if (brokers[i] != null && brokers[i].isAlive()) {
                try {
                    signal(brokers[i], "CONT");
                } catch (Exception ignored) {
                    // best effort: a frozen broker must be thawed to stop
                }
            }
        }
        for (int i = brokers.length - 1; i >= 1; i--) {
            stop(brokers[i]);
        }
        stop(controller);
    }

    private void launchController() throws IOException {
        List<String> args = new ArrayList<>(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmn16m", "-Dkaas.data-dir=" + data,
                "-Dquarkus.http.port=" + controllerHttp, "-Dquarkus.grpc.server.port=" + controllerGrpc));
        controllerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
        controller = launcher.launchApp(launcher.root().resolve("kaas-controller/target/quarkus-app"), logDir().resolve("controller.log"), args);
    }

    private void launchBroker(int i) throws IOException {
        starts[i]++;
        List<String> args = new ArrayList<>(SideBySide.brokerJvmOptions());
        args.addAll(List.of("-Dkaas.data-dir=" + data, "-Dquarkus.http.port=" + http[i], "-Dkaas.broker.id=" + i,
                "-Dkaas.broker.controllers=127.0.0.1:" + controllerGrpc,
                "-Dkaas.broker.listeners=PLAINTEXT://127.0.0.1:" + kafka[i],
                "-Dkaas.broker.advertised-listeners=PLAINTEXT://127.0.0.1:" + kafka[i]));
        brokers[i] = launcher.launchApp(launcher.root().resolve("kaas-broker/target/quarkus-app"),
                logDir().resolve("broker-" + i + "-" + starts[i] + ".log"), args);
    }

    private static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
        }
    }

    private static void stop(Process p) throws InterruptedException {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    static boolean ready(int httpPort) {
        try {
            var r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/health/ready"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void awaitReady(String what, Process p, int httpPort) throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(what + " exited during start-up with " + p.exitValue());
            }
            if (ready(httpPort)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(what + " not ready within " + READY_TIMEOUT);
    }
}
