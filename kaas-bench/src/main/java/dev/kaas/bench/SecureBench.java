package dev.kaas.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;

/**
 * {@code ./kaas bench --sasl-ssl}: the side-by-side workloads over a SASL_SSL listener with
 * SCRAM-SHA-512, kaas against Apache Kafka 3.7.2 (default, and {@code log.flush.interval.messages=1})
 * configured alike: the same keystore, the same listener settings (Apache's names, which kaas
 * takes as they are), the same user, created through the Admin API on the PLAINTEXT listener
 * (KIP-554). Every client of the workloads goes through the SASL_SSL listener:
 * <ul>
 *   <li>(a) producer-perf-test, 1 partition, acks=all, idempotent;</li>
 *   <li>(b) the same over 12 partitions from 4 producer processes;</li>
 *   <li>(d) consumer-perf-test reading (a)'s topic;</li>
 *   <li>(e) end-to-end latency, one record at a time.</li>
 * </ul>
 * The target: at least 1.0x Apache.
 *
 * <p>{@code --pairs N} adds a paired measurement of (a) and (d): kaas and Apache (default) up side
 * by side, (a)'s topic written to each, then N rounds in which each system, in alternating order
 * (ABBA), runs (a) into a fresh topic and (d) over the first topic; the ratios are taken within
 * each round. A repetition above measures each system once, minutes apart from the other; on
 * this machine those swing by a fifth, so their ratios say little one at a time. Measurements a
 * few seconds apart share the machine's state.
 */
public final class SecureBench {
    static final String USER = "bench";
    static final String PASSWORD = "bench-secret";
    static final String STORE_PASSWORD = "bench-store";
    static final String MECHANISM = "SCRAM-SHA-512";

    private final SideBySide bench;
    private final int records;
    private final int reps;
    private final List<String> systems;
    private final int pairs;

    SecureBench(SideBySide bench, int records, int reps, List<String> systems, int pairs) {
        this.bench = bench;
        this.records = records;
        this.reps = reps;
        this.systems = systems;
        this.pairs = pairs;
    }

    /**
     * Parses {@code --sasl-ssl [--records N] [--reps R] [--systems kaas,apache,apache-fsync] [--pairs N]};
     * {@code --reps 0} with {@code --pairs} runs the paired rounds alone.
     */
    static int main0(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse("--sasl-ssl", args, 1_000_000, 3, List.of("kaas", "apache", "apache-fsync"),
                Map.of("--e2e-messages", 5_000L, "--pairs", 0L));
        new SecureBench(a.launcher("sasl-ssl-", a.intOption("--e2e-messages"), a.systems), a.records, a.reps, a.systems,
                a.intOption("--pairs")).run();
        return 0;
    }

