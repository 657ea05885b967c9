package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * librdkafka, through kcat. kcat is a Debian package, not a Maven artifact: the test skips when
 * it is not installed, unless KAAS_REQUIRE_NATIVE_CLIENTS is set (.ci/run installs it and sets that).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class KcatIT {
    @TempDir
    static Path tmp;

    static KaasCluster cluster;

    static boolean kcatPresent() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "kcat"))) {
                return true;
            }
        }
        return false;
    }

    @BeforeAll
    static void up() throws Exception {
        NativeClients.requirePresent(kcatPresent(), "kcat (librdkafka)");
        cluster = KaasCluster.startForClients(tmp.resolve("data"));
    }

    @AfterAll
    static void down() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    static String kcat(String stdin, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("kcat", "-b", cluster.bootstrap()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("kcat", ".out");
        Path err = Files.createTempFile("kcat", ".err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kcat " + args[0] + " did not finish: " + Files.readString(err));
        }
        assertThat(p.exitValue()).as(Files.readString(err)).isZero();
        return Files.readString(out);
    }

    @Test
    void librdkafkaProducesAndConsumesPlainAndIdempotentCompressed() throws Exception {
        kcat("one\ntwo\nthree\n", "-P", "-t", "rdkafka", "-p", "0");
        kcat("four\nfive\n", "-P", "-t", "rdkafka", "-p", "0", "-X", "enable.idempotence=true", "-X", "compression.codec=zstd");
        String consumed = kcat(null, "-C", "-t", "rdkafka", "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o:%s\\n");
        assertThat(consumed.lines()).containsExactly("0:one", "1:two", "2:three", "3:four", "4:five");
        assertThat(kcat(null, "-L", "-t", "rdkafka")).contains("topic \"rdkafka\" with 1 partitions");
    }

    @Test
    void librdkafkaBalancedConsumerJoinsAGroupAndCommits() throws Exception {
        kcat("a\nb\nc\n", "-P", "-t", "rdkafka-group", "-p", "0");
        String consumed = kcat(null, "-G", "rdgroup", "rdkafka-group", "-o", "beginning", "-e", "-q", "-f", "%o:%s\\n",
                "-X", "auto.offset.reset=earliest");
        assertThat(consumed.lines()).containsExactly("0:a", "1:b", "2:c");
        try (var admin = org.apache.kafka.clients.admin.Admin.create(cluster.clientProps())) {
            var offsets = admin.listConsumerGroupOffsets("rdgroup").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            assertThat(offsets.get(new org.apache.kafka.common.TopicPartition("rdkafka-group", 0)).offset()).isEqualTo(3);
        }
        // earliest, so that an ignored commit would show as a re-read from offset 0 rather than as the empty output
        // librdkafka's default (latest) gives either way.
        kcat("d\ne\n", "-P", "-t", "rdkafka-group", "-p", "0");
        String resumed = kcat(null, "-G", "rdgroup", "rdkafka-group", "-e", "-q", "-f", "%o:%s\\n", "-X", "auto.offset.reset=earliest");
        assertThat(resumed.lines()).as("resumes after its commit").containsExactly("3:d", "4:e");
    }
}
