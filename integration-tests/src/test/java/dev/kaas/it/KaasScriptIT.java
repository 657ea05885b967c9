package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The README's first command: {@code ./kaas up} starts a cluster, serves, stops on {@code down}, and keeps its data. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class KaasScriptIT {
    @TempDir
    Path tmp;

    static final Path SCRIPT = KaasCluster.ROOT.resolve("kaas");

    /** A base port whose three followers are free too, as the script derives them. */
    static int freeBase() {
        return freeBase(4);
    }

    /**
     * A base port with {@code count - 1} free followers: the script uses four ports per broker/controller
     * pair. Outside the ephemeral range: a broker stopped and started again reuses its ports, and
     * meanwhile any client's outgoing connection may take one from that range (a full run saw broker
     * 2's HTTP port taken so).
     */
    static int freeBase(int count) {
        return TestPorts.block(count);
    }

    record Run(Process process, LinkedBlockingQueue<String> lines, Thread reader) {
        String awaitLine(String contains, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < deadline) {
                String l = lines.poll(200, TimeUnit.MILLISECONDS);
                if (l != null && l.contains(contains)) {
                    return l;
                }
                if (l == null && !process.isAlive() && lines.isEmpty()) {
                    break;
                }
            }
            throw new AssertionError("no line containing '" + contains + "'");
        }
    }

    static Run start(String... args) throws IOException {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException ignored) {
                // process ended
            }
        });
        t.setDaemon(true);
        t.start();
        return new Run(p, lines, t);
    }

    static String runToEnd(String... args) throws Exception {
        return runToEnd(60, args);
    }

    static String runToEnd(long seconds, String... args) throws Exception {
        Run r = start(args);
        if (!r.process().waitFor(seconds, TimeUnit.SECONDS)) {
            r.process().destroyForcibly();
            throw new AssertionError("./kaas " + String.join(" ", args) + " did not end within " + seconds + " s");
        }
        // The reader may still be draining the pipe after the process exits.
        r.reader().join(10_000);
        StringBuilder out = new StringBuilder();
        r.lines().forEach(l -> out.append(l).append('\n'));
        return out + "exit=" + r.process().exitValue();
    }

    @Test
    void upServesDownStopsAndTheDataStays() throws Exception {
        int port = freeBase();
        Path data = tmp.resolve("kaas-data");
        Run up = start("up", "--data", data.toString(), "--port", Integer.toString(port));
        try {
            up.awaitLine("kaas is ready.", 120);
            assertThat(up.awaitLine("Kafka bootstrap:", 5)).contains("localhost:" + port);
            Properties props = new Properties();
            props.put("bootstrap.servers", "127.0.0.1:" + port);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
                p.send(new ProducerRecord<>("scripted", "hello")).get(30, TimeUnit.SECONDS);
            }
            assertThat(runToEnd("up", "--data", tmp.resolve("other").toString(), "--port", Integer.toString(port)))
                    .contains("port " + port + " on 127.0.0.1 is already in use").contains("exit=1");
        } finally {
            String down = runToEnd("down", "--data", data.toString());
            assertThat(down).contains("stopped the cluster").contains("exit=0");
            assertThat(up.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(Files.exists(data.resolve("__cluster/catalog/topics.json"))).isTrue();
        // A clean start, produce and stop logs no stack trace (the controller stream's end used to
        // reach the broker after its session thread had stopped, and gRPC logged the rejection).
        try (var logs = Files.list(data.resolve("logs"))) {
            List<Path> files = logs.filter(f -> f.getFileName().toString().endsWith(".log")).toList();
            assertThat(files).isNotEmpty();
            for (Path f : files) {
                assertThat(Files.readString(f)).as(f.toString()).doesNotContain("\n\tat ").doesNotContain("Exception thrown by");
            }
        }

        Run again = start("up", "--data", data.toString(), "--port", Integer.toString(port));
        try {
            again.awaitLine("kaas is ready.", 120);
            Properties props = new Properties();
            props.put("bootstrap.servers", "127.0.0.1:" + port);
            try (Admin admin = Admin.create(props)) {
                assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("scripted");
            }
        } finally {
            again.process().destroy();
            assertThat(again.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
            runToEnd("down", "--data", data.toString());
        }
    }

    @Test
    void badArgumentsAndAnUnusableDataDirectoryAreOneClearLine() throws Exception {
        assertThat(runToEnd("--help")).contains("Usage:").contains("exit=0");
        assertThat(runToEnd("up", "--port", "notaport", "--data", tmp.resolve("d").toString())).contains("--port must be a number").contains("exit=1");
        Path file = tmp.resolve("a-file");
        Files.writeString(file, "x");
        String out = runToEnd("up", "--data", file.resolve("sub").toString());
        assertThat(out).contains("kaas: cannot create data directory").contains("exit=1");
        assertThat(out.lines().filter(l -> l.startsWith("kaas:")).count()).isEqualTo(1);
    }

    /**
     * An operator's Apache server.properties, as Apache 3.7's KRaft sample with their changes: the
     * controller takes num.partitions from it, the broker its topic defaults (the produce path
     * enforces message.max.bytes) and settings, DescribeConfigs reports them as
     * STATIC_BROKER_CONFIG, the controller validates topic configs over its log settings, and the
     * KRaft keys are reported once and ignored. A bad value stops
     * the start with one line naming the key.
     */
    @Test
    void upReadsAnApacheServerPropertiesFile() throws Exception {
        int port = freeBase();
        Path data = tmp.resolve("kaas-data-config");
        Path file = tmp.resolve("server.properties");
        Files.writeString(file, String.join("\n",
                "process.roles=broker,controller", "node.id=1", "controller.quorum.voters=1@localhost:9093",
                "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names=CONTROLLER",
                "log.dirs=/tmp/kraft-combined-logs", "num.partitions=3", "log.retention.hours=24", "message.max.bytes=2000",
                "log.cleaner.min.compaction.lag.ms=60000",
                "group.initial.rebalance.delay.ms=0", ""));
        Run up = start("up", "--data", data.toString(), "--port", Integer.toString(port), "--config", file.toString());
        try {
            assertThat(up.awaitLine("so the file's values are not used", 30)).contains("listeners,log.dirs,node.id");
            up.awaitLine("kaas is ready.", 120);
            Properties props = new Properties();
            props.put("bootstrap.servers", "127.0.0.1:" + port);
            try (Admin admin = Admin.create(props)) {
                admin.createTopics(List.of(new NewTopic("from-file", Optional.empty(), Optional.empty()))).all().get(30, TimeUnit.SECONDS);
                assertThat(admin.describeTopics(List.of("from-file")).allTopicNames().get(30, TimeUnit.SECONDS).get("from-file").partitions())
                        .as("num.partitions reached the controller").hasSize(3);
                var topic = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "from-file");
                var topicConfig = admin.describeConfigs(List.of(topic), new org.apache.kafka.clients.admin.DescribeConfigsOptions().includeSynonyms(true))
                        .all().get(30, TimeUnit.SECONDS).get(topic);
                assertThat(topicConfig.get("retention.ms").value()).isEqualTo("86400000");
                var maxMessage = topicConfig.get("max.message.bytes");
                assertThat(maxMessage.value()).isEqualTo("2000");
                assertThat(maxMessage.source()).isEqualTo(org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
                assertThat(maxMessage.synonyms()).extracting(org.apache.kafka.clients.admin.ConfigEntry.ConfigSynonym::name)
                        .containsExactly("message.max.bytes", "message.max.bytes");
                var broker = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, "1");
                var brokerConfig = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);
                assertThat(brokerConfig.get("group.initial.rebalance.delay.ms").value()).isEqualTo("0");
                assertThat(brokerConfig.get("group.initial.rebalance.delay.ms").source())
                        .isEqualTo(org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
                assertThat(brokerConfig.get("log.dirs").value()).as("./kaas up's --data, not the file's").isEqualTo(data.toString());
                // The controller validates topic configs over the file's log settings, as Apache's over its own.
                var conflicting = admin.createTopics(List.of(new NewTopic("lagging", 1, (short) 1)
                        .configs(Map.of("max.compaction.lag.ms", "1000")))).all();
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> conflicting.get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(org.apache.kafka.common.errors.InvalidConfigurationException.class)
                        .hasMessageContaining("conflict topic config setting min.compaction.lag.ms (60000) > max.compaction.lag.ms (1000)");
            }
            try (KafkaProducer<String, String> p = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
                p.send(new ProducerRecord<>("from-file", "small")).get(30, TimeUnit.SECONDS);
                var tooLarge = p.send(new ProducerRecord<>("from-file", "x".repeat(3000)));
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> tooLarge.get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
            }
            assertThat(Files.readString(data.resolve("logs/broker-1.log")))
                    .contains("WARN " + file + ": process.roles is a KRaft setting");
            // A broker started again by start-broker reads the same file (cluster.env keeps it).
            assertThat(runToEnd(120, "stop-broker", "1", "--data", data.toString())).contains("exit=0");
            assertThat(runToEnd(120, "start-broker", "1", "--data", data.toString())).contains("is ready").contains("exit=0");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
                var tooLarge = p.send(new ProducerRecord<>("from-file", "x".repeat(3000)));
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> tooLarge.get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
            }
        } finally {
            runToEnd("down", "--data", data.toString());
            assertThat(up.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        }

        Files.writeString(file, "log.retention.hours=a day\n");
        String out = runToEnd(120, "up", "--data", data.toString(), "--port", Integer.toString(port), "--config", file.toString());
        assertThat(out).contains("cannot start: " + file + ": Invalid value a day for configuration log.retention.hours: Not a number of type INT")
                .contains("exit=1");
    }

    /** One broker line of {@code ./kaas status}. */
    record BrokerRow(int id, String alive, int partitions) {
    }

    private static final Pattern BROKER_ROW = Pattern.compile("^\\s*broker (\\d+)\\s+(alive|not alive|-)\\s+.*\\bpartitions (\\d+)\\s");

    static Map<Integer, BrokerRow> brokers(String status) {
        Map<Integer, BrokerRow> rows = new TreeMap<>();
        for (String line : status.lines().toList()) {
            Matcher m = BROKER_ROW.matcher(line);
            if (m.find()) {
                rows.put(Integer.parseInt(m.group(1)), new BrokerRow(Integer.parseInt(m.group(1)), m.group(2), Integer.parseInt(m.group(3))));
            }
        }
        return rows;
    }

    static String status(Path data) throws Exception {
        String out = runToEnd("status", "--data", data.toString());
        assertThat(out).endsWith("exit=0");
        return out;
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // the sum of its bounded waits; typically about 20 s
    void twoBrokersSharePartitionsAndOneStopsAndComesBackWhileUpKeepsRunning() throws Exception {
        int port = freeBase(8);
        Path data = tmp.resolve("two-brokers");
        Run up = start("up", "--brokers", "2", "--data", data.toString(), "--port", Integer.toString(port));
        try {
            // Given two brokers, both ready and in the controller's live set
            up.awaitLine("kaas is ready.", 180);
            assertThat(up.awaitLine("Kafka bootstrap:", 5)).contains("localhost:" + port + ",localhost:" + (port + 4));
            String first = status(data);
            assertThat(first).contains("brokers:     2 alive").contains("lease:       held by controller-1");
            // The live part comes from the leading controller's REST API (whose first call, on a loaded machine, may be slow).
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(status(data)).contains("live (REST API http://127.0.0.1:" + (port + 2) + "/api/v1):")
                            .containsPattern("broker 2 +alive"));
            assertThat(brokers(first).values()).extracting(BrokerRow::alive).containsExactly("alive", "alive");

            // When a topic with four partitions is created
            Properties props = new Properties();
            props.put("bootstrap.servers", "127.0.0.1:" + port);
            try (Admin admin = Admin.create(props)) {
                admin.createTopics(List.of(new NewTopic("spread", Optional.of(4), Optional.empty()))).all().get(30, TimeUnit.SECONDS);
            }

            // Then each broker leads two of them
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(brokers(status(data)).values()).extracting(BrokerRow::partitions).containsExactly(2, 2));

            // When broker 2 is stopped
            assertThat(runToEnd(90, "stop-broker", "2", "--data", data.toString())).contains("stopped broker 2").endsWith("exit=0");

            // Then up keeps running, broker 2 is out of the live set and broker 1 leads all four partitions
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                String s = status(data);
                assertThat(brokers(s)).containsEntry(2, new BrokerRow(2, "not alive", 0)).containsEntry(1, new BrokerRow(1, "alive", 4));
                assertThat(s).contains("4 in 1 topic, 0 without a leader");
            });
            assertThat(up.process().isAlive()).isTrue();

            // When it is started again
            assertThat(runToEnd(120, "start-broker", "2", "--data", data.toString())).contains("broker 2 is ready").endsWith("exit=0");

            // Then it is back in the live set, and up still runs
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(brokers(status(data)).get(2).alive()).isEqualTo("alive"));
            assertThat(up.process().isAlive()).isTrue();
        } finally {
            // A timeout interrupts this thread; clear it so down still runs and no process outlives the test.
            Thread.interrupted();
            String down = runToEnd(200, "down", "--data", data.toString());
            boolean upEnded = up.process().waitFor(60, TimeUnit.SECONDS);
            if (!upEnded) {
                up.process().destroyForcibly();
            }
            // No stronger check here: a failure above (say, up that never started) must not be masked.
            assertThat(down).endsWith("exit=0");
            assertThat(upEnded).isTrue();
        }
    }
}
