package dev.kaas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;

/**
 * Apache Kafka 3.7.2 on loopback as N KRaft nodes in combined mode: every node is broker and
 * controller and every node a voter ({@code controller.quorum.voters=1@host:c1,2@host:c2,...}),
 * node ids 1..N, each with its own ports, {@code server.properties} and log directory, all
 * formatted with one cluster id by {@code kafka-storage format} and started as
 * {@code bin/kafka-server-start.sh} starts them (through {@link ApacheDist}: the distribution's own
 * jars, log4j configuration and JVM flags, 1 GiB heap each). One node is the single-node baseline
 * of {@link SideBySide}; three are the smallest quorum that survives one node's loss.
 */
final class LocalApacheCluster implements ServerSystem {
    private final List<Process> nodes = new ArrayList<>();
    private final int[] ports;
    private long startToFirstProduceMs;

    private LocalApacheCluster(int n) {
        this.ports = new int[n];
    }

    /**
     * The {@code server.properties} of node {@code nodeId}: combined mode, PLAINTEXT on
     * 127.0.0.1:{@code port}, the controller listener on {@code controllerPort}, internal topics
     * at {@code internalRf} replicas, then {@code extra} lines.
     */
    static String serverProperties(int nodeId, String voters, int port, int controllerPort, Path logDirs, int internalRf, List<String> extra) {
        return serverProperties(nodeId, voters, port, controllerPort, logDirs, internalRf, extra, List.of());
    }

    /**
     * As above, with listeners besides PLAINTEXT ({@code SASL_SSL://127.0.0.1:port}), each named
     * as its security protocol, advertised as given; their settings go into {@code extra}.
     */
    static String serverProperties(int nodeId, String voters, int port, int controllerPort, Path logDirs, int internalRf, List<String> extra,
            List<String> moreListeners) {
        String more = moreListeners.stream().map(l -> "," + l).collect(java.util.stream.Collectors.joining());
        String moreProtocols = moreListeners.stream().map(SideBySide::listenerName).map(n -> "," + n + ":" + n)
                .collect(java.util.stream.Collectors.joining());
        List<String> lines = new ArrayList<>(List.of(
                "process.roles=broker,controller", "node.id=" + nodeId, "controller.quorum.voters=" + voters,
                "listeners=PLAINTEXT://127.0.0.1:" + port + more + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port + more, "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT" + moreProtocols, "log.dirs=" + logDirs,
                "num.partitions=1", "offsets.topic.replication.factor=" + internalRf, "transaction.state.log.replication.factor=" + internalRf,
                "transaction.state.log.min.isr=" + Math.min(internalRf, 2)));
        lines.addAll(extra);
        return String.join("\n", lines) + "\n";
    }

    /**
     * Formats and starts {@code n} nodes under {@code dir} ({@code node-<id>/server.properties},
     * {@code node-<id>/data}, {@code node-<id>/logs}) and returns when every broker is registered
     * and an acks=all produce has been acknowledged. {@code extra} lines go into every node's
     * properties (e.g. {@code default.replication.factor=3}).
     */
    static LocalApacheCluster start(SideBySide launcher, ApacheDist dist, Path dir, int n, List<String> extra) throws Exception {
        LocalApacheCluster c = new LocalApacheCluster(n);
        try {
            int[] controllerPorts = new int[n];
            StringJoiner voters = new StringJoiner(",");
            for (int i = 0; i < n; i++) {
                c.ports[i] = SideBySide.freePort();
                controllerPorts[i] = SideBySide.freePort();
                voters.add((i + 1) + "@127.0.0.1:" + controllerPorts[i]);
            }
            String clusterId = Uuid.randomUuid().toString();
            List<Process> formats = new ArrayList<>();
            List<Path> props = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Path node = dir.resolve("node-" + (i + 1));
                Files.createDirectories(node.resolve("logs"));
                Path p = node.resolve("server.properties");
                Files.writeString(p, serverProperties(i + 1, voters.toString(), c.ports[i], controllerPorts[i], node.resolve("data"),
                        Math.min(n, 3), extra));
                props.add(p);
                formats.add(launcher.start("kafka-storage.sh format", dist.toolCommand(SideBySide.JAVA, "-Xmx256M", node.resolve("logs"),
                        "kafka.tools.StorageTool", List.of("format", "-t", clusterId, "-c", p.toString())), null, node.resolve("format.log")));
            }
            for (int i = 0; i < n; i++) {
                Process f = formats.get(i);
                if (!f.waitFor(120, TimeUnit.SECONDS) || f.exitValue() != 0) {
                    f.destroyForcibly();
                    throw new IllegalStateException("kafka-storage format of node " + (i + 1) + " failed: "
                            + Files.readString(dir.resolve("node-" + (i + 1)).resolve("format.log")));
                }
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                Path node = dir.resolve("node-" + (i + 1));
                c.nodes.add(launcher.start("kafka-server-start.sh", dist.serverCommand(SideBySide.JAVA, props.get(i), node.resolve("logs")), null,
                        node.resolve("kafka.log")));
            }
            c.awaitBrokers(n);
            c.startToFirstProduceMs = SideBySide.firstProduce(c.ports[0], t0, c.nodes);
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** Waits until the cluster's metadata lists {@code n} brokers, so a topic created next is spread over all of them. */
    private void awaitBrokers(int n) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap());
        p.put("request.timeout.ms", "3000");
        p.put("default.api.timeout.ms", "5000");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        try (Admin admin = Admin.create(p)) {
            while (System.nanoTime() < deadline) {
                for (Process node : nodes) {
                    if (!node.isAlive()) {
                        throw new IllegalStateException("an Apache node exited during start-up");
                    }
                }
                try {
                    if (admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() >= n) {
                        return;
                    }
                } catch (Exception notYet) {
                    // not listening yet, or no quorum yet
                }
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException(n + " Apache brokers not registered within 120 s");
    }

    @Override
    public long startToFirstProduceMs() {
        return startToFirstProduceMs;
    }

    @Override
    public String bootstrap() {
        StringJoiner j = new StringJoiner(",");
        for (int port : ports) {
            j.add("127.0.0.1:" + port);
        }
        return j.toString();
    }

    @Override
    public List<Process> processes() {
        return List.copyOf(nodes);
    }

    /** A view for SideBySide's workloads (CPU, RSS, bootstrap); closing the cluster stays this class's job. */
    SideBySide.Server asServer(String name) {
        return new SideBySide.Server(name, processes(), ports[0], startToFirstProduceMs);
    }

    @Override
    public void close() throws InterruptedException {
        // All at once: a KRaft node that loses its quorum while shutting down waits for it.
        nodes.forEach(Process::destroy);
        for (Process p : nodes) {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
