package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
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
        Random r = new Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = 20_000 + r.nextInt(40_000);
            if (free(base) && free(base + 1) && free(base + 2) && free(base + 3)) {
                return base;
            }
        }
        throw new IllegalStateException("no four consecutive free ports");
    }

    static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
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
        Run r = start(args);
        assertThat(r.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
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
}
