package dev.kaas.controller.health;

import dev.kaas.controller.cluster.ClusterStats;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The controller's metrics: consumer lag and the partitions' offsets across the cluster, from the
 * brokers' reports ({@link ClusterStats}), under the names of the Prometheus Kafka exporter
 * (danielqsj/kafka_exporter), whose lag dashboards and alerts are the ones operators already have
 * (Apache's brokers have no lag metric), and the controller's own state. The mapping is in
 * src/docs/operations.md. Read only when a scrape asks. Thread-safe.
 */
public final class ControllerMetrics implements AutoCloseable {
    private static final AttributeKey<String> GROUP = AttributeKey.stringKey("consumergroup");
    private static final AttributeKey<String> TOPIC = AttributeKey.stringKey("topic");
    private static final AttributeKey<String> PARTITION = AttributeKey.stringKey("partition");

    /** The controller's own state as its loop sees it, read on a scrape. */
    public record Reading(long epoch, long assignmentVersion, int brokers, long registrations) {
    }

    private final SdkMeterProvider provider;
    private final PrometheusMetricReader prometheus;

    /** An OTLP/HTTP push of the metrics: the endpoint's full URL ({@code …/v1/metrics}) and the interval. */
    public record Otlp(String endpoint, Duration interval) {
    }

    public ControllerMetrics(ClusterStats stats, BooleanSupplier leader, Supplier<Reading> reading, int maxSeries) {
        this(stats, leader, reading, maxSeries, "", null);
    }

    /**
     * @param leader   whether this controller holds the lease
     * @param reading  the loop's state, null when it cannot be read (not leading, or the loop busy past a bound)
     * @param instance {@code service.instance.id} of every series (this controller's lease identity); empty: none
     * @param otlp     where to push the metrics as well; null: nowhere
     */
    public ControllerMetrics(ClusterStats stats, BooleanSupplier leader, Supplier<Reading> reading, int maxSeries, String instance,
                             Otlp otlp) {
        if (maxSeries < 1) {
            throw new IllegalArgumentException("kaas.metrics.max-series must be at least 1, not " + maxSeries);
        }
        this.prometheus = new PrometheusMetricReader(false, null);
        Attributes service = instance.isEmpty() ? Attributes.of(AttributeKey.stringKey("service.name"), "kaas-controller")
                : Attributes.of(AttributeKey.stringKey("service.name"), "kaas-controller", AttributeKey.stringKey("service.instance.id"), instance);
        SdkMeterProviderBuilder builder = SdkMeterProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(service)))
                .registerMetricReader(prometheus, type -> maxSeries);
        if (otlp != null) {
            // Throws on a malformed endpoint: the controller does not start with a setting it cannot honour. No retries: the
            // next push carries the cumulative values anyway.
            builder.registerMetricReader(PeriodicMetricReader.builder(OtlpHttpMetricExporter.builder().setEndpoint(otlp.endpoint())
                    .setTimeout(Duration.ofSeconds(5)).setRetryPolicy(null).build()).setInterval(otlp.interval()).build(), type -> maxSeries);
        }
        this.provider = builder.build();
        Meter meter = provider.get("dev.kaas.controller");
        ObservableLongMeasurement lag = meter.gaugeBuilder("kafka.consumergroup.lag").ofLongs()
                .setDescription("A group's lag on a partition: the partition's high watermark minus the group's committed offset.")
                .buildObserver();
        ObservableLongMeasurement lagSum = meter.gaugeBuilder("kafka.consumergroup.lag_sum").ofLongs()
                .setDescription("A group's lag summed over its partitions.").buildObserver();
        ObservableLongMeasurement current = meter.gaugeBuilder("kafka.consumergroup.current_offset").ofLongs()
                .setDescription("A group's committed offset on a partition.").buildObserver();
        ObservableLongMeasurement members = meter.gaugeBuilder("kafka.consumergroup.members").ofLongs()
                .setDescription("A group's members.").buildObserver();
        ObservableLongMeasurement highWatermark = meter.gaugeBuilder("kafka.topic.partition_current_offset").ofLongs()
                .setDescription("A partition's high watermark (ListOffsets LATEST).").buildObserver();
        ObservableLongMeasurement logStart = meter.gaugeBuilder("kafka.topic.partition_oldest_offset").ofLongs()
                .setDescription("A partition's log start offset (ListOffsets EARLIEST).").buildObserver();
        ObservableLongMeasurement truncated = meter.gaugeBuilder("kaas.controller.stats_truncated").ofLongs()
                .setDescription("1 when a broker left partitions or offsets out of its report (its kaas.metrics.max-series).").buildObserver();
        // One reading of the reports per scrape, for all of them.
        meter.batchCallback(() -> {
            // A standby's streams are closed; what it may still hold is no longer the cluster's.
            if (!leader.getAsBoolean()) {
                return;
            }
            ClusterStats.Snapshot s = stats.snapshot();
            for (ClusterStats.PartitionView p : s.partitions().values()) {
                Attributes a = Attributes.of(TOPIC, p.key().topic(), PARTITION, Integer.toString(p.key().partition()));
                highWatermark.record(p.highWatermark(), a);
                logStart.record(p.logStartOffset(), a);
            }
            for (ClusterStats.GroupView g : s.groups()) {
                Attributes ga = Attributes.of(GROUP, g.groupId());
                members.record(g.members(), ga);
                long sum = 0;
                boolean any = false;
                for (ClusterStats.OffsetView o : g.offsets()) {
                    Attributes a = Attributes.of(GROUP, g.groupId(), TOPIC, o.key().topic(), PARTITION, Integer.toString(o.key().partition()));
                    current.record(o.committed(), a);
                    if (o.lag() != null) {
                        lag.record(o.lag(), a);
                        sum += o.lag();
                        any = true;
                    }
                }
                if (any) {
                    lagSum.record(sum, ga);
                }
            }
            truncated.record(s.truncated() ? 1 : 0);
        }, lag, lagSum, current, members, highWatermark, logStart, truncated);
        ObservableLongMeasurement leads = meter.gaugeBuilder("kaas.controller.leader").ofLongs()
                .setDescription("1 while this controller holds the lease.").buildObserver();
        ObservableLongMeasurement epoch = meter.gaugeBuilder("kaas.controller.epoch").ofLongs()
                .setDescription("The lease epoch this controller writes under (leaseTransitions).").buildObserver();
        ObservableLongMeasurement version = meter.gaugeBuilder("kaas.controller.assignment_version").ofLongs()
                .setDescription("The version of the assignment this controller last published.").buildObserver();
        ObservableLongMeasurement brokers = meter.gaugeBuilder("kafka.brokers").ofLongs()
                .setDescription("Brokers with a live stream to this controller.").buildObserver();
        // A cumulative count read from the loop: a gauge, as the JMX exporter reads Apache's -count metrics.
        ObservableLongMeasurement registrations = meter.gaugeBuilder("kaas.controller.broker_registrations").ofLongs()
                .setDescription("Broker streams this controller accepted since it started: a broker's reconnects show as growth.")
                .buildObserver();
        meter.batchCallback(() -> {
            boolean leading = leader.getAsBoolean();
            leads.record(leading ? 1 : 0);
            Reading r = leading ? reading.get() : null;
            if (r != null) {
                epoch.record(r.epoch());
                version.record(r.assignmentVersion());
                brokers.record(r.brokers());
                registrations.record(r.registrations());
            }
        }, leads, epoch, version, brokers, registrations);
    }

    /** The Prometheus text format (0.0.4) of everything, as a scrape reads it. */
    public void writePrometheus(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, prometheus.collect());
    }

    public static String prometheusContentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    @Override
    public void close() {
        provider.close();
    }
}
