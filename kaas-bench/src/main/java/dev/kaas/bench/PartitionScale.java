package dev.kaas.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@code ./kaas bench --partitions}: how a cluster's cost grows with the partition count. For each
 * count, each system starts fresh on an empty directory: kaas with 3 brokers and its controller,
 * Apache 3.7.2 as one KRaft node, and as three (combined mode, RF=1 here). Measured: open file
 * descriptors and RSS summed over the server processes before the topic exists, after it exists,
 * and after producing to every partition; the time to create the topic until every partition has
 * a leader; produce throughput of in-process Java producers (acks=all, idempotent, batch.size 64
 * KiB, linger.ms 5, the same for every system) writing round-robin over all partitions; and, for
 * kaas, the takeover of a killed broker's partitions: kill -9 one broker, then the time until
 * every partition it led has acknowledged an acks=all produce sent after the kill.
 */
public final class PartitionScale {
    static final String TOPIC = "scale";
    static final List<String> SYSTEMS = List.of("kaas", "apache-1", "apache-3");

    record Options(Path root, Path work, List<Integer> counts, List<String> systems, int records, int recordSize, int producers) {
    }

    /** One system at one partition count. Footprints: before the topic, after it exists, after producing. */
    record Row(int partitions, String system, long createMs, String created, ServerSystem.Footprint base, ServerSystem.Footprint afterCreate,
               ServerSystem.Footprint afterProduce, double mbPerSec, long failed, long takeoverMs, int moved) {
    }

    record Produced(double mbPerSec, long failed) {
    }

    /** Milliseconds until the last of a killed broker's partitions acknowledged a produce (-1: not measured), and how many it led. */
    record Takeover(long ms, int partitions) {
    }

    private final Options opts;
    private final SideBySide launcher;
    private final List<Row> rows = new ArrayList<>();

    PartitionScale(Options opts) throws Exception {
        this.opts = opts;
        this.launcher = new SideBySide(new SideBySide.Options(opts.root(), opts.work(), opts.records(), opts.recordSize(), 1, 0, opts.systems()));
    }

