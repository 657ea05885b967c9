package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kafka-python (Debian's python3-kafka, not reachable from Maven): produce, consume in a group,
 * commit, rejoin and resume. Skips when the system Python has no kafka module, unless
 * KAAS_REQUIRE_NATIVE_CLIENTS is set (.ci/run sets it).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class KafkaPythonIT {
    static final Path PYTHON = Path.of("/usr/bin/python3");

    @TempDir
    Path tmp;

    static boolean kafkaPythonPresent() throws Exception {
        if (!Files.isExecutable(PYTHON)) {
            return false;
        }
        Process p = new ProcessBuilder(PYTHON.toString(), "-c", "import kafka").redirectErrorStream(true).start();
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    @Test
    void kafkaPythonConsumerGroupCommitsAndResumes() throws Exception {
        NativeClients.requirePresent(kafkaPythonPresent(), "kafka-python (python3-kafka)");
        Path script = tmp.resolve("kafka_python_group.py");
        try (var in = getClass().getResourceAsStream("/clients/kafka_python_group.py")) {
            Files.copy(in, script);
        }
        try (KaasCluster cluster = KaasCluster.startForClients(tmp.resolve("data"))) {
            try (Admin admin = Admin.create(cluster.clientProps())) {
                admin.createTopics(List.of(new NewTopic("py", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            Path out = tmp.resolve("python.out");
            Process p = new ProcessBuilder(PYTHON.toString(), script.toString(), cluster.bootstrap(), "py", "pygroup")
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            assertThat(p.waitFor(180, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(Files.readString(out)).isZero();
            assertThat(Files.readString(out)).contains("kafka-python ok");
        }
    }
}
