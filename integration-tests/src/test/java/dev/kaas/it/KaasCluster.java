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

    private final Path dataDir;
    private final Path logDir;
    private final int kafkaPort;
    private final int brokerHttp = freePort();
    private final int controllerHttp = freePort();
    private final int controllerGrpc = freePort();
    private final Map<String, String> brokerProps;
    private Process controller;
    private Process broker;
    private int brokerStarts;

    private String listeners;
    private String advertised;

    private KaasCluster(Path dataDir, Map<String, String> brokerProps, int kafkaPort) throws IOException {
        this.dataDir = dataDir;
        this.kafkaPort = kafkaPort;
        this.listeners = "PLAINTEXT://127.0.0.1:" + kafkaPort;
        this.advertised = listeners;
        this.logDir = dataDir.resolveSibling(dataDir.getFileName() + "-logs");
        this.brokerProps = brokerProps;
        Files.createDirectories(logDir);
    }

    public static KaasCluster start(Path dataDir) throws Exception {
        return start(dataDir, Map.of());
    }

    public static KaasCluster start(Path dataDir, Map<String, String> brokerProps) throws Exception {
        return launch(new KaasCluster(dataDir, brokerProps, freePort()));
    }

    /** A cluster whose broker has the given Apache-syntax listeners; the first one is {@link #kafkaPort()}. */
    public static KaasCluster startWithListeners(Path dataDir, String listeners, String advertised) throws Exception {
        int first = Integer.parseInt(listeners.split(",")[0].replaceAll(".*:", ""));
        KaasCluster c = new KaasCluster(dataDir, Map.of(), first);
        c.listeners = listeners;
        c.advertised = advertised;
        return launch(c);
    }

    private static KaasCluster launch(KaasCluster c) throws Exception {
        try {
            c.startController();
            c.startBroker();
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    public String bootstrap() {
        return "127.0.0.1:" + kafkaPort;
    }

    public int kafkaPort() {
        return kafkaPort;
    }

    public Path dataDir() {
        return dataDir;
    }

    public Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap());
        return p;
    }

    public void startController() throws Exception {
        controller = launch("controller", jar("kaas-controller"), List.of(
                "-Dquarkus.http.port=" + controllerHttp,
                "-Dquarkus.grpc.server.port=" + controllerGrpc,
                "-Dkaas.controller.startup-grace=1s"));
        awaitReady(controller, controllerHttp, "controller");
    }

    public void startBroker() throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "-Dquarkus.http.port=" + brokerHttp,
                "-Dquarkus.grpc.clients.controller.port=" + controllerGrpc,
                "-Dkaas.broker.listeners=" + listeners,
                "-Dkaas.broker.advertised-listeners=" + advertised));
        brokerProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
        broker = launch("broker-" + (++brokerStarts), jar("kaas-broker"), args);
        awaitReady(broker, brokerHttp, "broker");
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

    private static Path jar(String module) {
        Path jar = ROOT.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("missing " + jar + ": build the reactor first");
        }
        return jar;
    }

    private Process launch(String name, Path jar, List<String> props) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-Dkaas.data-dir=" + dataDir);
        cmd.addAll(props);
        cmd.add("-jar");
        cmd.add(jar.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(logDir.resolve(name + ".log").toFile());
        return pb.start();
    }

    private static void awaitReady(Process p, int httpPort, String what) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(what + " exited during start-up with " + p.exitValue());
            }
            try {
                var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(what + " not ready within " + READY_TIMEOUT);
    }

    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
