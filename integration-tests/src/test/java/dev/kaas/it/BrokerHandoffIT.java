package dev.kaas.it;

import static dev.kaas.it.ClusterIT.awaitLeaders;
import static dev.kaas.it.ClusterIT.ledBy;
import static dev.kaas.it.ClusterIT.spread;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partitions changing hands between live brokers under load: a join and a controlled shutdown
 * give the client no error and no duplicate, and a frozen broker is deposed so that nothing it
 * writes after waking up is acknowledged or served. No assertion here bounds how long anything
 * takes, so these run beside other classes; the timed takeovers are {@link ClusterIT}'s.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class BrokerHandoffIT {
    @TempDir
    Path tmp;

    @Test
    void controlledShutdownAndJoinUnderLoadGiveTheClientNoErrorAndNoDuplicate() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of(), 1, 2);
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("events", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(spread(awaitLeaders(admin, "events", l -> !l.containsValue(-1)))).containsEntry(1, 6L).containsEntry(2, 6L);
            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "events", 12, 600)) {
                ClusterITAcks.await(load, 500);

                // Join: broker 3 gets its fair share by handoffs, while the producer keeps going.
                cluster.startBroker(3);
                Map<Integer, Integer> joined = awaitLeaders(admin, "events", l -> ledBy(l, 3).size() == 4 && !l.containsValue(-1));
                assertThat(spread(joined).values()).containsOnly(4L);
                ClusterITAcks.await(load, load.acked() + 500);

                // Controlled shutdown: broker 1 hands everything off before it exits.
                cluster.stopBroker(1);
                Map<Integer, Integer> after = awaitLeaders(admin, "events", l -> ledBy(l, 1).isEmpty() && !l.containsValue(-1));
                assertThat(spread(after).values()).containsOnly(6L);
                ClusterITAcks.await(load, load.acked() + 500);
                assertThat(Files.readString(cluster.brokerLog(1))).as("broker 1 closed its partitions on SIGTERM")
                        .contains("controlled shutdown: closed");
                load.stop();
                load.verify(cluster.clientProps());
                System.out.printf("acknowledged %d records across a join and a controlled shutdown%n", load.acked());
            }
        }
    }

    @Test
    void aFrozenBrokerIsDeposedAndWhatItWritesAfterWakingUpIsNeverAcknowledgedNorServed() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(),
                Map.of("kaas.controller.broker-session-timeout", "3s"));
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("split", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            int frozen = awaitLeaders(admin, "split", l -> !l.containsValue(-1)).get(0);
            int frozenEpoch = leaderAndEpoch(cluster.kafkaPort(frozen), "split", 0)[1];

            Properties staleProps = cluster.clientProps();
            staleProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            staleProps.put(ProducerConfig.RETRIES_CONFIG, "0");
            staleProps.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "90000");
            staleProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
            // The fresh producer's first metadata request may go to the frozen broker: a short request
            // timeout lets it move on to a live one well within the wait below.
            Properties freshProps = cluster.clientProps();
            freshProps.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
            freshProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
            try (KafkaProducer<String, String> stale = new KafkaProducer<>(staleProps, new StringSerializer(), new StringSerializer());
                 KafkaProducer<String, String> fresh = new KafkaProducer<>(freshProps, new StringSerializer(), new StringSerializer())) {
                stale.send(new ProducerRecord<>("split", 0, null, "before-freeze")).get(30, TimeUnit.SECONDS);

                cluster.freezeBroker(frozen);
                List<Future<RecordMetadata>> pending = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    pending.add(stale.send(new ProducerRecord<>("split", 0, null, "deposed-" + i)));
                }
                awaitLeaders(admin, "split", l -> l.get(0) != frozen && l.get(0) != -1);
                List<RecordMetadata> fresh0 = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    fresh0.add(fresh.send(new ProducerRecord<>("split", 0, null, "new-" + i)).get(60, TimeUnit.SECONDS));
                }

                cluster.thawBroker(frozen);
                for (Future<RecordMetadata> f : pending) {
                    try {
                        RecordMetadata md = f.get(150, TimeUnit.SECONDS);
                        throw new AssertionError("the deposed broker acknowledged a produce at offset " + md.offset());
                    } catch (ExecutionException e) {
                        assertThat(e.getCause()).as("the deposed broker's answer").isInstanceOf(RetriableException.class);
                    }
                }
                // More from the fresh producer after the thaw: the new owner is still the one that serves.
                fresh.send(new ProducerRecord<>("split", 0, null, "new-after-thaw")).get(30, TimeUnit.SECONDS);
            }
            // The thawed broker catches up with the assignment (its own Metadata gives split-0 a newer
            // leader epoch) before the read-back, so the reading consumer cannot take its stale
            // metadata. The newer leader may be the thawed broker itself: when it registers again the
            // balancer may hand split-0 straight back to it, under yet another epoch, and its
            // recovery then cuts what it wrote after the fence.
            long caughtUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int[] seen = leaderAndEpoch(cluster.kafkaPort(frozen), "split", 0);
            while (System.nanoTime() < caughtUp && seen[1] <= frozenEpoch) {
                Thread.sleep(100);
                seen = leaderAndEpoch(cluster.kafkaPort(frozen), "split", 0);
            }
            assertThat(seen[1]).as("the thawed broker learned of a newer epoch than %d (leader now %d); its log ends:%n%s",
                    frozenEpoch, seen[0], KaasCluster.tail(cluster.brokerLog(frozen), 60)).isGreaterThan(frozenEpoch);

            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cluster.clientProps(), new StringDeserializer(), new StringDeserializer())) {
                TopicPartition tp = new TopicPartition("split", 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long end = c.endOffsets(List.of(tp)).get(tp);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (c.position(tp) < end && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                        values.add(r.value());
                    }
                }
            }
            assertThat(values).as("partition 0 read back").noneMatch(v -> v.startsWith("deposed-"));
            List<String> expected = new ArrayList<>(List.of("before-freeze"));
            for (int i = 0; i < 20; i++) {
                expected.add("new-" + i);
            }
            expected.add("new-after-thaw");
            assertThat(values).containsExactlyElementsOf(expected);
        }
    }

    /** Leader id and leader epoch of a partition in the Metadata one broker answers. */
    private static int[] leaderAndEpoch(int port, String topic, int partition) throws Exception {
        try (RawClient c = new RawClient(port)) {
            var md = new org.apache.kafka.common.message.MetadataRequestData().setAllowAutoTopicCreation(false);
            md.topics().add(new org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic().setName(topic));
            var p = ((org.apache.kafka.common.requests.MetadataResponse) c.send(
                    org.apache.kafka.common.protocol.ApiKeys.METADATA, (short) 12, md)).data().topics().find(topic)
                    .partitions().get(partition);
            return new int[] {p.leaderId(), p.leaderEpoch()};
        }
    }
}
