package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Streams 3.7.2 with {@code processing.guarantee=exactly_once_v2} against a real kaas: a word count
 * (repartition topic, changelog, transactional output) runs in a child JVM that is SIGKILLed twice in the
 * middle of a backlog. The second instance reuses the first one's state dir (same process id, so the same
 * transactional ids: InitProducerId fences and aborts the dead one's transactions); the third starts from an
 * empty state dir (new transactional ids: the dead one's transactions end by the coordinator's timeout, the
 * store is rebuilt from the changelog). With the store cache off, every input word yields one output record, so
 * under exactly-once the committed counts of each word read 1, 2, ..., N: a duplicate, a gap or a wrong final
 * count is a broken guarantee.
 *
 * <p>{@code -Dkaas.it.streams-eos.guarantee=at_least_once} runs the same scenario without transactions, to see
 * the assertions catch what a SIGKILL does to an at-least-once count.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StreamsEosIT {
    /** Open transactions past their timeout (Streams' EOS default: 10 s) are aborted within a second, not ten. */
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.transaction.abort-timed-out-interval", "1s"));

    static final String IN = "eos-lines";
    static final String OUT = "eos-counts";
    static final String APP = "eos-wordcount";
    /** The count's repartition topic: {@code <application.id>-<store name>-repartition}. */
    static final String REPARTITION = APP + "-counts-repartition";
    static final int PARTITIONS = 3;
    static final String GUARANTEE = System.getProperty("kaas.it.streams-eos.guarantee", StreamsConfig.EXACTLY_ONCE_V2);
    static final List<String> VOCABULARY = List.of("alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
            "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
            "uniform", "victor", "whiskey", "xray", "yankee", "zulu");
    /** Lines per round; 20,000 in all, each of 1 to 4 words. */
    static final int[] ROUNDS = {8_000, 4_000, 4_000, 4_000};

    static KaasCluster cluster;

    @TempDir
    Path tmp;

    final List<Process> children = new ArrayList<>();
    final List<Path> childLogs = new ArrayList<>();
    /** Feeds input while an instance runs; {@link #fed} counts the lines it has sent. */
    final ExecutorService feeder = Executors.newSingleThreadExecutor();
    final AtomicInteger fed = new AtomicInteger();

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    @AfterEach
    void killChildren() throws InterruptedException {
        feeder.shutdownNow();
        for (Process p : children) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void wordCountStaysExactlyOnceThroughSigkills() throws Throwable {
        try {
            run();
        } catch (Throwable t) {
            dumpDiagnostics();
            throw t;
        }
    }

    private void run() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(IN, PARTITIONS, (short) 1), new NewTopic(OUT, PARTITIONS, (short) 1)))
                    .all().get(30, TimeUnit.SECONDS);
            log("processing.guarantee=" + GUARANTEE + ", broker log " + cluster.brokerLog());

            Random random = new Random(20_240_607L);
            Map<String, Long> expected = new TreeMap<>();
            List<List<String>> rounds = new ArrayList<>();
            long[] wordsUpTo = new long[ROUNDS.length];
            for (int round = 0; round < ROUNDS.length; round++) {
                int n = ROUNDS[round];
                List<String> lines = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int words = 1 + random.nextInt(4);
                    StringBuilder line = new StringBuilder();
                    for (int w = 0; w < words; w++) {
                        String word = VOCABULARY.get(random.nextInt(VOCABULARY.size()));
                        expected.merge(word, 1L, Long::sum);
                        line.append(w == 0 ? "" : " ").append(word);
                    }
                    lines.add(line.toString());
                }
                rounds.add(lines);
                wordsUpTo[round] = expected.values().stream().mapToLong(Long::longValue).sum();
            }
            long totalWords = expected.values().stream().mapToLong(Long::longValue).sum();
            log("input: " + rounds.stream().mapToInt(List::size).sum() + " lines, " + totalWords + " words");

            Path stateA = tmp.resolve("state-a");
            Path stateB = tmp.resolve("state-b");

            // 1. A backlog and a first instance. Once every count task has committed output, more input arrives
            //    while it runs, and the instance is SIGKILLed mid-stream.
            produce(rounds.get(0), 0, false);
            Process first = startChild("1", stateA);
            awaitCommittedOutput(first, admin, Map.of(), 100);
            killMidStream(admin, first, "first", rounds.get(1), ROUNDS[0], wordsUpTo[1]);
            // Its high watermarks: past them, the last stable offsets show transactions the second instance committed
            // (the first one's open transactions end in abort markers that would move the LSO without any progress).
            Map<TopicPartition, Long> afterFirst = outputEnds(admin, IsolationLevel.READ_UNCOMMITTED);

            // 2. Same state dir (same transactional ids); SIGKILLed again once it has made progress of its own.
            Process second = startChild("2", stateA);
            awaitCommittedOutput(second, admin, afterFirst, 100);
            killMidStream(admin, second, "second", rounds.get(2), ROUNDS[0] + ROUNDS[1], wordsUpTo[2]);

            // 3. An empty state dir (new transactional ids, store restored from the changelog) finishes the job.
            produce(rounds.get(3), ROUNDS[0] + ROUNDS[1] + ROUNDS[2], false);
            Process third = startChild("3", stateB);
            awaitCounts(third, expected);
            // Everything was consumed and the consumption committed.
            Map<TopicPartition, Long> inputEnds = ends(admin, IN, IsolationLevel.READ_UNCOMMITTED);
            awaitTrue(third, Duration.ofSeconds(30), "input offsets committed up to the end " + inputEnds,
                    () -> committed(admin, IN).equals(inputEnds));
            third.destroy();
            if (!third.waitFor(40, TimeUnit.SECONDS)) {
                third.destroyForcibly();
            }

            List<ConsumerRecord<String, Long>> committed = readOutput(admin, IsolationLevel.READ_COMMITTED);
            List<ConsumerRecord<String, Long>> all = readOutput(admin, IsolationLevel.READ_UNCOMMITTED);
            log("output: " + committed.size() + " records read_committed, " + all.size() + " read_uncommitted");

            Map<String, List<Long>> seen = new TreeMap<>();
            Map<String, Integer> partitionOf = new HashMap<>();
            for (ConsumerRecord<String, Long> r : committed) {
                seen.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                Integer before = partitionOf.putIfAbsent(r.key(), r.partition());
                assertThat(before == null || before == r.partition()).as("%s on one partition", r.key()).isTrue();
            }
            List<String> broken = new ArrayList<>();
            for (Map.Entry<String, Long> e : expected.entrySet()) {
                List<Long> counts = seen.getOrDefault(e.getKey(), List.of());
                String problem = firstDeviation(counts, e.getValue());
                if (problem != null) {
                    broken.add(e.getKey() + ": " + problem);
                }
            }
            assertThat(seen.keySet()).as("words on the output").isEqualTo(expected.keySet());
            assertThat(broken).as("words whose committed counts are not exactly 1, 2, ..., N").isEmpty();
            assertThat(committed).as("one committed output record per input word").hasSize((int) totalWords);
            assertThat(all.size()).as("read_uncommitted also sees the aborted records").isGreaterThanOrEqualTo(committed.size());
        }
    }

    /** Null if {@code counts} is exactly 1..n, else where it first goes wrong. */
    static String firstDeviation(List<Long> counts, long n) {
        for (int i = 0; i < counts.size(); i++) {
            if (counts.get(i) != i + 1) {
                String what = counts.get(i) <= i ? "duplicate" : "gap";
                return what + " at position " + (i + 1) + ": ..." + counts.subList(Math.max(0, i - 3), Math.min(counts.size(), i + 4))
                        + "... (" + counts.size() + " records, last " + counts.get(counts.size() - 1) + ", expected last " + n + ")";
            }
        }
        return counts.size() == n ? null : "counts 1.." + counts.size() + ", expected 1.." + n;
    }

    // ------------------------------------------------------------------ the child JVM

    Process startChild(String name, Path stateDir) throws IOException {
        Path log = tmp.resolve("streams-" + name + ".log");
        String testClasses;
        try {
            testClasses = Path.of(StreamsEosApp.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", ShellTools.classpath() + File.pathSeparator + testClasses, StreamsEosApp.class.getName(),
                cluster.bootstrap(), APP, stateDir.toString(), GUARANTEE, IN, OUT, "2");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        children.add(p);
        childLogs.add(log);
        log("started Streams child " + name + " (pid " + p.pid() + ", state dir " + stateDir.getFileName() + ")");
        return p;
    }

    /**
     * Feeds {@code lines} to the running instance at a steady pace and SIGKILLs it mid-stream: while the feed goes on,
     * input it has not committed is waiting and one of its output transactions is open. Then checks that it died with
     * part of the work committed: some output, but not one record per word produced.
     */
    void killMidStream(Admin admin, Process child, String which, List<String> lines, int firstIndex, long wordsProduced)
            throws Exception {
        fed.set(0);
        Future<?> feeding = feeder.submit(() -> {
            produce(lines, firstIndex, true);
            return null;
        });
        long[] inputEndAtKill = new long[1];
        awaitTrue(child, Duration.ofSeconds(60), "the " + which + " instance busy: input fed, not all committed, an output transaction open",
                () -> {
                    if (fed.get() < lines.size() / 4) {
                        return false;
                    }
                    Map<TopicPartition, Long> lso = outputEnds(admin, IsolationLevel.READ_COMMITTED);
                    inputEndAtKill[0] = sum(ends(admin, IN, IsolationLevel.READ_UNCOMMITTED));
                    // (at_least_once writes no transactions: nothing to wait for there)
                    boolean outputTransactionOpen = GUARANTEE.equals(StreamsConfig.AT_LEAST_ONCE)
                            || !outputEnds(admin, IsolationLevel.READ_UNCOMMITTED).equals(lso);
                    return outputTransactionOpen && sum(committed(admin, IN)) < inputEndAtKill[0];
                });
        int fedAtKill = fed.get();
        child.destroyForcibly();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child died").isTrue();
        Map<TopicPartition, Long> hw = outputEnds(admin, IsolationLevel.READ_UNCOMMITTED);
        Map<TopicPartition, Long> lso = outputEnds(admin, IsolationLevel.READ_COMMITTED);
        long inputCommitted = sum(committed(admin, IN));
        String repartition = sum(committed(admin, REPARTITION)) + " of " + sum(ends(admin, REPARTITION, IsolationLevel.READ_UNCOMMITTED));
        feeding.get(60, TimeUnit.SECONDS);
        int committedOut = readOutput(admin, IsolationLevel.READ_COMMITTED).size();
        log("SIGKILLed the " + which + " instance: output hw " + hw + ", lso " + lso + " (hw > lso: a transaction the kill left open); "
                + committedOut + " output records committed of " + wordsProduced + " words produced; input offsets committed "
                + inputCommitted + " of " + inputEndAtKill[0] + " at the kill; repartition offsets committed " + repartition
                + "; " + fedAtKill + " of " + lines.size() + " lines of the round fed at the kill");
        assertThat(fedAtKill).as("the " + which + " instance was killed while input was still arriving").isLessThan(lines.size());
        assertThat(committedOut).as("committed output records (one per word counted) when the " + which + " instance was killed")
                .isPositive()
                .isLessThan((int) wordsProduced);
    }

    // ------------------------------------------------------------------ waits (all bounded)

    /**
     * Until the last stable offset of every output partition is {@code progress} past {@code from}: each of the three
     * count tasks (task 1_p writes output partition p only: the repartition and output topics are both keyed by the word)
     * has committed transactions.
     */
    void awaitCommittedOutput(Process child, Admin admin, Map<TopicPartition, Long> from, long progress) throws Exception {
        awaitTrue(child, Duration.ofSeconds(90), "every output partition's committed offset to pass " + from + " by " + progress,
                () -> outputEnds(admin, IsolationLevel.READ_COMMITTED).entrySet().stream()
                        .allMatch(e -> e.getValue() >= from.getOrDefault(e.getKey(), 0L) + progress));
    }

    /** Until every word's latest committed count is at least the expected one. */
    void awaitCounts(Process child, Map<String, Long> expected) throws Exception {
        Map<String, Long> latest = new HashMap<>();
        try (KafkaConsumer<String, Long> c = outputConsumer(IsolationLevel.READ_COMMITTED)) {
            List<TopicPartition> tps = outputPartitions();
            c.assign(tps);
            c.seekToBeginning(tps);
            awaitTrue(child, Duration.ofSeconds(120), "all counts to reach " + expected, () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> latest.merge(r.key(), r.value(), Math::max));
                return expected.entrySet().stream().allMatch(e -> latest.getOrDefault(e.getKey(), 0L) >= e.getValue());
            });
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    void awaitTrue(Process child, Duration max, String what, Check check) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        while (!check.ok()) {
            if (!child.isAlive()) {
                fail("Streams child exited with " + child.exitValue() + " while waiting for " + what);
            }
            if (System.nanoTime() > deadline) {
                fail("not within " + max + ": " + what);
            }
            Thread.sleep(20);
        }
    }

    // ------------------------------------------------------------------ clients

    /** All at once, or {@code paced}: 100 lines every 50 ms, as a live source would. */
    void produce(List<String> lines, int firstIndex, boolean paced) throws Exception {
        Properties p = cluster.clientProps();
        p.put("acks", "all");
        p.put("linger.ms", 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < lines.size(); i++) {
                sent.add(producer.send(new ProducerRecord<>(IN, "line-" + (firstIndex + i), lines.get(i))));
                if (paced && i % 100 == 99) {
                    producer.flush();
                    fed.set(i + 1);
                    Thread.sleep(50);
                }
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
            fed.set(lines.size());
        }
        log("produced " + lines.size() + " lines" + (paced ? " (paced)" : ""));
    }

    KafkaConsumer<String, Long> outputConsumer(IsolationLevel isolation) {
        Properties p = cluster.clientProps();
        p.put("isolation.level", isolation.toString().toLowerCase(Locale.ROOT));
        p.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer());
    }

    static List<TopicPartition> outputPartitions() {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            tps.add(new TopicPartition(OUT, p));
        }
        return tps;
    }

    /** The whole output topic under {@code isolation}, up to its end (the LSO for read_committed), in offset order per partition. */
    List<ConsumerRecord<String, Long>> readOutput(Admin admin, IsolationLevel isolation) throws Exception {
        List<ConsumerRecord<String, Long>> out = new ArrayList<>();
        try (KafkaConsumer<String, Long> c = outputConsumer(isolation)) {
            List<TopicPartition> tps = outputPartitions();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!tps.stream().allMatch(tp -> c.position(tp, Duration.ofSeconds(30)) >= end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    fail("output not read to " + end + " within 60 s (" + isolation + ")");
                }
                c.poll(Duration.ofMillis(300)).forEach(out::add);
            }
        }
        return out;
    }

    Map<TopicPartition, Long> outputEnds(Admin admin, IsolationLevel isolation) throws Exception {
        return ends(admin, OUT, isolation);
    }

    static Map<TopicPartition, Long> ends(Admin admin, String topic, IsolationLevel isolation) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new LinkedHashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            specs.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> out = new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
        admin.listOffsets(specs, new ListOffsetsOptions(isolation)).all().get(30, TimeUnit.SECONDS)
                .forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    static Map<TopicPartition, Long> committed(Admin admin, String topic) throws Exception {
        Map<TopicPartition, Long> out = new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(APP).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
        offsets.forEach((tp, om) -> {
            if (tp.topic().equals(topic) && om != null) {
                out.put(tp, om.offset());
            }
        });
        return out;
    }

    static long sum(Map<TopicPartition, Long> offsets) {
        return offsets.values().stream().mapToLong(Long::longValue).sum();
    }

    // ------------------------------------------------------------------ diagnostics

    static final long T0 = System.nanoTime();

    static void log(String line) {
        System.out.printf(Locale.ROOT, "[StreamsEosIT %6.1f s] %s%n", (System.nanoTime() - T0) / 1e9, line);
    }

    void dumpDiagnostics() {
        Path keep = Path.of("target", "streams-eos-logs");
        try {
            Files.createDirectories(keep);
            for (Path log : childLogs) {
                Files.copy(log, keep.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            Files.copy(cluster.brokerLog(), keep.resolve("broker.log"), StandardCopyOption.REPLACE_EXISTING);
            System.out.println("logs kept in " + keep.toAbsolutePath());
        } catch (IOException e) {
            System.out.println("could not keep the logs: " + e);
        }
        for (Path log : childLogs) {
            System.out.println("----- tail of " + log);
            System.out.println(KaasCluster.tail(log, 80));
        }
        System.out.println("----- tail of " + cluster.brokerLog());
        System.out.println(KaasCluster.tail(cluster.brokerLog(), 60));
    }
}
