package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The controller is needed for changes only: brokers serve without it and come back to it at once. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ControllerRestartIT {
    @TempDir
    Path tmp;

    @Test
    void brokersServeWhileTheControllerIsDownAndRegisterWithinASecondOfItsReturn() throws Exception {
        try (KaasCluster cluster = KaasCluster.start(tmp.resolve("data"));
             Admin admin = Admin.create(cluster.clientProps());
             KafkaProducer<String, String> producer = producer(cluster)) {
            admin.createTopics(List.of(new NewTopic("steady", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            // The broker's start-up warm-up ran, and left no scratch directory behind.
            assertThat(Files.readString(cluster.brokerLog())).contains("partition closed partition=__warmup-0");
            assertThat(cluster.dataDir()).isDirectoryNotContaining("glob:**/__warmup*");
            List<String> acked = new ArrayList<>();
            producer.send(new ProducerRecord<>("steady", "before")).get(30, TimeUnit.SECONDS);
            acked.add("before");
            List<MetricsIT.Sample> up = MetricsIT.scrape(cluster.brokerHttpPort());
            double connects = MetricsIT.value(up, "kaas_broker_controller_stream_connects");
            double epoch = MetricsIT.value(up, "kaas_broker_controller_epoch");
            assertThat(connects).isGreaterThanOrEqualTo(1);
            assertThat(epoch).isGreaterThanOrEqualTo(0);

            cluster.stopController();
            // Keep producing for longer than the gRPC channel's own reconnect back-off grows in
            // (1 s, 1.6 s, 2.6 s, 4.1 s, ...): the broker must retry on its own schedule, not on that one.
            long downUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(9);
            for (int i = 0; System.nanoTime() < downUntil; i++) {
                producer.send(new ProducerRecord<>("steady", "down-" + i)).get(30, TimeUnit.SECONDS);
                acked.add("down-" + i);
            }
            cluster.startController();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> Files.readString(cluster.controllerLog()).contains("broker registered broker="));
            // Measured on the controller's own clock, from the moment it serves (Quarkus' "started
            // in" line, after the gRPC server is up) to the registration, so neither JVM start-up
            // nor this test's polling on a loaded machine counts. The broker retries every second
            // at most, so this is about one second; with the channel's own back-off in charge (the
            // bug this guards) the next attempt came 4-6 s after the controller was up.
            List<String> log = Files.readAllLines(cluster.controllerLog());
            Duration toRegister = Duration.between(timestamp(log, " started in "), timestamp(log, "broker registered broker="));
            if (toRegister.compareTo(Duration.ofHours(-12)) < 0) {
                toRegister = toRegister.plusDays(1);  // the two lines straddle midnight
            }
            assertThat(toRegister).isLessThan(Duration.ofMillis(2500));
            // What an operator charts: one more stream connect, and the new controller's epoch (a new lease holder).
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                List<MetricsIT.Sample> back = MetricsIT.scrape(cluster.brokerHttpPort());
                assertThat(MetricsIT.value(back, "kaas_broker_controller_stream_connects")).isGreaterThan(connects);
                assertThat(MetricsIT.value(back, "kaas_broker_controller_epoch")).isGreaterThan(epoch);
            });
            admin.createTopics(List.of(new NewTopic("after", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(producer.send(new ProducerRecord<>("after", "x")).get(30, TimeUnit.SECONDS).offset()).isZero();
            List<ConsumerRecord<String, String>> read = DurabilityIT.readAll(cluster, "steady", 1, acked.size(), Duration.ofSeconds(1));
            assertThat(read).extracting(ConsumerRecord::value).containsExactlyElementsOf(acked);
        }
    }

    /** The time of the first controller log line containing {@code marker} (format HH:mm:ss.SSS first). */
    private static LocalTime timestamp(List<String> log, String marker) {
        String line = log.stream().filter(l -> l.contains(marker)).findFirst()
                .orElseThrow(() -> new AssertionError("no controller log line contains '" + marker + "'"));
        return LocalTime.parse(line.substring(0, 12));
    }

    private static KafkaProducer<String, String> producer(KaasCluster cluster) {
        Properties p = cluster.clientProps();
        p.putAll(Map.of("acks", "all", "linger.ms", "0"));
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }
}
