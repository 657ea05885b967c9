package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Clients across a broker kill on a 3-broker cluster: a consumer group whose coordinator dies, and librdkafka. */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ClusterClientsIT {
    @TempDir
    Path tmp;

    @Test
    void aCooperativeStickyGroupKeepsConsumingWhenItsCoordinatorIsKilledAndItsCommittedOffsetsSurvive() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("feed", 6, (short) 1))).all().get(30, TimeUnit.SECONDS);
            ClusterIT.awaitLeaders(admin, "feed", l -> !l.containsValue(-1));

            Map<String, Integer> consumed = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> members = new ArrayList<>();
            for (int m = 0; m < 3; m++) {
                Properties p = cluster.clientProps();
                p.put(ConsumerConfig.GROUP_ID_CONFIG, "watchers");
                p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
                p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
                Thread t = new Thread(() -> consume(p, consumed, errors, running), "member-" + m);
                t.start();
                members.add(t);
            }
            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "feed", 6, 300)) {
                awaitConsumed(consumed, 300, errors);
                Map<TopicPartition, OffsetAndMetadata> committedBefore = committed(admin);
                int coordinator = admin.describeConsumerGroups(List.of("watchers")).all().get(30, TimeUnit.SECONDS)
                        .get("watchers").coordinator().id();
                cluster.killBroker(coordinator);
                System.out.printf("killed broker %d, the group's coordinator%n", coordinator);
                int seen = consumed.size();
                awaitConsumed(consumed, seen + 600, errors);
                int newCoordinator = admin.describeConsumerGroups(List.of("watchers")).all().get(30, TimeUnit.SECONDS)
                        .get("watchers").coordinator().id();
                assertThat(newCoordinator).as("the group moved to a live broker").isNotEqualTo(coordinator);
                Map<TopicPartition, OffsetAndMetadata> committedAfter = committed(admin);
                committedBefore.forEach((tp, before) -> assertThat(committedAfter.get(tp).offset())
                        .as("committed offset of %s after the coordinator moved", tp).isGreaterThanOrEqualTo(before.offset()));
                cluster.startBroker(coordinator);
                awaitConsumed(consumed, consumed.size() + 300, errors);
                load.stop();
                load.verify(cluster.clientProps());
                Set<String> acked = new java.util.HashSet<>();
                load.acks.forEach(a -> acked.add("p" + a.partition() + "-" + a.seq()));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (!consumed.keySet().containsAll(acked) && System.nanoTime() < deadline && errors.isEmpty()) {
                    Thread.sleep(100);
                }
                assertThat(errors).isEmpty();
                assertThat(consumed.keySet()).as("every acknowledged record consumed at least once").containsAll(acked);
            } finally {
                running.set(false);
                for (Thread t : members) {
                    t.join(30_000);
                }
            }
            Map<TopicPartition, OffsetAndMetadata> last = committed(admin);
            var ends = admin.listOffsets(last.keySet().stream().collect(java.util.stream.Collectors.toMap(tp -> tp,
                    tp -> org.apache.kafka.clients.admin.OffsetSpec.latest()))).all().get(30, TimeUnit.SECONDS);
            last.forEach((tp, o) -> assertThat(o.offset()).as("final commit of %s", tp).isEqualTo(ends.get(tp).offset()));
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return admin.listConsumerGroupOffsets("watchers").partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    private static void consume(Properties p, Map<String, Integer> consumed, ConcurrentLinkedQueue<Throwable> errors,
                                AtomicBoolean running) {
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of("feed"));
            while (running.get()) {
                var records = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    consumed.merge(r.value(), 1, Integer::sum);
                }
                if (!records.isEmpty()) {
                    try {
                        c.commitSync(Duration.ofSeconds(10));
                    } catch (CommitFailedException | RebalanceInProgressException | RetriableException e) {
                        // The group is moving or rebalancing: the records come again (at least once) or the next commit covers them.
                    }
                }
            }
            try {
                c.commitSync(Duration.ofSeconds(10));
            } catch (RuntimeException ignored) {
                // the final commit is checked through the admin client
            }
        } catch (Throwable t) {
            errors.add(t);
        }
    }

    private static void awaitConsumed(Map<String, Integer> consumed, int atLeast, ConcurrentLinkedQueue<Throwable> errors)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (consumed.size() < atLeast && errors.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(errors).as("consumer errors").isEmpty();
        assertThat(consumed.size()).as("distinct records consumed").isGreaterThanOrEqualTo(atLeast);
    }

    @Test
    void librdkafkaProducesAcrossABrokerKillAndEveryLineIsThereOnce() throws Exception {
        NativeClients.requirePresent(KcatIT.kcatPresent(), "kcat (librdkafka)");
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("rd", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            int victim = ClusterIT.awaitLeaders(admin, "rd", l -> !l.containsValue(-1)).get(0);
            Path err = tmp.resolve("kcat.err");
            Process kcat = new ProcessBuilder("kcat", "-b", cluster.bootstrap(), "-P", "-t", "rd", "-p", "0",
                    "-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5")
                    .redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            int lines = 3000;
            try (OutputStream in = kcat.getOutputStream()) {
                for (int i = 0; i < lines; i++) {
                    in.write(("line-" + i + "\n").getBytes(StandardCharsets.UTF_8));
                    if (i % 50 == 0) {
                        in.flush();
                        Thread.sleep(20);
                    }
                    if (i == lines / 3) {
                        cluster.killBroker(victim);
                    }
                    if (i == 2 * lines / 3) {
                        cluster.startBroker(victim);
                    }
                }
            }
            assertThat(kcat.waitFor(120, TimeUnit.SECONDS)).as("kcat finished").isTrue();
            assertThat(kcat.exitValue()).as("kcat exit (stderr: %s)", Files.readString(err)).isZero();
            assertThat(Files.readString(err)).doesNotContain("Delivery failed");

            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cluster.clientProps(), new StringDeserializer(), new StringDeserializer())) {
                TopicPartition tp = new TopicPartition("rd", 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long end = c.endOffsets(List.of(tp)).get(tp);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (c.position(tp) < end && System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(300)).forEach(r -> values.add(r.value()));
                }
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < lines; i++) {
                expected.add("line-" + i);
            }
            assertThat(values).as("partition 0 read back: every line once, in order").containsExactlyElementsOf(expected);
        }
    }
}
