package dev.kaas.broker.metrics;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.resources.Resource;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * What the broker counts, under the names Apache Kafka's MBeans take through the Prometheus JMX
 * exporter's Strimzi rules ({@code kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=t}
 * → {@code kafka_server_brokertopicmetrics_bytesin_total{topic="t"}}), so dashboards built for
 * Apache work unchanged. The mapping table is in src/docs/operations.md.
 *
 * <p>The hot path only adds to {@link LongAdder}s (and records one histogram value per request);
 * the OpenTelemetry SDK reads them through asynchronous instruments when a scrape asks, so a
 * broker nobody scrapes pays for nothing else. Counts follow Apache's rules: BytesIn and
 * MessagesIn count what was appended, TotalProduceRequests one per partition a Produce reached
 * the log with, FailedProduceRequests one per partition whose records failed validation or an
 * unexpected error (not a leadership, size, corruption or storage refusal, as Apache's
 * {@code ReplicaManager.appendToLocalLog}), TotalFetchRequests one per partition a Fetch read,
 * BytesOut the record bytes of the consumer fetch responses sent (not a follower's).
 *
 * <p>Thread-safe.
 */
public final class BrokerMetrics implements AutoCloseable {
    private static final AttributeKey<String> TOPIC = AttributeKey.stringKey("topic");
    private static final AttributeKey<String> PARTITION = AttributeKey.stringKey("partition");
    private static final AttributeKey<String> REQUEST = AttributeKey.stringKey("request");
    private static final AttributeKey<String> VERSION = AttributeKey.stringKey("version");
    private static final AttributeKey<String> LISTENER = AttributeKey.stringKey("listener");
    private static final AttributeKey<String> PROCESSOR = AttributeKey.stringKey("networkProcessor");
    /** Request time buckets, in milliseconds: from a cached Metadata answer to a long-polling Fetch. */
    private static final List<Double> TIME_BUCKETS = List.of(0.5, 1d, 2d, 5d, 10d, 25d, 50d, 100d, 250d, 500d, 1000d, 2500d, 5000d,
            10000d, 30000d);

    /** Apache's BrokerTopicMetrics meters, for one topic or for all. */
    static final class TopicMeters {
        final LongAdder bytesIn = new LongAdder();
        final LongAdder messagesIn = new LongAdder();
        final LongAdder bytesOut = new LongAdder();
        final LongAdder totalProduce = new LongAdder();
        final LongAdder failedProduce = new LongAdder();
        final LongAdder totalFetch = new LongAdder();
        final LongAdder failedFetch = new LongAdder();
    }

    /** One partition this broker leads, as the Log gauges show it. */
    public record PartitionStat(String topic, int partition, long size, long logStartOffset, long logEndOffset) {
    }

    /**
     * What the gauges read on a scrape: the partitions this broker leads, its open connections by
     * listener, and the topics that exist (a deleted topic's meters go, as Apache removes them).
     */
    public interface Source {
        Collection<PartitionStat> partitions();

        Map<String, Integer> connections();

        Set<String> topics();

        Source NONE = new Source() {
            @Override
            public Collection<PartitionStat> partitions() {
                return List.of();
            }

            @Override
            public Map<String, Integer> connections() {
                return Map.of();
            }

            @Override
            public Set<String> topics() {
                return Set.of();
            }
        };
    }

    private final TopicMeters all = new TopicMeters();
    private final ConcurrentHashMap<String, TopicMeters> topics = new ConcurrentHashMap<>();
    /** Requests by api key and version: {@code key << 16 | version}. */
    private final ConcurrentHashMap<Integer, LongAdder> requests = new ConcurrentHashMap<>();
    private final Attributes[] requestAttributes = new Attributes[ApiKeys.values().length];
    private final SdkMeterProvider provider;
    private final PrometheusMetricReader prometheus;
    private final DoubleHistogram totalTime;
    private final boolean partitionMetrics;

    /**
     * @param partitionMetrics whether the Log gauges (one series per partition) are kept
     * @param maxSeries        the most series one metric holds (the SDK's cardinality limit);
     *                         past it, what a scrape reads is folded into one overflow series
     */
    public BrokerMetrics(Source source, boolean partitionMetrics, int maxSeries) {
        this.partitionMetrics = partitionMetrics;
        // Its flag (no scope labels) is ignored by this version: every series carries otel_scope_name.
        this.prometheus = new PrometheusMetricReader(false, null);
        this.provider = SdkMeterProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "kaas-broker"))))
                .registerMetricReader(prometheus, type -> maxSeries).build();
        for (ApiKeys k : ApiKeys.values()) {
            requestAttributes[k.ordinal()] = Attributes.of(REQUEST, k.name);
        }
        Meter meter = provider.get("dev.kaas.broker");
        topicCounter(meter, "kafka.server.brokertopicmetrics.bytesin", m -> m.bytesIn, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.messagesin", m -> m.messagesIn, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.bytesout", m -> m.bytesOut, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.totalproducerequests", m -> m.totalProduce, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.failedproducerequests", m -> m.failedProduce, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.totalfetchrequests", m -> m.totalFetch, source);
        topicCounter(meter, "kafka.server.brokertopicmetrics.failedfetchrequests", m -> m.failedFetch, source);
        meter.counterBuilder("kafka.network.requestmetrics.requests").setDescription("Requests answered, by request type and version.")
                .buildWithCallback(m -> requests.forEach((kv, count) -> m.record(count.sum(),
                        Attributes.of(REQUEST, ApiKeys.forId(kv >>> 16).name, VERSION, Integer.toString(kv & 0xffff)))));
        this.totalTime = meter.histogramBuilder("kafka.network.requestmetrics.totaltimems")
                .setDescription("Milliseconds from a request's last byte read to its response handed to the socket.")
                .setExplicitBucketBoundariesAdvice(TIME_BUCKETS).build();
        meter.gaugeBuilder("kafka.server.replicamanager.partitioncount").ofLongs()
                .setDescription("Partitions on this broker (each led by it: kaas has no followers).")
                .buildWithCallback(m -> m.record(source.partitions().size()));
        meter.gaugeBuilder("kafka.server.replicamanager.leadercount").ofLongs().setDescription("Partitions this broker leads.")
                .buildWithCallback(m -> m.record(source.partitions().size()));
        meter.gaugeBuilder("kafka.server.socket.server.metrics.connection.count").ofLongs()
                .setDescription("Open client connections, by listener.")
                .buildWithCallback(m -> source.connections().forEach((listener, n) ->
                        m.record(n, Attributes.of(LISTENER, listener, PROCESSOR, "0"))));
        if (partitionMetrics) {
            logGauge(meter, "kafka.log.log.size", "Bytes of the partition's segments.", PartitionStat::size, source);
            logGauge(meter, "kafka.log.log.logstartoffset", "The partition's log start offset.", PartitionStat::logStartOffset, source);
            logGauge(meter, "kafka.log.log.logendoffset", "The partition's log end offset.", PartitionStat::logEndOffset, source);
        }
    }

    private interface Pick {
        LongAdder of(TopicMeters m);
    }

    private interface Stat {
        long of(PartitionStat p);
    }

    private void topicCounter(Meter meter, String name, Pick pick, Source source) {
        meter.counterBuilder(name).buildWithCallback(m -> {
            m.record(pick.of(all).sum());
            // A deleted topic's meters go, as Apache removes them; the all-topics totals keep what it counted.
            Set<String> existing = source.topics();
            topics.keySet().retainAll(existing);
            for (var e : topics.entrySet()) {
                m.record(pick.of(e.getValue()).sum(), Attributes.of(TOPIC, e.getKey()));
            }
        });
    }

    private static void logGauge(Meter meter, String name, String description, Stat stat, Source source) {
        meter.gaugeBuilder(name).ofLongs().setDescription(description).buildWithCallback((ObservableLongMeasurement m) -> {
            for (PartitionStat p : source.partitions()) {
                m.record(stat.of(p), Attributes.of(TOPIC, p.topic(), PARTITION, Integer.toString(p.partition())));
            }
        });
    }

    private TopicMeters topic(String name) {
        TopicMeters m = topics.get(name);
        return m != null ? m : topics.computeIfAbsent(name, n -> new TopicMeters());
    }

    /** Records appended to a partition of {@code topic}. */
    public void appended(String topic, long bytes, long messages) {
        TopicMeters t = topic(topic);
        t.bytesIn.add(bytes);
        t.messagesIn.add(messages);
        all.bytesIn.add(bytes);
        all.messagesIn.add(messages);
    }

    /** A Produce reached a partition of {@code topic}'s log. */
    public void produceRequest(String topic) {
        topic(topic).totalProduce.increment();
        all.totalProduce.increment();
    }

    public void produceFailed(String topic) {
        topic(topic).failedProduce.increment();
        all.failedProduce.increment();
    }

    /** A Fetch read a partition of {@code topic}. */
    public void fetchRequest(String topic) {
        topic(topic).totalFetch.increment();
        all.totalFetch.increment();
    }

    public void fetchFailed(String topic) {
        topic(topic).failedFetch.increment();
        all.failedFetch.increment();
    }

    /** Record bytes of a consumer's fetch response, sent. */
    public void bytesOut(String topic, long bytes) {
        topic(topic).bytesOut.add(bytes);
        all.bytesOut.add(bytes);
    }

    /** A request answered (or, for acks=0, done): counted by type and version, its time in the histogram. */
    public void requestDone(ApiKeys key, short version, long nanos) {
        int kv = key.id << 16 | (version & 0xffff);
        LongAdder count = requests.get(kv);
        if (count == null) {
            count = requests.computeIfAbsent(kv, x -> new LongAdder());
        }
        count.increment();
        // The root context: no trace or exemplar lookup on the hot path.
        totalTime.record(nanos / 1e6, requestAttributes[key.ordinal()], Context.root());
    }

    public boolean partitionMetrics() {
        return partitionMetrics;
    }

    /** The Prometheus text format (0.0.4) of everything, as a scrape reads it. */
    public void writePrometheus(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, prometheus.collect());
    }

    public static String prometheusContentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    /** Metrics that read no source, for tests and tools that count without serving. */
    public static BrokerMetrics detached() {
        return new BrokerMetrics(Source.NONE, false, 2000);
    }

    @Override
    public void close() {
        provider.close();
    }
}
