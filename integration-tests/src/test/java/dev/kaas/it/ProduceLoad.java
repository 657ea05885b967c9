package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A Java producer with the 3.7 defaults (idempotent, acks=all) writing {@code p<partition>-<seq>}
 * round-robin over a topic's partitions at a moderate rate on its own thread, recording every
 * acknowledgement (with its time) and every failure; then {@link #verify} reads the topic back.
 */
final class ProduceLoad implements AutoCloseable {
    record Ack(int partition, long offset, long seq, long nanos) {
    }

    private final String topic;
    private final int partitions;
    private final KafkaProducer<String, String> producer;
    private final Thread thread;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final long[] nextSeq;
    final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();
    private final AtomicLong sent = new AtomicLong();

    ProduceLoad(Properties clientProps, String topic, int partitions, int recordsPerSecond) {
        this.topic = topic;
        this.partitions = partitions;
        this.nextSeq = new long[partitions];
        Properties p = new Properties();
        p.putAll(clientProps);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        long pauseNanos = TimeUnit.SECONDS.toNanos(1) / recordsPerSecond;
        this.thread = new Thread(() -> {
            long next = System.nanoTime();
            int partition = 0;
            while (running.get()) {
                int part = partition;
                long seq = nextSeq[part]++;
                producer.send(new ProducerRecord<>(topic, part, null, "p" + part + "-" + seq), (md, e) -> {
                    if (e != null) {
                        failures.add(e);
                    } else {
                        acks.add(new Ack(part, md.offset(), seq, System.nanoTime()));
                    }
                });
                sent.incrementAndGet();
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
        }, "produce-load");
        thread.start();
    }

    long acked() {
        return acks.size();
    }

    /** The first acknowledgement of {@code partition} that arrived after {@code afterNanos}, or -1. */
    long firstAckAfter(int partition, long afterNanos) {
        long best = -1;
        for (Ack a : acks) {
            if (a.partition() == partition && a.nanos() > afterNanos && (best < 0 || a.nanos() < best)) {
                best = a.nanos();
            }
        }
        return best;
    }

    /** Waits until every partition in {@code moved} has an acknowledgement after {@code t0}; returns the slowest, in ms. */
    long awaitTakeover(Set<Integer> moved, long t0, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() < deadline) {
            long slowest = 0;
            boolean all = true;
            for (int p : moved) {
                long first = firstAckAfter(p, t0);
                if (first < 0) {
                    all = false;
                    break;
                }
                slowest = Math.max(slowest, first - t0);
            }
            if (all) {
                return TimeUnit.NANOSECONDS.toMillis(slowest);
            }
            Thread.sleep(20);
        }
        throw new AssertionError("partitions " + moved + " had no acknowledgement within " + bound + " of the event");
    }

    /** Stops sending and waits for every record sent to be acknowledged or failed. */
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

    /**
     * After {@link #stop}: nothing failed, and the topic read back holds every acknowledged record
     * exactly once, at its acknowledged offset, in the order it was sent per partition.
     */
    void verify(Properties clientProps) {
        assertThat(failures).as("failed sends (the client saw a non-retriable error or ran out of time)").isEmpty();
        assertThat(acks.size()).as("acknowledged = sent").isEqualTo(sent.get());
        Map<Integer, List<ConsumerRecord<String, String>>> read = readAll(clientProps);
        for (int p = 0; p < partitions; p++) {
            List<ConsumerRecord<String, String>> records = read.getOrDefault(p, List.of());
            Set<String> seen = new HashSet<>();
            long lastSeq = -1;
            for (ConsumerRecord<String, String> r : records) {
                assertThat(seen.add(r.value())).as("duplicate %s in partition %d at offset %d", r.value(), p, r.offset()).isTrue();
                long seq = Long.parseLong(r.value().substring(r.value().indexOf('-') + 1));
                assertThat(seq).as("order in partition %d at offset %d", p, r.offset()).isGreaterThan(lastSeq);
                lastSeq = seq;
            }
            Map<Long, String> byOffset = new HashMap<>();
            records.forEach(r -> byOffset.put(r.offset(), r.value()));
            for (Ack a : acks) {
                if (a.partition() == p) {
                    assertThat(byOffset.get(a.offset())).as("acknowledged record p%d-%d at offset %d", p, a.seq(), a.offset())
                            .isEqualTo("p" + p + "-" + a.seq());
                }
            }
        }
    }

    private Map<Integer, List<ConsumerRecord<String, String>>> readAll(Properties clientProps) {
        Map<Integer, Long> expectedEnd = new HashMap<>();
        for (Ack a : acks) {
            expectedEnd.merge(a.partition(), a.offset() + 1, Math::max);
        }
        Map<Integer, List<ConsumerRecord<String, String>>> out = new ConcurrentHashMap<>();
        Properties p = new Properties();
        p.putAll(clientProps);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(300)).forEach(r -> out.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r));
                boolean done = true;
                for (int i = 0; i < partitions; i++) {
                    if (c.position(tps.get(i)) < expectedEnd.getOrDefault(i, 0L)) {
                        done = false;
                    }
                }
                if (done) {
                    break;
                }
            }
        }
        return out;
    }
}
