package dev.kaas.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One Java producer with the Kafka 3.7 defaults (idempotent, acks=all; {@code linger.ms=5})
 * writing {@code p<partition>-<seq>} round-robin over a topic's partitions at a fixed rate on its
 * own thread. It records every acknowledgement (partition, offset, seq) and every failure, can
 * time a takeover ({@link #watch}: the first acknowledgement, per partition, of a record sent
 * after an event), and after {@link #stop} reads the topic back and counts what went wrong
 * ({@link #check}). It counts rather than asserts: the chaos benchmark reports every kind of
 * error, not the first.
 *
 * <p>Threads: the sending thread calls {@code send}; completions run on the producer's I/O thread
 * (or the sending thread, for a send that fails at once); the caller's thread reads the counters.
 */
final class SequencedLoad implements AutoCloseable {
    private final String topic;
    private final int partitions;
    private final KafkaProducer<String, String> producer;
    private final Thread thread;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final long[] nextSeq;
    /** Per partition, the acknowledged records as {offset, seq} pairs, in completion order. */
    private final List<List<long[]>> acked = new ArrayList<>();
    private final ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong ackCount = new AtomicLong();
    /** The event the current watch times takeovers from. */
    private volatile long watchT0;
    /** Records sent after this instant count for the current watch; Long.MAX_VALUE when none. */
    private volatile long watchFrom = Long.MAX_VALUE;
    /** Per partition, when the first acknowledgement of a record sent after {@link #watchFrom} arrived (0: none yet). */
    private volatile AtomicLongArray firstAck;

    SequencedLoad(String bootstrap, String topic, int partitions, int recordsPerSecond) {
        this.topic = topic;
        this.partitions = partitions;
        this.nextSeq = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            acked.add(new ArrayList<>());
        }
        this.firstAck = new AtomicLongArray(partitions);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        long pauseNanos = TimeUnit.SECONDS.toNanos(1) / recordsPerSecond;
        this.thread = new Thread(() -> {
            long next = System.nanoTime();
            int partition = 0;
            while (running.get()) {
                send(partition);
                partition = (partition + 1) % partitions;
                next += pauseNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }, "sequenced-load");
        thread.start();
    }

    private void send(int part) {
        long seq = nextSeq[part]++;
        long sentAt = System.nanoTime();
        sent.incrementAndGet();
        try {
            producer.send(new ProducerRecord<>(topic, part, null, "p" + part + "-" + seq), (md, e) -> {
                if (e != null) {
                    failures.add(e);
                    return;
                }
                long now = System.nanoTime();
                synchronized (acked.get(part)) {
                    acked.get(part).add(new long[] {md.offset(), seq});
                }
                ackCount.incrementAndGet();
                // The array before the instant: watch() closes the window before it replaces the array.
                AtomicLongArray first = firstAck;
                if (sentAt > watchFrom) {
                    first.compareAndSet(part, 0, now);
                }
            });
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }

    long acked() {
        return ackCount.get();
    }

    long sent() {
        return sent.get();
    }

    int failed() {
        return failures.size();
    }

    List<Exception> failures() {
        return List.copyOf(failures);
    }

    /**
     * Starts timing a takeover of an event at {@code t0} (a {@link System#nanoTime} instant): from
     * now on, the first acknowledgement of a record sent after {@code sentAfter} is noted per
     * partition. Pass as {@code sentAfter} the instant the event had surely happened (the signal
     * delivered, the process reaped): a record sent after it can only be acknowledged by whoever
     * leads its partition then, so an answer the old leader sent just before the event does not count.
     */
    void watch(long t0, long sentAfter) {
        watchFrom = Long.MAX_VALUE;
        firstAck = new AtomicLongArray(partitions);
        watchT0 = t0;
        watchFrom = sentAfter;
    }

    /** Milliseconds from the watch's start to the first acknowledgement on {@code partition}, or -1 if none yet. */
    long takeoverMs(int partition) {
        long at = firstAck.get(partition);
        return at == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(at - watchT0);
    }

    /** The slowest of {@code moved}'s takeovers, or -1 while one of them has no acknowledgement yet. */
    long takeoverMs(Set<Integer> moved) {
        long slowest = 0;
        for (int p : moved) {
            long ms = takeoverMs(p);
            if (ms < 0) {
                return -1;
            }
            slowest = Math.max(slowest, ms);
        }
        return slowest;
    }

    /** Waits until at least {@code atLeast} records are acknowledged; false if that takes longer than {@code bound}. */
    boolean awaitAcked(long atLeast, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (ackCount.get() < atLeast) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Stops sending and waits until every record sent is acknowledged or failed. */
    void stop() throws InterruptedException {
        running.set(false);
        thread.join(10_000);
        producer.flush();
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        thread.join(10_000);
        producer.close(Duration.ofSeconds(30));
    }

    /** What reading the topic back found, against what the producer was told. */
    record Check(long acknowledged, long sent, long failed, long lost, long duplicated, long outOfOrder, long read) {
        boolean clean() {
            return lost == 0 && duplicated == 0 && outOfOrder == 0;
        }
    }

    /**
     * After {@link #stop}: reads every partition from the start to its end offset and counts
     * <em>lost</em> (acknowledged, but its offset holds something else or nothing),
     * <em>duplicated</em> (a value present more than once; each extra copy counts), and
     * <em>out of order</em> (a record whose seq is not above the one before it in its partition).
     */
    Check check(String bootstrap) {
        Map<Integer, Map<Long, String>> byOffset = new HashMap<>();
        long duplicated = 0;
        long outOfOrder = 0;
        long read = 0;
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("max.poll.records", "5000");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(60));
            Map<Integer, Set<String>> seen = new HashMap<>();
            Map<Integer, Long> lastSeq = new HashMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " back to its end offsets " + end + " within 300 s");
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    read++;
                    int p = r.partition();
                    byOffset.computeIfAbsent(p, k -> new HashMap<>()).put(r.offset(), r.value());
                    if (!seen.computeIfAbsent(p, k -> new HashSet<>()).add(r.value())) {
                        duplicated++;
                    }
                    long seq = Long.parseLong(r.value().substring(r.value().indexOf('-') + 1));
                    if (seq <= lastSeq.getOrDefault(p, -1L)) {
                        outOfOrder++;
                    }
                    lastSeq.put(p, seq);
                }
            }
        }
        long lost = 0;
        long acknowledged = 0;
        for (int p = 0; p < partitions; p++) {
            Map<Long, String> values = byOffset.getOrDefault(p, Map.of());
            synchronized (acked.get(p)) {
                for (long[] a : acked.get(p)) {
                    acknowledged++;
                    if (!("p" + p + "-" + a[1]).equals(values.get(a[0]))) {
                        lost++;
                    }
                }
            }
        }
        return new Check(acknowledged, sent.get(), failures.size(), lost, duplicated, outOfOrder, read);
    }
}