    /** Parses {@code --partitions [--counts 1,100,1000,10000] [--systems kaas,apache-1,apache-3] [--records N] [--producers N]}. */
    static int main0(String[] args) throws Exception {
        Path root = Path.of(".").toAbsolutePath().normalize();
        List<Integer> counts = List.of(1, 100, 1_000, 10_000);
        List<String> systems = SYSTEMS;
        int records = 200_000;
        int producers = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--partitions" -> {
                }
                case "--root" -> root = Path.of(args[++i]).toAbsolutePath().normalize();
                case "--counts" -> counts = Arrays.stream(args[++i].split(",")).map(Integer::parseInt).toList();
                case "--systems" -> systems = List.of(args[++i].split(","));
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--producers" -> producers = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option for --partitions: " + args[i]
                        + " (options: --counts 1,100,1000,10000, --systems kaas,apache-1,apache-3, --records N, --producers N)");
            }
        }
        if (!SYSTEMS.containsAll(systems)) {
            throw new IllegalArgumentException("--systems takes " + SYSTEMS + ", not " + systems);
        }
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), "partitions-");
        new PartitionScale(new Options(root, work, counts, systems, records, 1024, producers)).run();
        return 0;
    }

    List<Row> run() throws Exception {
        System.out.printf("partitions: counts %s, systems %s, at least %d records x %d B from %d producers per run, work dir %s%n", opts.counts(),
                opts.systems(), opts.records(), opts.recordSize(), opts.producers(), opts.work());
        SideBySide.warmProbe();
        for (int i = 0; i < opts.counts().size(); i++) {
            int count = opts.counts().get(i);
            launcher.showCommands(i == 0);
            List<String> order = new ArrayList<>(opts.systems());
            if (i % 2 == 1) {
                Collections.reverse(order);
            }
            for (String system : order) {
                System.out.printf("%d partitions: %s%n", count, system);
                Path dir = opts.work().resolve(system + "-" + count);
                Files.createDirectories(dir);
                Row row = measure(system, count, dir);
                rows.add(row);
                System.out.printf("  created in %d ms (%s); fds %d -> %d -> %d; RSS MiB %.0f -> %.0f -> %.0f; produce %.2f MB/s (%d failed)%s%n",
                        row.createMs(), row.created(), row.base().fds(), row.afterCreate().fds(), row.afterProduce().fds(), row.base().rssMiB(),
                        row.afterCreate().rssMiB(), row.afterProduce().rssMiB(), row.mbPerSec(), row.failed(),
                        row.takeoverMs() < 0 ? "" : String.format("; kill -9 takeover of %d partitions %d ms", row.moved(), row.takeoverMs()));
                SideBySide.deleteTree(dir.resolve("data"));
                for (int n = 1; n <= 3; n++) {
                    SideBySide.deleteTree(dir.resolve("node-" + n).resolve("data"));
                }
                SideBySide.settleDisk();
            }
        }
        String table = table();
        System.out.print(table);
        Files.writeString(opts.work().resolve("partitions.md"), table);
        System.out.println("written to " + opts.work().resolve("partitions.md"));
        return rows;
    }

    private Row measure(String system, int count, Path dir) throws Exception {
        boolean kaas = system.equals("kaas");
        try (ServerSystem s = kaas ? LocalKaasCluster.start(launcher, dir, 3, Map.of())
                : LocalApacheCluster.start(launcher, launcher.dist(), dir, system.equals("apache-3") ? 3 : 1, List.of());
             Admin admin = Placement.admin(s.bootstrap());
             Admin patient = Placement.patientAdmin(s.bootstrap(), Duration.ofMinutes(10))) {
            ServerSystem.Footprint base = ServerSystem.settledFootprint(s.processes());
            long t0 = System.nanoTime();
            String created = ServerSystem.createTopic(patient, TOPIC, count, (short) 1, Map.of());
            Placement.await(admin, TOPIC, l -> l.size() == count && !l.containsValue(-1), Duration.ofMinutes(10));
            long createMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            ServerSystem.Footprint afterCreate = ServerSystem.settledFootprint(s.processes());
            Produced produced = produce(s.bootstrap(), count);
            ServerSystem.Footprint afterProduce = ServerSystem.settledFootprint(s.processes());
            Takeover takeover = kaas ? takeover((LocalKaasCluster) s, admin, count) : new Takeover(-1, 0);
            return new Row(count, system, createMs, created, base, afterCreate, afterProduce, produced.mbPerSec(), produced.failed(),
                    takeover.ms(), takeover.partitions());
        }
    }

    /**
     * {@code kafka-producer-perf-test} in this JVM: {@code opts.producers()} producers, each on its
     * own thread, unthrottled, together at least {@code opts.records()} records and at least one per
     * partition, round-robin over every partition. MB as the perf tool counts them (2^20 bytes).
     */
    private Produced produce(String bootstrap, int partitions) throws Exception {
        int total = Math.max(opts.records(), partitions);
        int per = (total + opts.producers() - 1) / opts.producers();
        byte[] payload = new byte[opts.recordSize()];
        Random random = new Random(1);
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) ('A' + random.nextInt(26));
        }
        AtomicLong failed = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        for (int i = 0; i < opts.producers(); i++) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            producers.add(new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer()));
        }
        try {
            // Metadata first, so the timed part is producing only.
            for (KafkaProducer<byte[], byte[]> producer : producers) {
                producer.partitionsFor(TOPIC);
            }
            CountDownLatch done = new CountDownLatch(opts.producers());
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < opts.producers(); i++) {
                int id = i;
                KafkaProducer<byte[], byte[]> producer = producers.get(i);
                Thread t = new Thread(() -> {
                    try {
                        for (int n = 0; n < per; n++) {
                            int partition = (int) (((long) n * opts.producers() + id) % partitions);
                            producer.send(new ProducerRecord<>(TOPIC, partition, null, payload), (md, e) -> {
                                if (e != null) {
                                    failed.incrementAndGet();
                                } else {
                                    acked.incrementAndGet();
                                }
                            });
                        }
                        producer.flush();
                    } catch (RuntimeException e) {
                        failed.incrementAndGet();
                        System.out.println("  producer " + id + " stopped: " + e);
                    } finally {
                        done.countDown();
                    }
                }, "scale-producer-" + i);
                threads.add(t);
                t.start();
            }
            if (!done.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("producers did not finish in 30 minutes");
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            double mb = (double) acked.get() * opts.recordSize() / (1024 * 1024);
            return new Produced(mb / seconds, failed.get());
        } finally {
            for (KafkaProducer<byte[], byte[]> producer : producers) {
                producer.close(Duration.ofSeconds(30));
            }
        }
    }

    /**
     * Kills broker 2 with SIGKILL and measures the time from the kill until every partition it led
     * has acknowledged a record sent after the kill. The probe producer is warmed
     * up (metadata, connections, producer id) by one acknowledged record on each of those
     * partitions first; it keeps the 3.7 client defaults for retries and back-off, and a delivery
     * timeout long enough that a slow takeover is measured rather than failed.
     */
    private Takeover takeover(LocalKaasCluster cluster, Admin admin, int partitions) throws Exception {
        int victim = 2;
        Set<Integer> moved = Placement.ledBy(Placement.await(admin, TOPIC, l -> l.size() == partitions && !l.containsValue(-1),
                Duration.ofMinutes(2)), victim);
        if (moved.isEmpty()) {
            return new Takeover(-1, 0);
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "1024");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "600000");
        try (KafkaProducer<byte[], byte[]> probe = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            List<java.util.concurrent.Future<?>> warm = new ArrayList<>();
            for (int partition : moved) {
                warm.add(probe.send(new ProducerRecord<>(TOPIC, partition, null, new byte[] {1})));
            }
            for (var f : warm) {
                f.get(2, TimeUnit.MINUTES);
            }
            List<Integer> list = new ArrayList<>(moved);
            AtomicLongArray ackedAt = new AtomicLongArray(list.size());
            AtomicLong failed = new AtomicLong();
            CountDownLatch all = new CountDownLatch(list.size());
            long t0 = System.nanoTime();
            cluster.kill(victim);
            for (int i = 0; i < list.size(); i++) {
                int idx = i;
                probe.send(new ProducerRecord<>(TOPIC, list.get(i), null, new byte[] {2}), (md, e) -> {
                    if (e != null) {
                        failed.incrementAndGet();
                    } else {
                        ackedAt.set(idx, System.nanoTime());
                    }
                    all.countDown();
                });
            }
            if (!all.await(10, TimeUnit.MINUTES) || failed.get() > 0) {
                throw new IllegalStateException("takeover of " + list.size() + " partitions: " + failed.get() + " sends failed or some never answered");
            }
            long slowest = 0;
            for (int i = 0; i < list.size(); i++) {
                slowest = Math.max(slowest, ackedAt.get(i) - t0);
            }
            return new Takeover(TimeUnit.NANOSECONDS.toMillis(slowest), list.size());
        }
    }

    String table() {
        StringBuilder t = new StringBuilder();
        t.append(String.format("%n%s, partitions: at least %d records x %d B from %d producers per run; fds and RSS summed over the server processes"
                + " (kaas: 3 brokers + controller; apache-1: 1 KRaft node; apache-3: 3 KRaft nodes, combined mode)%n",
                LocalDateTime.now().withNano(0), opts.records(), opts.recordSize(), opts.producers()));
        t.append("| partitions | system | create ms | fds before / created / produced | RSS MiB before / created / produced | produce MB/s | failed | kill -9 takeover ms |\n");
        t.append("|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows.stream().sorted(java.util.Comparator.comparingInt(Row::partitions).thenComparingInt(r -> SYSTEMS.indexOf(r.system()))).toList()) {
            t.append(String.format("| %d | %s | %d | %d / %d / %d | %.0f / %.0f / %.0f | %.2f | %d | %s |%n", r.partitions(), r.system(), r.createMs(),
                    r.base().fds(), r.afterCreate().fds(), r.afterProduce().fds(), r.base().rssMiB(), r.afterCreate().rssMiB(), r.afterProduce().rssMiB(),
                    r.mbPerSec(), r.failed(), r.takeoverMs() < 0 ? "-" : r.takeoverMs() + " (" + r.moved() + " partitions)"));
        }
        perSystem(t, "Open fds per partition: (after producing - before the topic) / partitions", r -> (double) (r.afterProduce().fds() - r.base().fds()) / r.partitions());
        perSystem(t, "RSS KiB per partition held: (topic created - before it) / partitions",
                r -> (double) (r.afterCreate().rssKb() - r.base().rssKb()) / r.partitions());
        perSystem(t, "RSS KiB per partition after producing: (after producing - before the topic) / partitions (includes what the traffic grew, e.g. heap)",
                r -> (double) (r.afterProduce().rssKb() - r.base().rssKb()) / r.partitions());
        perSystem(t, "Produce MB/s", Row::mbPerSec);
        return t.toString();
    }

    /** One table: the metric per partition count and system, and the ratios kaas/Apache. */
    private void perSystem(StringBuilder t, String title, ToDoubleFunction<Row> metric) {
        t.append(String.format("%n%s%n| partitions | kaas | apache-1 | apache-3 | kaas/apache-1 | kaas/apache-3 |%n|---|---|---|---|---|---|%n", title));
        for (int count : opts.counts()) {
            double k = value(count, "kaas", metric);
            double a1 = value(count, "apache-1", metric);
            double a3 = value(count, "apache-3", metric);
            t.append(String.format("| %d | %.2f | %.2f | %.2f | %s | %s |%n", count, k, a1, a3, SideBySide.ratio(k, a1), SideBySide.ratio(k, a3)));
        }
    }

    private double value(int count, String system, ToDoubleFunction<Row> metric) {
        return rows.stream().filter(r -> r.partitions() == count && r.system().equals(system)).mapToDouble(metric).findFirst().orElse(Double.NaN);
    }

    List<Row> rows() {
        return rows;
    }
}
