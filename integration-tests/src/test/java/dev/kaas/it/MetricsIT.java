package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Prometheus endpoint after a known workload reports exactly that workload, under the names
 * Apache's MBeans take through the Strimzi JMX exporter rules (src/docs/operations.md); the OTLP
 * export pushes the same; every request is traced (sample ratio 1) and its spans reach the same receiver.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MetricsIT {
    /** An OTLP/HTTP receiver on loopback, started before the broker is, which is told to push to it every second. */
    static final OtlpReceiver OTLP = OtlpReceiver.start();

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.metrics.partition-metrics", "true",
            "kaas.metrics.stats-interval", "300ms", "kaas.metrics.otlp-endpoint", OTLP.endpoint(), "kaas.metrics.otlp-interval", "1s",
            "quarkus.log.console.json.enabled", "true", "kaas.tracing.sample-ratio", "1.0", "kaas.tracing.otlp-endpoint", OTLP.tracesEndpoint()),
            Map.of("quarkus.log.console.json.enabled", "true", "kaas.controller.id", "controller-metrics-it"));

    @AfterAll
    static void stopReceiver() {
        OTLP.close();
    }

    /** The OTLP requests received, decoded; answers each with an empty (successful) response. */
    static final class OtlpReceiver implements AutoCloseable {
        final HttpServer server;
        final java.util.concurrent.ConcurrentLinkedDeque<ExportMetricsServiceRequest> received = new java.util.concurrent.ConcurrentLinkedDeque<>();
        /** Every span received, with its resource's service.instance.id (bounded: the newest 20,000). */
        final java.util.concurrent.ConcurrentLinkedDeque<Map.Entry<String, Span>> spans = new java.util.concurrent.ConcurrentLinkedDeque<>();

        private OtlpReceiver(HttpServer server) {
            this.server = server;
        }

        static OtlpReceiver start() {
            try {
                HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
                OtlpReceiver r = new OtlpReceiver(server);
                receive(server, "/v1/metrics", body -> {
                    r.received.addLast(ExportMetricsServiceRequest.parseFrom(body));
                    while (r.received.size() > 20) {
                        r.received.pollFirst();
                    }
                });
                receive(server, "/v1/traces", body -> {
                    for (ResourceSpans rs : ExportTraceServiceRequest.parseFrom(body).getResourceSpansList()) {
                        String instance = rs.getResource().getAttributesList().stream()
                                .filter(kv -> kv.getKey().equals("service.instance.id")).map(kv -> kv.getValue().getStringValue())
                                .findFirst().orElse("");
                        rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(sp -> r.spans.addLast(Map.entry(instance, sp))));
                    }
                    while (r.spans.size() > 20_000) {
                        r.spans.pollFirst();
                    }
                });
                server.start();
                return r;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        interface Body {
            void take(byte[] body) throws IOException;
        }

        /** OTLP/HTTP at {@code path}: a protobuf POST is taken and answered with an empty success, anything else 400. */
        private static void receive(HttpServer server, String path, Body take) {
            server.createContext(path, exchange -> {
                try {
                    byte[] body = exchange.getRequestBody().readAllBytes();
                    if ("POST".equals(exchange.getRequestMethod())
                            && "application/x-protobuf".equals(exchange.getRequestHeaders().getFirst("Content-Type"))) {
                        take.take(body);
                        exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
                        exchange.sendResponseHeaders(200, 0);
                    } else {
                        exchange.sendResponseHeaders(400, -1);
                    }
                } finally {
                    exchange.close();
                }
            });
        }

        String endpoint() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/metrics";
        }

        String tracesEndpoint() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/traces";
        }

        /**
         * The value of the named metric's data point with exactly these attributes in the latest
         * export that has it (NaN: none), and that export's service.name.
         */
        double latest(String service, String name, String... attributes) {
            Map<String, String> want = new HashMap<>();
            for (int i = 0; i < attributes.length; i += 2) {
                want.put(attributes[i], attributes[i + 1]);
            }
            var it = received.descendingIterator();
            while (it.hasNext()) {
                for (ResourceMetrics rm : it.next().getResourceMetricsList()) {
                    boolean ours = rm.getResource().getAttributesList().stream()
                            .anyMatch(kv -> kv.getKey().equals("service.name") && kv.getValue().getStringValue().equals(service));
                    if (!ours) {
                        continue;
                    }
                    for (ScopeMetrics sm : rm.getScopeMetricsList()) {
                        for (Metric m : sm.getMetricsList()) {
                            if (!m.getName().equals(name)) {
                                continue;
                            }
                            List<NumberDataPoint> points = m.hasSum() ? m.getSum().getDataPointsList() : m.getGauge().getDataPointsList();
                            for (NumberDataPoint dp : points) {
                                Map<String, String> attrs = new HashMap<>();
                                dp.getAttributesList().forEach(kv -> attrs.put(kv.getKey(), kv.getValue().getStringValue()));
                                if (attrs.equals(want)) {
                                    return dp.getValueCase() == NumberDataPoint.ValueCase.AS_INT ? dp.getAsInt() : dp.getAsDouble();
                                }
                            }
                        }
                    }
                }
            }
            return Double.NaN;
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    static final String TOPIC = "metered";
    static final int RECORDS = 50;
    static final int FETCHES = 3;

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    /** One sample: a metric name, its labels, its value. */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? ([^ ]+)(?: \\d+)?$");
    static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    static List<Sample> scrape() throws Exception {
        return scrape(cluster.brokerHttpPort());
    }

    static List<Sample> scrape(int httpPort) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        return r.body().lines().filter(l -> !l.isBlank() && !l.startsWith("#")).map(l -> {
            Matcher m = LINE.matcher(l);
            assertThat(m.matches()).as(l).isTrue();
            Map<String, String> labels = new TreeMap<>();
            if (m.group(2) != null) {
                Matcher lm = LABEL.matcher(m.group(2));
                while (lm.find()) {
                    labels.put(lm.group(1), lm.group(2));
                }
                // The exporter's instrumentation-scope label on every series; the others are Apache's.
                labels.remove("otel_scope_name");
            }
            return new Sample(m.group(1), labels, Double.parseDouble(m.group(3)));
        }).toList();
    }

    /** The value of the one sample with exactly these labels (missing: NaN). */
    static double value(List<Sample> samples, String name, String... labels) {
        Map<String, String> want = new HashMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            want.put(labels[i], labels[i + 1]);
        }
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().equals(want)).mapToDouble(Sample::value).findFirst()
                .orElse(Double.NaN);
    }

    /** The value's growth between two scrapes (a series not there before counts from 0). */
    static double delta(List<Sample> before, List<Sample> after, String name, String... labels) {
        double was = value(before, name, labels);
        return value(after, name, labels) - (Double.isNaN(was) ? 0 : was);
    }

    static double sum(List<Sample> samples, String name, String label, String labelValue) {
        return samples.stream().filter(s -> s.name().equals(name) && labelValue.equals(s.labels().get(label))).mapToDouble(Sample::value).sum();
    }

    @Test
    void aKnownWorkloadIsCountedExactlyUnderApachesNames() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1)
                    .configs(Map.of("message.timestamp.before.max.ms", "3600000")))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        List<Sample> before;
        try (var producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            // A first record once the partition is open (a produce sent before may be refused and sent again): counting starts after it.
            producer.send(new ProducerRecord<>(TOPIC, "warm-up".getBytes(), new byte[100])).get(30, TimeUnit.SECONDS);
            before = scrape();
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, ("k" + i).getBytes(), new byte[100])).get(30, TimeUnit.SECONDS);
            }
            // Two hours old, past message.timestamp.before.max.ms: the one failed produce.
            long old = System.currentTimeMillis() - TimeUnit.HOURS.toMillis(2);
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(TOPIC, 0, old, new byte[1], new byte[1])).get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidTimestampException.class);
        }
        long fetchedBytes = 0;
        try (RawClient raw = new RawClient(cluster.kafkaPort())) {
            for (int i = 0; i < FETCHES; i++) {
                FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(10 << 20);
                fetch.topics().add(new FetchRequestData.FetchTopic().setTopic(TOPIC).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(10 << 20))));
                FetchResponse r = (FetchResponse) raw.send(ApiKeys.FETCH, (short) 12, fetch);
                var pd = r.data().responses().get(0).partitions().get(0);
                assertThat(pd.errorCode()).isZero();
                fetchedBytes += pd.records().sizeInBytes();
            }

            List<Sample> s = scrape();

            String t = "topic";
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_messagesin_total", t, TOPIC)).isEqualTo(RECORDS);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_totalproducerequests_total", t, TOPIC)).isEqualTo(RECORDS + 1);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_failedproducerequests_total", t, TOPIC)).isEqualTo(1);
            assertThat(value(s, "kafka_server_brokertopicmetrics_failedproducerequests_total")).as("all topics").isEqualTo(1);
            double size = value(s, "kafka_log_log_size", t, TOPIC, "partition", "0");
            assertThat(size).as("the log holds exactly the appended batches").isGreaterThan(RECORDS * 100)
                    .isEqualTo(value(s, "kafka_server_brokertopicmetrics_bytesin_total", t, TOPIC));
            assertThat(value(s, "kafka_server_brokertopicmetrics_bytesin_total")).isEqualTo(size);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_totalfetchrequests_total", t, TOPIC)).isEqualTo(FETCHES);
            assertThat(fetchedBytes).isEqualTo((long) size * FETCHES);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_bytesout_total", t, TOPIC)).isEqualTo(fetchedBytes);
            assertThat(value(s, "kafka_log_log_logendoffset", t, TOPIC, "partition", "0")).isEqualTo(RECORDS + 1);
            assertThat(value(s, "kafka_log_log_logstartoffset", t, TOPIC, "partition", "0")).isZero();
            assertThat(value(s, "kafka_server_replicamanager_partitioncount")).isEqualTo(1);
            assertThat(value(s, "kafka_server_replicamanager_leadercount")).isEqualTo(1);
            assertThat(delta(before, s, "kafka_network_requestmetrics_requests_total", "request", "Fetch", "version", "12")).isEqualTo(FETCHES);
            assertThat(delta(before, s, "kafka_network_requestmetrics_requests_total", "request", "FetchConsumer", "version", "12"))
                    .isEqualTo(FETCHES);
            assertThat(sum(s, "kafka_network_requestmetrics_requests_total", "request", "Produce")
                    - sum(before, "kafka_network_requestmetrics_requests_total", "request", "Produce")).isEqualTo(RECORDS + 1);
            assertThat(delta(before, s, "kafka_network_requestmetrics_totaltimems_count", "request", "Fetch")).isEqualTo(FETCHES);
            // Apache's parts of a request's time, each a histogram, adding up to its total
            String[] parts = {"requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems", "responsesendtimems"};
            double partsMs = 0;
            for (String part : parts) {
                String name = "kafka_network_requestmetrics_" + part;
                assertThat(delta(before, s, name + "_count", "request", "Produce")).as(part).isEqualTo(RECORDS + 1);
                partsMs += delta(before, s, name + "_sum", "request", "Produce");
            }
            assertThat(partsMs).isCloseTo(delta(before, s, "kafka_network_requestmetrics_totaltimems_sum", "request", "Produce"),
                    org.assertj.core.data.Offset.offset(0.01));
            assertThat(delta(before, s, "kafka_network_requestmetrics_throttletimems_sum", "request", "Produce")).isZero();
            assertThat(delta(before, s, "kafka_network_requestmetrics_requestbytes_count", "request", "Produce")).isEqualTo(RECORDS + 1);
            assertThat(delta(before, s, "kafka_network_requestmetrics_requestbytes_sum", "request", "Produce"))
                    .as("each carries a 100-byte value").isGreaterThan((RECORDS + 1) * 100.0);
            assertThat(value(s, "kafka_server_socket_server_metrics_connection_count", "listener", "PLAINTEXT", "networkProcessor", "0"))
                    .as("this raw client at least").isGreaterThanOrEqualTo(1);

            // kaas's own: every acks=all append acknowledged by a group commit, one at a time as the producer waited for each
            assertThat(delta(before, s, "kaas_log_group_commit_appends_sum")).isEqualTo(RECORDS);
            assertThat(delta(before, s, "kaas_log_fsync_time_ms_count")).isBetween(1.0, (double) RECORDS);
            assertThat(delta(before, s, "kaas_log_fence_check_time_ms_count")).isEqualTo(delta(before, s, "kaas_log_fsync_time_ms_count"));
            assertThat(value(s, "kaas_partition_takeover_time_ms_count")).as("this topic's partition, opened").isGreaterThanOrEqualTo(1);
            assertThat(value(s, "kaas_broker_assignment_version")).isGreaterThan(0);
            assertThat(value(s, "kaas_broker_controller_stream_connects")).isGreaterThanOrEqualTo(1);

            // The OTLP push carries the same values, under the OpenTelemetry names (bounded: it pushes every second)
            String[][] same = {{"kafka.server.brokertopicmetrics.messagesin", "kafka_server_brokertopicmetrics_messagesin_total"},
                    {"kafka.server.brokertopicmetrics.bytesin", "kafka_server_brokertopicmetrics_bytesin_total"},
                    {"kafka.server.brokertopicmetrics.failedproducerequests", "kafka_server_brokertopicmetrics_failedproducerequests_total"},
                    {"kafka.server.brokertopicmetrics.totalfetchrequests", "kafka_server_brokertopicmetrics_totalfetchrequests_total"},
                    {"kafka.server.brokertopicmetrics.bytesout", "kafka_server_brokertopicmetrics_bytesout_total"},
                    {"kafka.log.log.logendoffset", "kafka_log_log_logendoffset"}};
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Map<String, Double> pushed = new TreeMap<>();
            Map<String, Double> scraped = new TreeMap<>();
            do {
                Thread.sleep(200);
                for (String[] pair : same) {
                    String[] labels = pair[0].startsWith("kafka.log") ? new String[] {t, TOPIC, "partition", "0"} : new String[] {t, TOPIC};
                    pushed.put(pair[0], OTLP.latest("kaas-broker", pair[0], labels));
                    scraped.put(pair[0], value(s, pair[1], labels));
                }
            } while (!pushed.equals(scraped) && System.nanoTime() < until);
            assertThat(pushed).isEqualTo(scraped);
            assertThat(scraped.get("kafka.server.brokertopicmetrics.messagesin")).isEqualTo(RECORDS + 1.0);
        }
    }

    /**
     * Apache's conversion metrics: an old producer's v1 messages up-converted before the append, and
     * an old consumer's Fetch v3 down-converted, each counted by record, with their time and the
     * bytes the converted copies took; a current client's requests convert nothing.
     */
    @Test
    void recordFormatConversionsAreCountedAsApacheCountsThem() throws Exception {
        String topic = "legacy-formats";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (RawClient raw = new RawClient(cluster.kafkaPort())) {
            org.apache.kafka.common.record.MemoryRecords v1 = org.apache.kafka.common.record.MemoryRecords.withRecords(
                    org.apache.kafka.common.record.RecordBatch.MAGIC_VALUE_V1, 0L, org.apache.kafka.common.record.CompressionType.NONE,
                    org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                    new org.apache.kafka.common.record.SimpleRecord(System.currentTimeMillis(), "a".getBytes(), "1".getBytes()),
                    new org.apache.kafka.common.record.SimpleRecord(System.currentTimeMillis(), "b".getBytes(), "2".getBytes()),
                    new org.apache.kafka.common.record.SimpleRecord(System.currentTimeMillis(), "c".getBytes(), "3".getBytes()));
            var produce = new org.apache.kafka.common.message.ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
            produce.topicData().add(new org.apache.kafka.common.message.ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(
                    List.of(new org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(v1))));
            List<Sample> before = scrape();
            int waitedOnce = 0;
            org.apache.kafka.common.protocol.Errors produced = org.apache.kafka.common.protocol.Errors.NONE;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            do {
                // The partition may not be open yet on the first try (NOT_LEADER_OR_FOLLOWER): only a success counts below.
                var r = (org.apache.kafka.common.requests.ProduceResponse) raw.send(ApiKeys.PRODUCE, (short) 2, produce);
                produced = org.apache.kafka.common.protocol.Errors.forCode(r.data().responses().find(topic).partitionResponses().get(0).errorCode());
                if (produced != org.apache.kafka.common.protocol.Errors.NONE) {
                    Thread.sleep(100);
                    before = scrape();
                }
            } while (produced != org.apache.kafka.common.protocol.Errors.NONE && System.nanoTime() < deadline);
            assertThat(produced).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
            // A v3 fetch, a v3 fetch that waits for more than there is (collected on each try, counted once, as sent),
            // and a v12 fetch that reads the stored batches as they are.
            for (short version : new short[] {3, 3, 12}) {
                boolean waits = version == 3 && waitedOnce++ == 1;
                FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(waits ? 500 : 0).setMinBytes(waits ? 1 << 20 : 0)
                        .setMaxBytes(1 << 20);
                fetch.topics().add(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
                FetchResponse r = (FetchResponse) raw.send(ApiKeys.FETCH, version, fetch);
                assertThat(r.data().responses().get(0).partitions().get(0).errorCode()).isZero();
            }
            List<Sample> s = scrape();
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_producemessageconversions_total", "topic", topic)).isEqualTo(3);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_fetchmessageconversions_total", "topic", topic))
                    .as("three records for each v3 fetch, once each however often it was collected").isEqualTo(6);
            assertThat(delta(before, s, "kafka_server_brokertopicmetrics_producemessageconversions_total")).as("all topics").isEqualTo(3);
            assertThat(delta(before, s, "kafka_network_requestmetrics_messageconversionstimems_count", "request", "Produce")).isEqualTo(1);
            assertThat(delta(before, s, "kafka_network_requestmetrics_temporarymemorybytes_sum", "request", "Produce")).isPositive();
            assertThat(delta(before, s, "kafka_network_requestmetrics_messageconversionstimems_count", "request", "Fetch"))
                    .as("recorded for every Fetch, 0 when nothing was converted").isEqualTo(3);
            double fetchMemory = delta(before, s, "kafka_network_requestmetrics_temporarymemorybytes_sum", "request", "Fetch");
            assertThat(fetchMemory).as("the down-converted copy of three v1 messages").isPositive().isLessThan(1000);
            assertThat(value(s, "kafka_network_requestmetrics_messageconversionstimems_count", "request", "FetchConsumer"))
                    .as("Apache keeps it under request=Produce and request=Fetch only").isNaN();
        }
    }

    /**
     * A group's lag, as the controller serves it from the brokers' reports, is the partitions' end
     * offsets minus the group's committed offsets, as the Admin API reads both; the coordinator
     * counts the rebalance and the commits.
     */
    @Test
    void consumerLagIsTheEndOffsetMinusTheCommittedOffset() throws Exception {
        String topic = "lagged";
        String group = "lagging";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (var producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[10])).get(30, TimeUnit.SECONDS);
            }
            for (int i = 0; i < 4; i++) {
                producer.send(new ProducerRecord<>(topic, 1, null, new byte[10])).get(30, TimeUnit.SECONDS);
            }
        }
        List<Sample> before = scrape();
        Properties c = cluster.clientProps();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (var consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (consumer.assignment().size() < 2) {
                assertThat(System.nanoTime()).as("the group's first rebalance").isLessThan(deadline);
                consumer.poll(Duration.ofMillis(200));
            }
            consumer.commitSync(Map.of(p0, new OffsetAndMetadata(3), p1, new OffsetAndMetadata(4)), Duration.ofSeconds(30));

            Map<TopicPartition, Long> expected = new HashMap<>();
            try (Admin admin = Admin.create(cluster.clientProps())) {
                var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                var ends = admin.listOffsets(Map.of(p0, OffsetSpec.latest(), p1, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS);
                for (TopicPartition tp : List.of(p0, p1)) {
                    expected.put(tp, ends.get(tp).offset() - committed.get(tp).offset());
                }
            }
            assertThat(expected).containsEntry(p0, 7L).containsEntry(p1, 0L);

            // The coordinator's own metrics, on the broker: one completed rebalance, one commit
            List<Sample> s = scrape();
            assertThat(delta(before, s, "kafka_server_group_coordinator_metrics_group_completed_rebalance_count")).isEqualTo(1);
            assertThat(delta(before, s, "kafka_server_group_coordinator_metrics_offset_commit_count")).as("one commit of two offsets").isEqualTo(1);
            assertThat(value(s, "kafka_coordinator_group_groupmetadatamanager_numgroupsstable")).isGreaterThanOrEqualTo(1);
            assertThat(value(s, "kafka_coordinator_group_groupmetadatamanager_numoffsets")).isGreaterThanOrEqualTo(2);

            // The controller's, once a report has carried the commit up (bounded: the test reports every 300 ms)
            List<Sample> ctl = List.of();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < until) {
                ctl = scrape(cluster.controllerHttpPort());
                if (value(ctl, "kafka_consumergroup_lag", "consumergroup", group, "topic", topic, "partition", "0") == expected.get(p0)) {
                    break;
                }
                Thread.sleep(200);
            }
            for (TopicPartition tp : List.of(p0, p1)) {
                String[] labels = {"consumergroup", group, "topic", topic, "partition", Integer.toString(tp.partition())};
                assertThat(value(ctl, "kafka_consumergroup_lag", labels)).as("lag of " + tp).isEqualTo(expected.get(tp).doubleValue());
            }
            assertThat(value(ctl, "kafka_consumergroup_current_offset", "consumergroup", group, "topic", topic, "partition", "0")).isEqualTo(3);
            assertThat(value(ctl, "kafka_consumergroup_lag_sum", "consumergroup", group)).isEqualTo(7);
            assertThat(value(ctl, "kafka_consumergroup_members", "consumergroup", group)).isEqualTo(1);
            assertThat(value(ctl, "kafka_topic_partition_current_offset", "topic", topic, "partition", "0")).isEqualTo(10);
            assertThat(value(ctl, "kaas_controller_leader")).isEqualTo(1);
            assertThat(value(ctl, "kafka_brokers")).isEqualTo(1);
            assertThat(value(ctl, "kaas_controller_assignment_version")).isGreaterThan(0);

            // Every series the sample Grafana dashboard charts is one the broker or the controller serves
            String dashboard = java.nio.file.Files.readString(java.nio.file.Path.of("..", "k8s", "monitoring", "grafana-dashboard.json"));
            java.util.Set<String> served = new java.util.HashSet<>();
            s.forEach(x -> served.add(x.name()));
            ctl.forEach(x -> served.add(x.name()));
            Matcher names = Pattern.compile("\\b((?:kafka|kaas)_[a-z_]+)").matcher(dashboard);
            java.util.Set<String> charted = new java.util.TreeSet<>();
            while (names.find()) {
                charted.add(names.group(1));
            }
            assertThat(charted).hasSizeGreaterThan(15);
            assertThat(served).containsAll(charted);
        }
    }

    /**
     * With the JSON switch on, every broker and controller log line is a JSON object naming its
     * process and, once it has one, the controller epoch.
     */
    @Test
    void jsonLogsNameTheBrokerTheControllerAndTheControllerEpoch() throws Exception {
        assertThat(jsonLinesNaming(cluster.brokerLog(), "broker.id", "1"))
                .as("a line after the first assignment carries the controller epoch").isTrue();
        assertThat(jsonLinesNaming(cluster.controllerLog(), "controller.id", "controller-metrics-it"))
                .as("a line written while it leads carries its lease epoch").isTrue();
    }

    /** Checks every line of {@code log} is a JSON object whose MDC has {@code key} = {@code value}; whether one names an epoch. */
    static boolean jsonLinesNaming(java.nio.file.Path log, String key, String value) throws Exception {
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> lines = java.nio.file.Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList();
        assertThat(lines).isNotEmpty();
        boolean epoch = false;
        for (String line : lines) {
            var node = mapper.readTree(line);
            assertThat(node.path("message").isTextual()).as(line).isTrue();
            assertThat(node.path("mdc").path(key).asText()).as(line).isEqualTo(value);
            epoch |= node.path("mdc").path("controller.epoch").asText().matches("\\d+");
        }
        return epoch;
    }

    /** A span's attributes as strings (ints and booleans in their decimal and true/false forms). */
    static Map<String, String> attributes(Span span) {
        Map<String, String> out = new HashMap<>();
        for (KeyValue kv : span.getAttributesList()) {
            var v = kv.getValue();
            out.put(kv.getKey(), switch (v.getValueCase()) {
                case INT_VALUE -> Long.toString(v.getIntValue());
                case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
                default -> v.getStringValue();
            });
        }
        return out;
    }

    /** The first root span received that {@code match} accepts, waited for (bounded: spans are exported every second). */
    static Map.Entry<String, Span> awaitRootSpan(String name, java.util.function.Predicate<Map<String, String>> match) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (Map.Entry<String, Span> e : OTLP.spans) {
                Span sp = e.getValue();
                if (sp.getName().equals(name) && sp.getParentSpanId().isEmpty() && match.test(attributes(sp))) {
                    return e;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no " + name + " span in 30 s among " + OTLP.spans.size() + " received");
    }

    @Test
    void aSampledProduceIsASpanWithItsQueueAppendFsyncAndFenceCheckAndTheRecordsTraceparentIsLeftAlone() throws Exception {
        String topic = "traced";
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            // Metadata for a topic that does not exist: its span carries the error.
            assertThatThrownBy(() -> admin.describeTopics(List.of("no-such-topic")).allTopicNames().get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.UnknownTopicOrPartitionException.class);
        }
        String recordTraceId = "0af7651916cd43dd8448eb211c80319c";
        byte[] traceparent = ("00-" + recordTraceId + "-b7ad6b7169203331-01").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Properties p = cluster.clientProps();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "traced-producer");
        try (var producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            var record = new ProducerRecord<>(topic, 0, "k".getBytes(), "v".getBytes());
            record.headers().add("traceparent", traceparent);
            producer.send(record).get(30, TimeUnit.SECONDS);
        }
        Properties c = cluster.clientProps();
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (var consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            var polled = consumer.poll(Duration.ofSeconds(30));
            assertThat(polled.count()).isEqualTo(1);
            assertThat(polled.iterator().next().headers().lastHeader("traceparent").value()).as("the record's trace context, untouched")
                    .isEqualTo(traceparent);
        }

        Map.Entry<String, Span> found = awaitRootSpan("Produce", a -> "traced-producer".equals(a.get("messaging.client.id"))
                && "1".equals(a.get("kafka.partition.count")));
        Span root = found.getValue();
        assertThat(found.getKey()).as("service.instance.id").matches("broker-\\d+");
        assertThat(root.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        Map<String, String> attrs = attributes(root);
        assertThat(attrs).containsEntry("kafka.api.key", "0").containsEntry("kafka.topic.count", "1").containsEntry("kafka.error.code", "0")
                .containsEntry("kafka.error.name", "NONE").containsEntry("kafka.response.sent", "true").containsKey("kafka.api.version");
        assertThat(Integer.parseInt(attrs.get("kafka.api.version"))).isBetween(3, 10);
        assertThat(java.util.HexFormat.of().formatHex(root.getTraceId().toByteArray()))
                .as("a request span is a root of its own, not the record's trace").isNotEqualTo(recordTraceId);

        // Its children ended before it, so they were exported with it or earlier.
        List<Span> children = OTLP.spans.stream().map(Map.Entry::getValue).filter(s -> s.getParentSpanId().equals(root.getSpanId())).toList();
        assertThat(children).extracting(Span::getName).contains("queue", "local", "append", "fsync", "fence check", "send");
        assertThat(children).allSatisfy(ch -> {
            assertThat(ch.getTraceId()).isEqualTo(root.getTraceId());
            assertThat(ch.getStartTimeUnixNano()).isGreaterThanOrEqualTo(root.getStartTimeUnixNano());
            assertThat(ch.getEndTimeUnixNano()).isLessThanOrEqualTo(root.getEndTimeUnixNano());
        });
        for (String partitionSpan : List.of("append", "fsync", "fence check")) {
            Span sp = children.stream().filter(ch -> ch.getName().equals(partitionSpan)).findFirst().orElseThrow();
            assertThat(attributes(sp)).containsEntry("messaging.destination.name", topic).containsEntry("messaging.destination.partition.id", "0");
        }

        Span metadata = awaitRootSpan("Metadata", a -> "3".equals(a.get("kafka.error.code"))).getValue();
        assertThat(attributes(metadata)).containsEntry("kafka.error.name", "UNKNOWN_TOPIC_OR_PARTITION");
    }
}

