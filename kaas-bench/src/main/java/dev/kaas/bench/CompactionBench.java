package dev.kaas.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
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
 *       ({@code min.cleanable.dirty.ratio} 0.5): its ratio to (plain) is the cleaner's cost to producers.
 *       The two are measured in alternating windows on the same broker (see {@link #measureProduce}).</li>
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
    private final int rounds;
    private final List<String> systems;
    /** Every pair's (compact)/(plain) ratio, per system, over all repetitions. */
    private final Map<String, List<Double>> allPairs = new LinkedHashMap<>();

    CompactionBench(SideBySide bench, int records, int cleanRecords, int reps, int rounds, List<String> systems) {
        this.bench = bench;
        this.records = records;
        this.cleanRecords = cleanRecords;
        this.reps = reps;
        this.rounds = rounds;
        this.systems = systems;
    }

    /**
     * Parses {@code --compaction [--records N] [--clean-records M] [--rounds K] [--reps R] [--systems kaas,apache]}:
     * N records for each produce window, K pairs of windows (plain, compacted) per broker, M
     * (default 1,000,000, about 1 GB) for the timed pass, so that Apache's pass time, which its log
     * prints to a tenth of a second, is seconds long.
     */
    static int main0(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse("--compaction", args, 200_000, 3, List.of("kaas", "apache"),
                Map.of("--clean-records", 1_000_000L, "--rounds", 6L));
        if (a.intOption("--rounds") < 1) {
            throw new IllegalArgumentException("--rounds must be at least 1");
        }
        new CompactionBench(a.launcher("compaction-", 0, a.systems), a.records, a.intOption("--clean-records"), a.reps,
                a.intOption("--rounds"), a.systems).run();
        return 0;
    }

    void run() throws Exception {
        System.out.printf("compaction: a pass over %d records, produce in %d pairs of windows of %d records, x 1024 B, one key in ten live, "
                + "%d repetitions, work dir %s%n", cleanRecords, rounds, records, reps, bench.work());
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
                    measureProduce(system, s, dir, rep);
                }
                SideBySide.deleteTree(dir.resolve("data"));
                SideBySide.settleDisk();
            }
        }
        String title = String.format("%s, compaction: a pass over %d records, produce in %d pairs of windows of %d records, x 1024 B, "
                + "one key in ten live, acks=all, 1 partition, %d reps (medians)", LocalDateTime.now().withNano(0), cleanRecords, rounds,
                records, reps);
        System.out.println();
        System.out.println(title);
        bench.printTable();
        StringBuilder summary = new StringBuilder();
        for (var e : allPairs.entrySet()) {
            double[] ci = medianWithInterval(e.getValue());
            summary.append(String.format("%s: (compact)/(plain) over all %d pairs: median %.3f, 95%% interval of the median [%.3f, %.3f]"
                    + " (pairs of one broker share its state: read the interval with the per-broker medians above)%n",
                    e.getKey(), e.getValue().size(), ci[0], ci[1], ci[2]));
        }
        System.out.print(summary);
        Files.writeString(bench.work().resolve("results.md"), "\n" + summary, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /**
     * {median, low, high}: the median of {@code values} and its distribution-free 95 % confidence
     * interval, the order statistics whose ranks the binomial(n, 1/2) distribution gives (no
     * assumption about how the pairs' ratios spread; with fewer than 6 values the interval is the
     * whole range).
     */
    static double[] medianWithInterval(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = v.length;
        double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        // The largest k with P(B < k) <= 0.025, B ~ binomial(n, 1/2): [v(k), v(n-k+1)], 1-based.
        int k = 0;
        double below = 0;
        double term = Math.pow(0.5, n);
        for (int i = 0; i < n; i++) {
            if (below + term > 0.025) {
                break;
            }
            below += term;
            term = term * (n - i) / (i + 1);
            k = i + 1;
        }
        return k == 0 ? new double[] {median, v[0], v[n - 1]} : new double[] {median, v[k - 1], v[n - k]};
    }

    /**
     * Produce with and without cleaning, in {@code rounds} pairs of windows of {@code records}
     * records each, the order within a pair alternating (ABBA: a trend over the run, the JIT's or
     * the disk's, falls on both alike), the page cache synced before every window. A single pair
     * cannot resolve 10 % here: two windows a few seconds apart differ by up to a third either way.
     * The compacted topic is written with the same keys every window, so the cleaner works through
     * every window of it; the plain topic is never cleaned. Recorded: each kind's throughput over
     * all its windows (records over summed seconds), their ratio, the median of the pairs' ratios,
     * and the cleaner's passes over the compacted topic (zero would mean nothing was measured).
     */
    private void measureProduce(String system, SideBySide.Server s, Path dir, int rep) throws Exception {
        createTopic(s, "plain", Map.of());
        createTopic(s, "compact", Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(16 << 20)));
        // One unmeasured window each first: the first write after the timed pass ran up to a
        // third slower than the rest (whichever topic came first), for both systems.
        window(system, s, dir, "plain");
        window(system, s, dir, "compact");
        int passesBefore = passes(system, dir, "compact-0");
        double plainSeconds = 0;
        double compactSeconds = 0;
        List<Double> pairRatios = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            boolean plainFirst = (round + rep) % 2 == 0;
            double first = window(system, s, dir, plainFirst ? "plain" : "compact");
            double second = window(system, s, dir, plainFirst ? "compact" : "plain");
            double plain = plainFirst ? first : second;
            double compact = plainFirst ? second : first;
            plainSeconds += plain;
            compactSeconds += compact;
            pairRatios.add(plain / compact);
            allPairs.computeIfAbsent(system, k -> new ArrayList<>()).add(plain / compact);
            System.out.printf("  round %d: plain %.2f MB/s, compact %.2f MB/s, compact/plain %.2f%n", round + 1, mb(records) / plain,
                    mb(records) / compact, plain / compact);
        }
        double plainRate = mb((long) records * rounds) / plainSeconds;
        double compactRate = mb((long) records * rounds) / compactSeconds;
        bench.record(system, "(plain) keyed produce MB/s", plainRate);
        bench.record(system, "(compact) produce while cleaning MB/s", compactRate);
        bench.record(system, "(compact)/(plain) produce", compactRate / plainRate);
        bench.record(system, "(compact)/(plain) median of pairs", medianWithInterval(pairRatios)[0]);
        bench.record(system, "(compact) cleaner passes", passes(system, dir, "compact-0") - passesBefore);
    }

    /**
     * Seconds to write {@code records} keyed records to {@code topic}, once the cleaner has gone
     * quiet and the page cache is synced: a pass the previous (compact) window started would
     * otherwise run on into this window, and charge a (plain) window with the cleaner's work.
     */
    private double window(String system, SideBySide.Server s, Path dir, String topic) throws Exception {
        awaitCleanerQuiet(system, dir);
        SideBySide.settleDisk();
        return mb(records) / produce(s, topic, records);
    }

    /** Longer than the cleaner's 1 s backoff plus one pass over a window's worth (under 0.7 s here). */
    private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(2500);

    /** Waits (at most a minute) until no pass over the compacted topic has finished for {@link #QUIET_NANOS}. */
    private static void awaitCleanerQuiet(String system, Path dir) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        int seen = passes(system, dir, "compact-0");
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(250);
            int now = passes(system, dir, "compact-0");
            if (now != seen) {
                seen = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= QUIET_NANOS) {
                return;
            }
        }
    }

    private static double mb(long records) {
        return records * 1024.0 / (1024 * 1024);
    }

    /** How many finished passes over {@code partition} the broker has logged so far. */
    private static int passes(String system, Path dir, String partition) throws Exception {
        Matcher m = passLines(system, dir);
        int n = 0;
        while (m.find()) {
            if (m.group(1).equals(partition)) {
                n++;
            }
        }
        return n;
    }

    /** The finished passes the broker has logged so far, each match's group 1 the partition. */
    private static Matcher passLines(String system, Path dir) throws IOException {
        return (system.equals("kaas") ? KAAS_PASS : APACHE_PASS).matcher(cleanerLog(system, dir));
    }

    /**
     * What the broker logged of its cleaner so far: kaas's broker.log; Apache's log-cleaner.log and
     * the files log4j rolled it into (its DatePattern starts a new one every hour). Empty before
     * the first line.
     */
    private static String cleanerLog(String system, Path dir) throws IOException {
        if (system.equals("kaas")) {
            Path log = dir.resolve("broker.log");
            return Files.exists(log) ? Files.readString(log) : "";
        }
        Path logs = dir.resolve("logs");
        if (!Files.isDirectory(logs)) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        try (var files = Files.list(logs)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("log-cleaner.log")).sorted().toList()) {
                text.append(Files.readString(f)).append('\n');
            }
        }
        return text.toString();
    }

    /** One pass over everything written, timed by the broker itself. */
    private void measureCleaner(String system, SideBySide.Server s, Path dir) throws Exception {
        // Long enough for the writing to end before the roll (kaas and Apache write about 50-100 MB/s here).
        long segmentMs = Math.max(20_000, cleanRecords / 20);
        long created = System.currentTimeMillis();
        createTopic(s, "big", Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(Integer.MAX_VALUE),
                "segment.ms", Long.toString(segmentMs), "file.delete.delay.ms", "1000"));
        produce(s, "big", cleanRecords);
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
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < deadline) {
            Matcher m = passLines(system, dir);
            while (m.find()) {
                if (m.group(1).equals(partition)) {
                    if (system.equals("kaas")) {
                        return new double[] {Long.parseLong(m.group(2)) / (1024.0 * 1024.0), Long.parseLong(m.group(3)) / 1000.0};
                    }
                    return new double[] {Double.parseDouble(m.group(2).replace(",", "")), Double.parseDouble(m.group(3).replace(",", ""))};
                }
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("no cleaning pass of " + partition + " logged under " + dir);
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
     * first send to the last acknowledgement, into a topic that exists.
     */
    private static double produce(SideBySide.Server s, String topic, int records) throws Exception {
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