    void run() throws Exception {
        System.out.printf("sasl-ssl: %d records x 1024 B over SASL_SSL (%s, TLS by the JDK's default provider), %d repetitions, work dir %s%n",
                records, MECHANISM, reps, bench.work());
        Path certs = bench.work().resolve("certs");
        Path keystore = selfSigned(certs);
        Path clientConfig = clientConfig(certs.resolve("truststore.p12"), bench.work().resolve("client-sasl-ssl.properties"));
        Map<String, String> clientSettings = new LinkedHashMap<>();
        for (String line : Files.readAllLines(clientConfig)) {
            clientSettings.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
        }
        List<String> listenerSettings = listenerSettings(keystore);
        SideBySide.warmProbe();
        for (int rep = 0; rep < reps; rep++) {
            bench.showCommands(rep == 0);
            List<String> order = new ArrayList<>(systems);
            if (rep % 2 == 1) {
                Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("rep %d: %s%n", rep + 1, system);
                int port = SideBySide.freePort();
                List<String> listener = List.of("SASL_SSL://127.0.0.1:" + port);
                try (SideBySide.Server plain = bench.startServer(system, rep, listenerSettings, listenerSettings, listener)) {
                    addUser(plain, clientSettings, port);
                    SideBySide.createTopic(plain, "a", 1);
                    SideBySide.createTopic(plain, "b", 12);
                    SideBySide.createTopic(plain, "e", 1);
                    // The same processes, reached through the SASL_SSL listener; closed through `plain`.
                    SideBySide.Server secure = new SideBySide.Server(plain.name(), plain.processes(), port, plain.startToFirstProduceMs());
                    List<String> config = List.of("--producer.config", clientConfig.toString());
                    SideBySide.ProducerRun runA = bench.producerPerf(secure, "a", records, "all", 1, config);
                    SideBySide.Result a = runA.results().get(0);
                    bench.record(system, "(a) acks=all 1p MB/s", a.mbPerSec());
                    bench.record(system, "(a) p99 ms", a.p99Ms());
                    bench.recordCost(system, "(a)", runA.cost());
                    SideBySide.ProducerRun runB = bench.producerPerf(secure, "b", records / 4, "all", 4, config);
                    bench.record(system, "(b) acks=all 12p x4 MB/s", runB.results().stream().mapToDouble(SideBySide.Result::mbPerSec).sum());
                    bench.record(system, "(b) p99 ms", runB.results().stream().mapToDouble(SideBySide.Result::p99Ms).max().orElse(0));
                    bench.recordCost(system, "(b)", runB.cost());
                    bench.record(system, "peak RSS MiB (after b)", plain.peakRssKb() / 1024.0);
                    SideBySide.Result d = bench.consumerPerf(secure, "a", records, clientSettings);
                    bench.record(system, "(d) consume MB/s", d.mbPerSec());
                    SideBySide.Result e = bench.endToEnd(secure, "e", List.of(clientConfig.toString()));
                    bench.record(system, "(e) e2e p50 ms", e.p50Ms());
                    bench.record(system, "(e) e2e p99 ms", e.p99Ms());
                }
                SideBySide.deleteTree(bench.work().resolve(system + "-" + rep).resolve("data"));
                SideBySide.settleDisk();
            }
        }
        if (reps > 0) {
            System.out.println();
            System.out.printf("%s, SASL_SSL %s: %d records x 1024 B, %d reps (medians)%n", LocalDateTime.now().withNano(0), MECHANISM, records, reps);
            bench.printTable();
        }
        if (pairs > 0) {
            pairs(clientConfig, clientSettings, listenerSettings);
        }
    }

    /** The paired (a) and (d): see the class comment. */
    private void pairs(Path clientConfig, Map<String, String> clientSettings, List<String> listenerSettings) throws Exception {
        System.out.printf("%npairs: kaas and apache side by side, %d records x 1024 B, %d rounds ABBA of (a) into a fresh topic and (d)%n",
                records, pairs);
        List<String> pair = List.of("kaas", "apache");
        List<String> producerConfig = List.of("--producer.config", clientConfig.toString());
        Map<String, SideBySide.Server> plain = new LinkedHashMap<>();
        Map<String, SideBySide.Server> secure = new LinkedHashMap<>();
        try {
            for (String system : pair) {
                int port = SideBySide.freePort();
                SideBySide.Server server = bench.startServer(system, 1000, listenerSettings, listenerSettings, List.of("SASL_SSL://127.0.0.1:" + port));
                plain.put(system, server);
                addUser(server, clientSettings, port);
                SideBySide.createTopic(server, "a", 1);
                SideBySide.Server s = new SideBySide.Server(server.name(), server.processes(), port, server.startToFirstProduceMs());
                bench.producerPerf(s, "a", records, "all", 1, producerConfig);
                secure.put(system, s);
            }
            Map<String, List<Double>> ratios = new LinkedHashMap<>();
            StringBuilder rounds = new StringBuilder();
            for (int round = 0; round < pairs; round++) {
                Map<String, Double> produce = new LinkedHashMap<>();
                Map<String, Double> consume = new LinkedHashMap<>();
                List<String> order = new ArrayList<>(pair);
                if (round % 2 == 1) {
                    Collections.reverse(order);
                }
                for (String system : order) {
                    String topic = "a" + round;
                    SideBySide.createTopic(plain.get(system), topic, 1);
                    produce.put(system, bench.producerPerf(secure.get(system), topic, records, "all", 1, producerConfig).results().get(0).mbPerSec());
                    consume.put(system, bench.consumerPerf(secure.get(system), "a", records, clientSettings).mbPerSec());
                }
                ratios.computeIfAbsent("(a) acks=all 1p", k -> new ArrayList<>()).add(produce.get("kaas") / produce.get("apache"));
                ratios.computeIfAbsent("(d) consume", k -> new ArrayList<>()).add(consume.get("kaas") / consume.get("apache"));
                String line = String.format("round %d (%s first): (a) kaas %.2f, apache %.2f MB/s, %.3f; (d) kaas %.2f, apache %.2f MB/s, %.3f%n",
                        round + 1, order.get(0), produce.get("kaas"), produce.get("apache"), produce.get("kaas") / produce.get("apache"),
                        consume.get("kaas"), consume.get("apache"), consume.get("kaas") / consume.get("apache"));
                System.out.print("  " + line);
                rounds.append("- ").append(line);
            }
            StringBuilder summary = new StringBuilder(String.format("%s, SASL_SSL %s, %d paired rounds, kaas/apache:%n",
                    LocalDateTime.now().withNano(0), MECHANISM, pairs));
            ratios.forEach((workload, values) -> {
                double[] ci = CompactionBench.medianWithInterval(values);
                long above = values.stream().filter(r -> r >= 1.0).count();
                summary.append(String.format("%s: median %.3f, 95%% interval of the median [%.3f, %.3f], %d of %d rounds at or above 1.0%n",
                        workload, ci[0], ci[1], ci[2], above, values.size()));
            });
            System.out.print(summary);
            Files.writeString(bench.work().resolve("pairs.md"), rounds + summary.toString());
        } finally {
            for (SideBySide.Server s : plain.values()) {
                s.close();
            }
        }
    }

