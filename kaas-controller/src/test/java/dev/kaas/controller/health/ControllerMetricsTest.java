package dev.kaas.controller.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.controller.cluster.BrokerSession;
import dev.kaas.controller.cluster.ClusterStats;
import dev.kaas.proto.CommittedOffsetStat;
import dev.kaas.proto.GroupStat;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ControllerMetricsTest {
    static final BrokerSession OPEN = new BrokerSession() {
        public void sendAssignment(long version, long controllerEpoch, String json) {
        }

        public void nudge(int fromBroker) {
        }

        public void close(String reason) {
        }

        public void refuse(String reason) {
        }

        public void refuseForeign(String reason) {
        }
    };

    static String scrape(ControllerMetrics m) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        m.writePrometheus(out);
        return out.toString(StandardCharsets.UTF_8).replace("otel_scope_name=\"dev.kaas.controller\",", "")
                .replace(",otel_scope_name=\"dev.kaas.controller\"", "").replace("{otel_scope_name=\"dev.kaas.controller\"}", "");
    }

    @Test
    void lagOffsetsAndTheControllersStateUnderTheKafkaExportersNames() throws Exception {
        ClusterStats stats = new ClusterStats();
        stats.report(1, OPEN, Stats.newBuilder()
                .addPartitions(PartitionStat.newBuilder().setTopic("t").setPartition(0).setHighWatermark(100).setLogStartOffset(5))
                .addPartitions(PartitionStat.newBuilder().setTopic("t").setPartition(1).setHighWatermark(20))
                .addGroups(GroupStat.newBuilder().setGroupId("g").setState("Stable").setMembers(2)
                        .addOffsets(CommittedOffsetStat.newBuilder().setTopic("t").setPartition(0).setOffset(60))
                        .addOffsets(CommittedOffsetStat.newBuilder().setTopic("t").setPartition(1).setOffset(20)))
                .build());
        AtomicBoolean leader = new AtomicBoolean(true);
        try (ControllerMetrics m = new ControllerMetrics(stats, leader::get, () -> new ControllerMetrics.Reading(7, 42, 3, 5), 100)) {
            String text = scrape(m);

            assertThat(text).contains("kafka_consumergroup_lag{consumergroup=\"g\",partition=\"0\",topic=\"t\"} 40.0")
                    .contains("kafka_consumergroup_lag{consumergroup=\"g\",partition=\"1\",topic=\"t\"} 0.0")
                    .contains("kafka_consumergroup_lag_sum{consumergroup=\"g\"} 40.0")
                    .contains("kafka_consumergroup_current_offset{consumergroup=\"g\",partition=\"0\",topic=\"t\"} 60.0")
                    .contains("kafka_consumergroup_members{consumergroup=\"g\"} 2.0")
                    .contains("kafka_topic_partition_current_offset{partition=\"0\",topic=\"t\"} 100.0")
                    .contains("kafka_topic_partition_oldest_offset{partition=\"0\",topic=\"t\"} 5.0")
                    .contains("kaas_controller_leader 1.0")
                    .contains("kaas_controller_epoch 7.0")
                    .contains("kaas_controller_assignment_version 42.0")
                    .contains("kafka_brokers 3.0")
                    .contains("kaas_controller_broker_registrations 5.0")
                    .contains("kaas_controller_stats_truncated 0.0")
                    .contains("service_name=\"kaas-controller\"");

            // A standby says only that it does not lead
            leader.set(false);
            assertThat(scrape(m)).contains("kaas_controller_leader 0.0").doesNotContain("kaas_controller_epoch")
                    .doesNotContain("kafka_consumergroup_lag");
        }
    }

    @Test
    void withAnEndpointTheSameMetricsArePushedByOtlpOverHttp() throws Exception {
        ClusterStats stats = new ClusterStats();
        stats.report(1, OPEN, Stats.newBuilder()
                .addPartitions(PartitionStat.newBuilder().setTopic("t").setPartition(0).setHighWatermark(100))
                .addGroups(GroupStat.newBuilder().setGroupId("pushed-group").setState("Stable")
                        .addOffsets(CommittedOffsetStat.newBuilder().setTopic("t").setPartition(0).setOffset(60)))
                .build());
        java.util.concurrent.BlockingQueue<byte[]> bodies = new java.util.concurrent.LinkedBlockingQueue<>();
        com.sun.net.httpserver.HttpServer receiver = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/metrics", exchange -> {
            try {
                if ("application/x-protobuf".equals(exchange.getRequestHeaders().getFirst("Content-Type"))) {
                    bodies.add(exchange.getRequestBody().readAllBytes());
                }
                exchange.sendResponseHeaders(200, 0);
            } finally {
                exchange.close();
            }
        });
        receiver.start();
        String endpoint = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/v1/metrics";
        try (ControllerMetrics m = new ControllerMetrics(stats, () -> true, () -> new ControllerMetrics.Reading(7, 42, 1, 1), 100,
                "controller-a", new ControllerMetrics.Otlp(endpoint, java.time.Duration.ofMillis(100)))) {
            byte[] body = bodies.poll(10, java.util.concurrent.TimeUnit.SECONDS);

            // Protobuf keeps strings as UTF-8 bytes: the metric, its group and the resource are in the request
            assertThat(body).as("a push within 10 s").isNotNull();
            String text = new String(body, StandardCharsets.ISO_8859_1);
            assertThat(text).contains("kafka.consumergroup.lag").contains("pushed-group").contains("kaas-controller").contains("controller-a");
        } finally {
            receiver.stop(0);
        }
    }
}
