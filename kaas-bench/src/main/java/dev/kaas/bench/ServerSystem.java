package dev.kaas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * A running system under benchmark ({@link LocalKaasCluster} or {@link LocalApacheCluster}) as the
 * cluster workloads see it: its server processes, where clients connect, what they hold, and how
 * a topic is created on it. Closing it stops every process.
 */
interface ServerSystem extends AutoCloseable {
    String bootstrap();

    /** The live server processes (kaas: controller and brokers; Apache: its KRaft nodes). */
    List<Process> processes();

    long startToFirstProduceMs();

    @Override
    void close() throws InterruptedException;

    /** What the processes hold at one instant: open file descriptors and resident memory, summed. */
    record Footprint(long fds, long rssKb) {
        double rssMiB() {
            return rssKb / 1024.0;
        }
    }

    /** Open descriptors ({@code /proc/<pid>/fd}) and {@code VmRSS} ({@code /proc/<pid>/status}) summed over the processes. */
    static Footprint footprint(List<Process> processes) throws IOException {
        long fds = 0;
        long rss = 0;
        for (Process p : processes) {
            Path proc = Path.of("/proc", Long.toString(p.pid()));
            try (Stream<Path> entries = Files.list(proc.resolve("fd"))) {
                fds += entries.count();
            }
            for (String line : Files.readAllLines(proc.resolve("status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss += Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        }
        return new Footprint(fds, rss);
    }

    /**
     * The footprint once the descriptor count has stopped moving (two readings 500 ms apart agree,
     * at most 30 s): a broker opens a new topic's files in the background after answering.
     */
    static Footprint settledFootprint(List<Process> processes) throws IOException, InterruptedException {
        Footprint last = footprint(processes);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Thread.sleep(500);
            Footprint now = footprint(processes);
            if (now.fds() == last.fds()) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /** Partitions per CreateTopics / CreatePartitions call when one call is refused as too large. */
    int CHUNK = 5_000;

    /**
     * Creates {@code topic} with {@code partitions} partitions in one CreateTopics call. Apache
     * 3.7's controller writes a topic's records in one atomic batch of at most 10,000 records (the
     * topic record plus one per partition), so a topic of 10,000 partitions is refused there; the
     * topic is then created with {@link #CHUNK} partitions and grown by CreatePartitions calls of
     * at most as many. Returns how the topic was created, for the record.
     */
    static String createTopic(Admin admin, String topic, int partitions, short rf, Map<String, String> configs) throws Exception {
        try {
            admin.createTopics(List.of(new NewTopic(topic, partitions, rf).configs(configs))).all().get(10, TimeUnit.MINUTES);
            return "one CreateTopics call";
        } catch (ExecutionException refused) {
            if (partitions <= CHUNK) {
                throw refused;
            }
            System.out.printf("  CreateTopics of %d partitions refused (%s); creating %d and growing it by CreatePartitions%n", partitions,
                    refused.getCause(), CHUNK);
            admin.createTopics(List.of(new NewTopic(topic, CHUNK, rf).configs(configs))).all().get(10, TimeUnit.MINUTES);
            int now = CHUNK;
            int calls = 0;
            while (now < partitions) {
                now = Math.min(partitions, now + CHUNK);
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(now))).all().get(10, TimeUnit.MINUTES);
                calls++;
            }
            return "CreateTopics of " + CHUNK + " + " + calls + " CreatePartitions (one call refused: " + refused.getCause().getClass().getSimpleName() + ")";
        }
    }
}
