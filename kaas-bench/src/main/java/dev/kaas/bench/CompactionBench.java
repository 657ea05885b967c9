package dev.kaas.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@code ./kaas bench --compaction}: the log cleaner side by side, kaas against Apache Kafka 3.7.2
 * (one broker each, the same cleaner settings: one thread, 128 MiB dedupe buffer, 1 s backoff),
 * started fresh per repetition in alternating order. Records of 1 KiB, one key in ten live (each
 * key written ten times), written by a keyed Java producer in this JVM (acks=all).
 * <ul>
 *   <li>(clean) the cleaner's throughput: everything is written into one active segment, which
 *       {@code segment.ms} then rolls; the single pass that follows is timed from each broker's
 *       own log (Apache's log-cleaner.log "MB of log processed in … seconds"; kaas's "compacted …
 *       read=… in …ms"): bytes the cleaning read over the whole pass's time, key map included;</li>
 *   <li>(plain) keyed produce throughput into a {@code cleanup.policy=delete} topic;</li>
 *   <li>(compact) the same into a compacted topic with 16 MiB segments, cleaned as it is written
 *       ({@code min.cleanable.dirty.ratio} 0.5): its ratio to (plain) is the cleaner's cost to producers.</li>
 * </ul>
 * The targets: cleaner throughput compared with Apache's; produce impact of cleaning at most 10 %.
 */
public final class CompactionBench {
    private static final Pattern APACHE_PASS = Pattern.compile("cleaned log (\\S+) \\(dirty section.*\\n\\s*([\\d,]+\\.\\d) MB of log processed in ([\\d,]+\\.\\d) seconds");
    private static final Pattern KAAS_PASS = Pattern.compile("compacted partition=(\\S+) segments=\\d+ read=(\\d+)B .* in (\\d+)ms");

    private final SideBySide bench;
    private final int records;
    private final int cleanRecords;
    private final int reps;
    private final List<String> systems;

    CompactionBench(SideBySide bench, int records, int cleanRecords, int reps, List<String> systems) {
        this.bench = bench;
        this.records = records;
        this.cleanRecords = cleanRecords;
        this.reps = reps;
        this.systems = systems;
    }

    /**
     * Parses {@code --compaction [--records N] [--clean-records M] [--reps R] [--systems kaas,apache]}: N records
     * for each produce measurement, M (default 1,000,000, about 1 GB) for the timed pass, so that
     * Apache's pass time, which its log prints to a tenth of a second, is seconds long.
     */
    static int main0(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse("--compaction", args, 200_000, 3, List.of("kaas", "apache"), Map.of("--clean-records", 1_000_000L));
        new CompactionBench(a.launcher("compaction-", 0, a.systems), a.records, a.intOption("--clean-records"), a.reps, a.systems).run();
        return 0;
    }

    void run() throws Exception {
        System.out.printf("compaction: a pass over %d records, produce of %d records, x 1024 B, one key in ten live, %d repetitions, work dir %s%n",
                cleanRecords, records, reps, bench.work());
        SideBySide.warmProbe();
        for (int rep = 0; rep < reps; rep++) {
            bench.showCommands(rep == 0);
            List<String> order = new ArrayList<>(systems);
            if (rep % 2 == 1) {
                Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("rep %d: %s%n", rep + 1, system);
                Path dir = bench.work().resolve(system + "-" + rep);
                try (SideBySide.Server s = bench.startServer(system, rep,
                        List.of("kaas.broker.log-cleaner-backoff=1s"), List.of("log.cleaner.backoff.ms=1000"))) {
                    measureCleaner(system, s, dir);
                    Map<String, String> compacted = Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(16 << 20));
                    // Alternating, so neither gains from coming second (a warmer JVM, a settled disk).
                    double plain;
                    double compact;
                    if (rep % 2 == 0) {
                        plain = produce(s, "plain", Map.of(), records);
                        compact = produce(s, "compact", compacted, records);
                    } else {
                        compact = produce(s, "compact", compacted, records);
                        plain = produce(s, "plain", Map.of(), records);
                    }
                    bench.record(system, "(plain) keyed produce MB/s", plain);
                    bench.record(system, "(compact) produce while cleaning MB/s", compact);
                    bench.record(system, "(compact)/(plain) produce", compact / plain);
                }
                SideBySide.deleteTree(dir.resolve("data"));
                SideBySide.settleDisk();
            }
        }
        String title = String.format("%s, compaction: a pass over %d records, produce of %d records, x 1024 B, one key in ten live, "
                + "acks=all, 1 partition, %d reps (medians)", LocalDateTime.now().withNano(0), cleanRecords, records, reps);
        System.out.println();
        System.out.println(title);
        bench.printTable();
    }

    /** One pass over everything written, timed by the broker itself. */
    private void measureCleaner(String system, SideBySide.Server s, Path dir) throws Exception {
        // Long enough for the writing to end before the roll (kaas and Apache write about 50-100 MB/s here).
        long segmentMs = Math.max(20_000, cleanRecords / 20);
        long created = System.currentTimeMillis();
        createTopic(s, "big", Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(Integer.MAX_VALUE),
                "segment.ms", Long.toString(segmentMs), "file.delete.delay.ms", "1000"));
        produce(s, "big", null, cleanRecords);
        long wait = created + segmentMs + 1000 - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
        // Rolls the segment holding everything: the next cleaner round finds it all dirty.
        try (KafkaProducer<byte[], byte[]> p = producer(s)) {
            p.send(new ProducerRecord<>("big", "roll".getBytes(StandardCharsets.UTF_8), new byte[1])).get(60, TimeUnit.SECONDS);
        }
        double[] pass = awaitPass(system, dir, "big-0");
        bench.record(system, "(clean) cleaner MB/s", pass[0] / pass[1]);
        bench.record(system, "(clean) pass s", pass[1]);
        // The replaced gigabyte is deleted a second after the pass: not during the produce measurements.
        Thread.sleep(3000);
        SideBySide.settleDisk();
    }

    /** {MB processed, seconds} of the first finished pass over {@code partition}, from the broker's log. */
    private static double[] awaitPass(String system, Path dir, String partition) throws Exception {
        Path log = system.equals("kaas") ? dir.resolve("broker.log") : dir.resolve("logs").resolve("log-cleaner.log");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log)) {
                String text = Files.readString(log);
                Matcher m = (system.equals("kaas") ? KAAS_PASS : APACHE_PASS).matcher(text);
                while (m.find()) {
                    if (m.group(1).equals(partition)) {
                        if (system.equals("kaas")) {
                            return new double[] {Long.parseLong(m.group(2)) / (1024.0 * 1024.0), Long.parseLong(m.group(3)) / 1000.0};
                        }
                        return new double[] {Double.parseDouble(m.group(2).replace(",", "")), Double.parseDouble(m.group(3).replace(",", ""))};
                    }
                }
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("no cleaning pass of " + partition + " logged in " + log);
    }

    private static void createTopic(SideBySide.Server s, String topic, Map<String, String> configs) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", s.bootstrap());
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(60, TimeUnit.SECONDS);
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(SideBySide.Server s) {
        Properties p = new Properties();
        p.put("bootstrap.servers", s.bootstrap());
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("batch.size", "65536");
        p.put("buffer.memory", Integer.toString(64 << 20));
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * Writes the records, each key ten times in rounds (key i % keys), and answers MB/s from the
     * first send to the last acknowledgement. {@code configs} null: the topic exists already.
     */
    private static double produce(SideBySide.Server s, String topic, Map<String, String> configs, int records) throws Exception {
        if (configs != null) {
            createTopic(s, topic, configs);
        }
        int keys = Math.max(1, records / 10);
        byte[] value = new byte[1024 - 16];
        new Random(42).nextBytes(value);
        try (KafkaProducer<byte[], byte[]> p = producer(s)) {
            List<Future<?>> pending = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < records; i++) {
                byte[] key = String.format("key-%011d", i % keys).getBytes(StandardCharsets.UTF_8);
                pending.add(p.send(new ProducerRecord<>(topic, 0, key, value)));
                if (pending.size() >= 10_000) {
                    for (Future<?> f : pending) {
                        f.get(120, TimeUnit.SECONDS);
                    }
                    pending.clear();
                }
            }
            for (Future<?> f : pending) {
                f.get(120, TimeUnit.SECONDS);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            return (double) records * 1024 / (1024 * 1024) / seconds;
        }
    }
}
