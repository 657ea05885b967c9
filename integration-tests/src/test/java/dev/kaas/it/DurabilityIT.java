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
            Map<Integer, List<Integer>> sentOrder = new HashMap<>();
            AtomicInteger failed = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger sequence = new AtomicInteger();
            Thread producing;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
                producing = new Thread(() -> {
                    while (!stop.get()) {
                        int i = sequence.getAndIncrement();
                        int partition = i % partitions;
                        synchronized (sentOrder) {
                            sentOrder.computeIfAbsent(partition, k -> Collections.synchronizedList(new ArrayList<>())).add(i);
                        }
                        String value = "r-" + i;
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
                int ackedAtKill = acked.size();
                Thread.sleep(500);
                cluster.startBroker();
                long resumeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (acked.size() < ackedAtKill + 5_000 && System.nanoTime() < resumeDeadline) {
                    Thread.sleep(50);
                }
                stop.set(true);
                producing.join(30_000);
                producer.flush();
            }
            assertThat(acked.size()).as("production resumed after the restart").isGreaterThan(20_000);

            var got = readAll(cluster, topic, partitions, acked.size(), Duration.ofSeconds(2));
            Map<String, Integer> seen = new HashMap<>();
            Map<Integer, List<Integer>> consumedOrder = new HashMap<>();
            for (ConsumerRecord<String, String> r : got) {
                seen.merge(r.value(), 1, Integer::sum);
                consumedOrder.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(Integer.parseInt(r.value().substring(2)));
            }
            for (var e : acked.entrySet()) {
                assertThat(seen.get(e.getKey())).as("acknowledged record %s present exactly once", e.getKey()).isEqualTo(1);
            }
            assertThat(seen.values()).as("no record is duplicated, acknowledged or not").containsOnly(1);
            for (var e : consumedOrder.entrySet()) {
                assertThat(e.getValue()).as("partition %d in send order", e.getKey()).isSorted();
            }
            for (ConsumerRecord<String, String> r : got) {
                Long offset = acked.get(r.value());
                if (offset != null) {
                    assertThat(r.offset()).as("acknowledged offset of %s", r.value()).isEqualTo(offset);
                }
            }
        }
    }
}
