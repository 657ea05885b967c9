package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the broker in the middle of a compaction pass, at several points of it (while it
 * builds the key map and while it cleans; a swap takes milliseconds, so its in-between states are
 * {@code LogCleanerTest}'s kills between steps): after each restart the log holds nothing that
 * was not written, each record at its own offset, and every key's latest value; the pass that
 * finally completes leaves exactly one record per key.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CompactionCrashIT {
    @TempDir
    Path tmp;

    @Test
    void aKillDuringAPassLeavesAConsistentLogAtEveryPoint() throws Exception {
        try (KaasCluster cluster = KaasCluster.start(tmp.resolve("data"), Map.of(
                "kaas.broker.log-cleaner-enable", "false",
                "kaas.broker.log-cleaner-backoff", "200ms",
                "kaas.broker.log-cleaner-dedupe-buffer-size", "16777216"))) {
            String topic = "crash";
            CompactionIT.createTopic(cluster, topic, CompactionIT.compacted());
            // Written with the cleaner off, so one pass has all of it to do.
            CompactionIT.Written w = CompactionIT.produce(cluster, topic, 40_000, 400, 0);
            CompactionIT.roll(cluster, topic);
            cluster.killBroker();
            // About 4 MB at 1 MB/s, read to build the map and read again to clean: a pass of several seconds.
            cluster.brokerProperty("kaas.broker.log-cleaner-enable", "true");
            cluster.brokerProperty("kaas.broker.log-cleaner-io-max-bytes-per-second", "1000000");
            cluster.startBroker();

            int midPass = 0;
            for (long delay : new long[] {1000, 5500, 7000}) {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> count(cluster.brokerLog(), "compacting partition=" + topic + "-0 ") > 0);
                Thread.sleep(delay);
                boolean finished = count(cluster.brokerLog(), "compacted partition=" + topic + "-0 ") > 0;
                cluster.killBroker();
                cluster.startBroker();
                List<ConsumerRecord<String, String>> seen = CompactionIT.readAll(cluster, topic);
                CompactionIT.assertConsistent(seen, w, "killed " + delay + " ms into a pass");
                if (finished) {
                    break;
                }
                midPass++;
            }
            assertThat(midPass).as("kills that landed inside a pass").isGreaterThanOrEqualTo(2);

            Awaitility.await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                List<ConsumerRecord<String, String>> seen = CompactionIT.readAll(cluster, topic);
                CompactionIT.assertConsistent(seen, w, "after the kills");
                assertThat(seen.stream().filter(r -> !r.key().equals("filler")).count()).isEqualTo(400);
            });
        }
    }

    static int count(Path log, String needle) throws Exception {
        if (!Files.exists(log)) {
            return 0;
        }
        try (Stream<String> lines = Files.lines(log)) {
            return (int) lines.filter(l -> l.contains(needle)).count();
        }
    }
}