    /**
     * The SASL_SSL listener's settings, in Apache's names: kaas reads them as system properties,
     * Apache from server.properties.
     */
    static List<String> listenerSettings(Path keystore) {
        return List.of("sasl.enabled.mechanisms=" + MECHANISM,
                "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "ssl.keystore.type=PKCS12", "ssl.keystore.location=" + keystore, "ssl.keystore.password=" + STORE_PASSWORD,
                "ssl.key.password=" + STORE_PASSWORD);
    }

    /** The perf tools' client settings: SCRAM-SHA-512 over TLS, trusting the broker's certificate, hostname verified. */
    static Path clientConfig(Path truststore, Path file) throws Exception {
        Files.writeString(file, String.join("\n", "security.protocol=SASL_SSL", "sasl.mechanism=" + MECHANISM,
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + USER + "\" password=\""
                        + PASSWORD + "\";",
                "ssl.truststore.type=PKCS12", "ssl.truststore.location=" + truststore, "ssl.truststore.password=" + STORE_PASSWORD) + "\n");
        return file;
    }

    /**
     * The user, created through the PLAINTEXT listener, then waited for on the SASL_SSL one: a
     * SCRAM credential reaches Apache's listener through its metadata log, kaas's through the
     * controller, so neither is usable the moment the Admin call returns.
     */
    static void addUser(SideBySide.Server plain, Map<String, String> clientSettings, int securePort) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", plain.bootstrap());
        try (Admin admin = Admin.create(p)) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(USER,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), PASSWORD))).all().get(60, TimeUnit.SECONDS);
        }
        Properties s = new Properties();
        s.putAll(clientSettings);
        s.put("bootstrap.servers", "127.0.0.1:" + securePort);
        s.put("default.api.timeout.ms", "5000");
        s.put("request.timeout.ms", "5000");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Admin admin = Admin.create(s)) {
                admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                return;
            } catch (Exception notYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("user " + USER + " could not authenticate over SASL_SSL within 60 s", notYet);
                }
                Thread.sleep(200);
            }
        }
    }

    /**
     * A self-signed key pair for localhost and 127.0.0.1 ({@code keystore.p12}) and a truststore
     * holding its certificate, made with the JDK's keytool: RSA 2048, as most deployments' certificates.
     */
    static Path selfSigned(Path dir) throws Exception {
        Files.createDirectories(dir);
        Path keystore = dir.resolve("keystore.p12");
        keytool(dir, "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost,O=kaas-bench",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "7", "-keystore", keystore.toString(), "-storetype", "PKCS12",
                "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD);
        keytool(dir, "-exportcert", "-rfc", "-alias", "broker", "-keystore", keystore.toString(), "-storepass", STORE_PASSWORD, "-file",
                dir.resolve("broker.pem").toString());
        keytool(dir, "-importcert", "-noprompt", "-alias", "broker", "-file", dir.resolve("broker.pem").toString(), "-keystore",
                dir.resolve("truststore.p12").toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD);
        return keystore;
    }

    private static void keytool(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(SideBySide.JAVA.resolveSibling("keytool").toString());
        cmd.addAll(List.of(args));
        Path log = dir.resolve("keytool.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool " + args[0] + " failed: " + Files.readString(log));
        }
    }
}
