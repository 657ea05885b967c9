package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Acknowledged means durable: restarts and SIGKILL lose no acknowledged record and duplicate none. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class DurabilityIT {
    @TempDir
    Path tmp;

    static List<ConsumerRecord<String, String>> readAll(KaasCluster cluster, String topic, int partitions, int atLeast, Duration quiet) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        Properties p = cluster.clientProps();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            long lastData = System.nanoTime();
            while (System.nanoTime() < deadline) {
                var batch = c.poll(Duration.ofMillis(300));
                batch.forEach(out::add);
                if (!batch.isEmpty()) {
                    lastData = System.nanoTime();
                } else if (out.size() >= atLeast && System.nanoTime() - lastData > quiet.toNanos()) {
                    break;
                }
            }
        }
        return out;
    }

    @Test
    void topicsAndRecordsSurviveARestartOfBothProcesses() throws Exception {
        Path data = tmp.resolve("data");
        try (KaasCluster cluster = KaasCluster.start(data)) {
            try (Admin admin = Admin.create(cluster.clientProps())) {
                admin.createTopics(List.of(new NewTopic("kept", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < 1000; i++) {
                    p.send(new ProducerRecord<>("kept", i % 2, "k" + i, "v" + i));
                }
                p.flush();
            }
        }
        try (KaasCluster again = KaasCluster.start(data)) {
            try (Admin admin = Admin.create(again.clientProps())) {
                assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("kept");
            }
            var got = readAll(again, "kept", 2, 1000, Duration.ofSeconds(1));
            assertThat(got).hasSize(1000);
            assertThat(got.stream().map(ConsumerRecord::value)).containsExactlyInAnyOrderElementsOf(
                    java.util.stream.IntStream.range(0, 1000).mapToObj(i -> "v" + i).toList());
            // And it keeps appending after the old records, under a new leader epoch.
            try (KafkaProducer<String, String> p = new KafkaProducer<>(again.clientProps(), new StringSerializer(), new StringSerializer())) {
                assertThat(p.send(new ProducerRecord<>("kept", 0, "k", "after restart")).get(30, TimeUnit.SECONDS).offset()).isEqualTo(500);
            }
        }
    }

    @Test
    void killMinusNineDuringAcksAllProductionLosesNoAcknowledgedRecord() throws Exception {
        String topic = "crash";
        int partitions = 3;
        try (KaasCluster cluster = KaasCluster.start(tmp.resolve("crash-data"))) {
            try (Admin admin = Admin.create(cluster.clientProps())) {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            Properties props = cluster.clientProps();
            props.put("acks", "all");
            props.put("linger.ms", "2");
            props.put("delivery.timeout.ms", "120000");
            Map<String, Long> acked = new ConcurrentHashMap<>();
            Map<Integer, List<String>> sentOrder = new ConcurrentHashMap<>();
            AtomicInteger failed = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger sequence = new AtomicInteger();
            Set<String> ackedAtKill;
            Thread producing;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
                producing = new Thread(() -> {
                    while (!stop.get()) {
                        int i = sequence.getAndIncrement();
                        int partition = i % partitions;
                        String value = "r-" + i;
                        sentOrder.computeIfAbsent(partition, k -> Collections.synchronizedList(new ArrayList<>())).add(value);
                        try {
                            producer.send(new ProducerRecord<>(topic, partition, null, value), (md, e) -> {
                                if (e == null) {
                                    acked.put(value, md.offset());
                                } else {
                                    failed.incrementAndGet();
                                }
                            });
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                        if (i % 200 == 0) {
                            try {
                                Thread.sleep(1);
                            } catch (InterruptedException ie) {
                                return;
                            }
                        }
                    }
                }, "crash-producer");
                producing.start();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (acked.size() < 20_000 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(acked.size()).as("acknowledged before the kill").isGreaterThanOrEqualTo(20_000);
                cluster.killBroker();
                ackedAtKill = Set.copyOf(acked.keySet());
                Thread.sleep(500);
                cluster.startBroker();
                long resumeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (acked.size() < ackedAtKill.size() + 5_000 && System.nanoTime() < resumeDeadline) {
                    Thread.sleep(50);
                }
                stop.set(true);
                producing.join(30_000);
                producer.flush();
            }
            // Acknowledged after the restart: at the end of their partition, beyond everything acknowledged before the kill.
            Map<Integer, Long> lastBeforeKill = new HashMap<>();
            for (String v : ackedAtKill) {
                lastBeforeKill.merge(partitionOf(v, partitions), acked.get(v), Math::max);
            }
            List<String> afterRestart = acked.keySet().stream().filter(v -> !ackedAtKill.contains(v)).toList();
            assertThat(afterRestart).as("records acknowledged after the restart").hasSizeGreaterThanOrEqualTo(5_000);
            for (String v : afterRestart) {
                assertThat(acked.get(v)).as("offset of %s, acknowledged after the restart", v)
                        .isGreaterThan(lastBeforeKill.getOrDefault(partitionOf(v, partitions), -1L));
            }

            // The producer is idempotent (the 3.x default) and its delivery timeout outlasts the restart, so the kill
            // may delay a send but must not fail it: every record sent was acknowledged in the end.
            int sent = sequence.get();
            assertThat(failed.get()).as("sends that failed").isZero();
            assertThat(acked).as("every record sent was acknowledged").hasSize(sent);

            var got = readAll(cluster, topic, partitions, acked.size(), Duration.ofSeconds(2));
            Map<Integer, List<String>> consumed = new HashMap<>();
            for (ConsumerRecord<String, String> r : got) {
                consumed.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.value());
                Long offset = acked.get(r.value());
                assertThat(offset).as("%s served at %d was acknowledged", r.value(), r.offset()).isNotNull();
                assertThat(r.offset()).as("acknowledged offset of %s", r.value()).isEqualTo(offset);
            }
            // Every record was acknowledged, so each partition must serve exactly what was sent to it, in send order, once.
            for (int p = 0; p < partitions; p++) {
                assertThat(consumed.getOrDefault(p, List.of())).as("partition %d: what was sent, in send order, each once", p)
                        .containsExactlyElementsOf(sentOrder.getOrDefault(p, List.of()));
            }
        }
    }

    static int partitionOf(String value, int partitions) {
        return Integer.parseInt(value.substring(2)) % partitions;
    }
}
