package dev.kaas.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/** What a scrape shows for counts made on the hot path, without a server. */
class BrokerMetricsTest {
    static class FixedSource implements BrokerMetrics.Source {
        Set<String> gone = Set.of();
        BrokerMetrics.GroupsStat groups = new BrokerMetrics.GroupsStat(Map.of("Stable", 2, "Empty", 1), 9, 4, 11);

        @Override
        public boolean topicExists(String topic) {
            return !gone.contains(topic);
        }

        @Override
        public Collection<BrokerMetrics.PartitionStat> partitions() {
            return List.of(new BrokerMetrics.PartitionStat("a", 0, 1234, 5, 17));
        }

        @Override
        public Map<String, Integer> connections() {
            return Map.of("PLAINTEXT", 3);
        }

        @Override
        public BrokerMetrics.GroupsStat groups() {
            return groups;
        }

        @Override
        public BrokerMetrics.ControllerLink controllerLink() {
            return new BrokerMetrics.ControllerLink(12, 3, 2);
        }
    }

    static String scrape(BrokerMetrics m) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        m.writePrometheus(out);
        // The OpenTelemetry exporter labels every series with the instrumentation scope; the names and the other labels are Apache's.
        return out.toString(StandardCharsets.UTF_8).replace("otel_scope_name=\"dev.kaas.broker\",", "")
                .replace(",otel_scope_name=\"dev.kaas.broker\"", "").replace("{otel_scope_name=\"dev.kaas.broker\"}", "");
    }

    @Test
    void withPartitionMetricsOffAScrapeCountsPartitionsWithoutReadingTheirSizes() throws Exception {
        java.util.concurrent.atomic.AtomicInteger walks = new java.util.concurrent.atomic.AtomicInteger();
        FixedSource source = new FixedSource() {
            @Override
            public Collection<BrokerMetrics.PartitionStat> partitions() {
                walks.incrementAndGet();
                return super.partitions();
            }

            @Override
            public int partitionCount() {
                return 7;
            }
        };
        try (BrokerMetrics m = new BrokerMetrics(source, false, 100)) {
            assertThat(scrape(m)).contains("kafka_server_replicamanager_partitioncount 7.0").contains("kafka_server_replicamanager_leadercount 7.0")
                    .doesNotContain("kafka_log_log_size");
            assertThat(walks).as("no segment sizes summed for series that are off").hasValue(0);
        }
    }

    @Test
    void recordFormatConversionsAreCountedPerTopicAndTimedUnderProduceAndFetchOnly() throws Exception {
        try (BrokerMetrics m = new BrokerMetrics(new FixedSource(), true, 100)) {
            m.requestDone(ApiKeys.PRODUCE, (short) 2, false, new long[] {3_000_000, 0, 3_000_000, 0, 0, 0}, 0, 200, 1_500_000, 4096);
            m.requestDone(ApiKeys.FETCH, (short) 3, false, new long[] {1_000_000, 0, 1_000_000, 0, 0, 0}, 0, 100, 700_000, 300);
            m.requestDone(ApiKeys.METADATA, (short) 12, false, new long[] {1_000_000, 0, 1_000_000, 0, 0, 0}, 0, 100, 0, 0);
            m.produceConverted("a", 3);
            m.fetchConverted("a", 2);
            m.requestDone(ApiKeys.PRODUCE, (short) 9, false, new long[] {1_000_000, 0, 1_000_000, 0, 0, 0}, 0, 200, 0, 0);

            assertThat(scrape(m))
                    .contains("kafka_server_brokertopicmetrics_producemessageconversions_total{topic=\"a\"} 3.0")
                    .contains("kafka_server_brokertopicmetrics_producemessageconversions_total 3.0")
                    .contains("kafka_server_brokertopicmetrics_fetchmessageconversions_total{topic=\"a\"} 2.0")
                    .contains("kafka_network_requestmetrics_messageconversionstimems_count{request=\"Produce\"} 2")
                    .contains("kafka_network_requestmetrics_messageconversionstimems_sum{request=\"Produce\"} 1.5")
                    .contains("kafka_network_requestmetrics_temporarymemorybytes_sum{request=\"Produce\"} 4096.0")
                    .contains("kafka_network_requestmetrics_messageconversionstimems_count{request=\"Fetch\"} 1")
                    .contains("kafka_network_requestmetrics_temporarymemorybytes_sum{request=\"Fetch\"} 300.0")
                    .doesNotContain("kafka_network_requestmetrics_messageconversionstimems_count{request=\"FetchConsumer\"}")
                    .doesNotContain("kafka_network_requestmetrics_messageconversionstimems_count{request=\"Metadata\"}");
        }
    }

    @Test
    void countsAppearPerTopicAndForAllTopicsUnderApachesNames() throws Exception {
        FixedSource source = new FixedSource();
        try (BrokerMetrics m = new BrokerMetrics(source, true, 100)) {
            m.produceRequest("a");
            m.appended("a", 300, 7);
            m.produceRequest("b");
            m.produceFailed("b");
            m.fetchRequest("a");
            m.bytesOut("a", 300);
            m.requestDone(ApiKeys.PRODUCE, (short) 9, false, new long[] {2_000_000, 100_000, 300_000, 1_500_000, 50_000, 50_000}, 0, 1000, 0, 0);
            m.requestDone(ApiKeys.FETCH, (short) 16, false, new long[] {1_000_000, 0, 1_000_000, 0, 0, 0}, 0, 100, 0, 0);
            m.groupCommit(3_000_000, 200_000, 5);
            m.groupCommit(400_000, 100_000, 1);
            m.takeover(40_000_000);

            String text = scrape(m);

            assertThat(text).contains("kafka_server_brokertopicmetrics_bytesin_total{topic=\"a\"} 300.0")
                    .contains("kafka_server_brokertopicmetrics_bytesin_total 300.0")
                    .contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"a\"} 7.0")
                    .contains("kafka_server_brokertopicmetrics_totalproducerequests_total 2.0")
                    .contains("kafka_server_brokertopicmetrics_failedproducerequests_total{topic=\"b\"} 1.0")
                    .contains("kafka_server_brokertopicmetrics_bytesout_total{topic=\"a\"} 300.0")
                    .contains("kafka_network_requestmetrics_requests_total{request=\"Produce\",version=\"9\"} 1.0")
                    .contains("kafka_network_requestmetrics_totaltimems_bucket{request=\"Produce\",le=\"2.0\"} 1")
                    .contains("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"} 1")
                    .contains("kafka_network_requestmetrics_requestqueuetimems_bucket{request=\"Produce\",le=\"0.5\"} 1")
                    .contains("kafka_network_requestmetrics_localtimems_sum{request=\"Produce\"} 0.3")
                    .contains("kafka_network_requestmetrics_remotetimems_bucket{request=\"Produce\",le=\"1.0\"} 0")
                    .contains("kafka_network_requestmetrics_remotetimems_bucket{request=\"Produce\",le=\"2.0\"} 1")
                    .contains("kafka_network_requestmetrics_responsequeuetimems_count{request=\"Produce\"} 1")
                    .contains("kafka_network_requestmetrics_responsesendtimems_count{request=\"Produce\"} 1")
                    .contains("kafka_network_requestmetrics_throttletimems_sum{request=\"Produce\"} 0.0")
                    .contains("kafka_network_requestmetrics_localtimems_count{request=\"FetchConsumer\"} 1")
                    .contains("kafka_network_requestmetrics_requests_total{request=\"Fetch\",version=\"16\"} 1.0")
                    .contains("kafka_network_requestmetrics_requests_total{request=\"FetchConsumer\",version=\"16\"} 1.0")
                    .doesNotContain("FetchFollower")
                    .contains("kafka_log_log_size{partition=\"0\",topic=\"a\"} 1234.0")
                    .contains("kafka_log_log_logstartoffset{partition=\"0\",topic=\"a\"} 5.0")
                    .contains("kafka_log_log_logendoffset{partition=\"0\",topic=\"a\"} 17.0")
                    .contains("kafka_server_replicamanager_partitioncount 1.0")
                    .contains("kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\",networkProcessor=\"0\"} 3.0")
                    .contains("service_name=\"kaas-broker\"")
                    .contains("kafka_coordinator_group_groupmetadatamanager_numgroups 3.0")
                    .contains("kafka_coordinator_group_groupmetadatamanager_numgroupsstable 2.0")
                    .contains("kafka_coordinator_group_groupmetadatamanager_numgroupsempty 1.0")
                    .contains("kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance 0.0")
                    .contains("kafka_coordinator_group_groupmetadatamanager_numoffsets 9.0")
                    .contains("kafka_server_group_coordinator_metrics_group_completed_rebalance_count 4.0")
                    .contains("kafka_server_group_coordinator_metrics_offset_commit_count 11.0")
                    .contains("kaas_log_fsync_time_ms_count 2")
                    .contains("kaas_log_fsync_time_ms_bucket{le=\"0.5\"} 1")
                    .contains("kaas_log_fsync_time_ms_bucket{le=\"5.0\"} 2")
                    .contains("kaas_log_fence_check_time_ms_count 2")
                    .contains("kaas_log_group_commit_appends_sum 6.0")
                    .contains("kaas_log_group_commit_appends_bucket{le=\"4.0\"} 1")
                    .contains("kaas_partition_takeover_time_ms_count 1")
                    .contains("kafka_network_requestmetrics_requestbytes_bucket{request=\"Produce\",le=\"256.0\"} 0")
                    .contains("kafka_network_requestmetrics_requestbytes_bucket{request=\"Produce\",le=\"1024.0\"} 1")
                    .contains("kafka_network_requestmetrics_requestbytes_sum{request=\"FetchConsumer\"} 100.0")
                    .contains("kaas_broker_assignment_version 12.0")
                    .contains("kaas_broker_controller_epoch 3.0")
                    .contains("kaas_broker_controller_stream_connects 2.0");

            // Groups that could not be read this time: their gauges are left out, not reported as zero
            source.groups = new BrokerMetrics.GroupsStat(null, 0, 4, 11);
            assertThat(scrape(m)).doesNotContain("kafka_coordinator_group_groupmetadatamanager_numgroups")
                    .contains("kafka_server_group_coordinator_metrics_group_completed_rebalance_count 4.0");
        }
    }

    @Test
    void pastMaxSeriesAMetricsOtherSeriesAreFoldedIntoOneOverflowSeriesThatKeepsTheirCounts() throws Exception {
        try (BrokerMetrics m = new BrokerMetrics(new FixedSource(), false, 3)) {
            for (int t = 0; t < 6; t++) {
                m.appended("t" + t, 10, 1);
            }

            List<String> bytesIn = scrape(m).lines().filter(l -> l.startsWith("kafka_server_brokertopicmetrics_bytesin_total")).toList();

            assertThat(bytesIn).as("kaas.metrics.max-series=3").hasSize(3)
                    .anyMatch(l -> l.contains("otel_metric_overflow=\"true\""));
            // Six topics' 60 bytes, once per topic and once in the all-topics total, wherever each series landed.
            assertThat(bytesIn.stream().mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum())
                    .isEqualTo(120.0);
        }
    }

    @Test
    void aDeletedTopicsMetersGoAndPartitionMetricsCanBeOff() throws Exception {
        FixedSource source = new FixedSource();
        try (BrokerMetrics m = new BrokerMetrics(source, false, 100)) {
            m.appended("b", 10, 1);
            m.retainTopics(Set.of("a"));
            source.gone = Set.of("b");
            m.appended("b", 5, 1);

            String text = scrape(m);

            assertThat(text).as("a late append to the deleted topic counts in the totals only")
                    .doesNotContain("topic=\"b\"").contains("kafka_server_brokertopicmetrics_bytesin_total 15.0")
                    .doesNotContain("kafka_log_log_");
        }
    }
}
