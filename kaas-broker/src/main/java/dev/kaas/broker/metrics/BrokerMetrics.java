package dev.kaas.broker.metrics;

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
 * <p>The hot path only adds to {@link LongAdder}s, the histograms' buckets included
 * ({@link Histograms}: the SDK's own histogram locks per value, which two event loops contend
 * for); the OpenTelemetry SDK reads them, one pass each, when a scrape or an export asks. Counts follow Apache's rules: BytesIn and
 * MessagesIn count what was appended, TotalProduceRequests one per partition a Produce reached
 * the log with, FailedProduceRequests one per partition whose records failed validation or an
 * unexpected error (not a leadership, size, corruption or storage refusal, as Apache's
 * {@code ReplicaManager.appendToLocalLog}), TotalFetchRequests one per partition of a Fetch
 * (once, however long it waits, as Apache's {@code fetchMessages}), BytesOut the record bytes of
 * the consumer fetch responses sent (not a follower's).
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
        /** Records converted between message formats: up for a legacy producer, down for an old consumer. */
        final LongAdder produceConversions = new LongAdder();
        final LongAdder fetchConversions = new LongAdder();
    }

    /**
     * The assignment this broker last received (its version and the controller epoch it was
     * published under) and the streams to a controller it opened since it started.
     */
    public record ControllerLink(long assignmentVersion, long controllerEpoch, long streamConnects) {
    }

    /** One partition this broker leads, as the Log gauges show it. */
    public record PartitionStat(String topic, int partition, long size, long logStartOffset, long logEndOffset) {
    }

    /**
     * The group coordinator of this broker: its groups by Apache's state name (Empty, Stable, …)
     * and the offsets they hold (null {@code byState}: not read this time, the gauges are left
     * out), and what it counted since the broker started.
     */
    public record GroupsStat(Map<String, Integer> byState, long offsets, long completedRebalances, long offsetCommits) {
        public static final GroupsStat NONE = new GroupsStat(Map.of(), 0, 0, 0);
    }

    /**
     * What the gauges read on a scrape (the partitions this broker leads, its open connections by
     * listener, the groups it coordinates), and whether a topic exists, asked before a topic's meters are made.
     */
    public interface Source {
        Collection<PartitionStat> partitions();

        /** How many partitions this broker leads: all a scrape needs with per-partition metrics off (no segment sizes summed). */
        default int partitionCount() {
            return partitions().size();
        }

        Map<String, Integer> connections();

        default GroupsStat groups() {
            return GroupsStat.NONE;
        }

        /** This broker's view of the controller; null before it has one. */
        default ControllerLink controllerLink() {
            return null;
        }

        default boolean topicExists(String topic) {
            return true;
        }

        Source NONE = new Source() {
            @Override
            public Collection<PartitionStat> partitions() {
                return List.of();
            }

            @Override
            public Map<String, Integer> connections() {
                return Map.of();
            }
        };
    }

    private final TopicMeters all = new TopicMeters();
    private final ConcurrentHashMap<String, TopicMeters> topics = new ConcurrentHashMap<>();
    /** Requests by name and version: {@code nameIndex << 16 | version} (see {@link #names}). */
    private final ConcurrentHashMap<Integer, LongAdder> requests = new ConcurrentHashMap<>();
    /**
     * Apache's request names: each api key's, then FetchConsumer and FetchFollower, under which
     * Apache counts a Fetch as well as under Fetch ({@code RequestChannel.updateRequestMetrics}).
     */
    private final String[] names = new String[ApiKeys.values().length + 2];
    private final Attributes[] requestAttributes = new Attributes[names.length];
    private final int fetchConsumer = ApiKeys.values().length;
    private final int fetchFollower = fetchConsumer + 1;
    private final SdkMeterProvider provider;
    private final PrometheusMetricReader prometheus;
    /** Apache's RequestMetrics time histograms, in the order {@link #requestDone} takes them. */
    private static final String[] TIME_METRICS = {"totaltimems", "requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems",
        "responsesendtimems", "throttletimems"};
    private static final String[] TIME_DESCRIPTIONS = {
        "Milliseconds from a request's frame read to its response handed to the socket.",
        "Milliseconds from the frame read to its handler's start (parsing, the session's rights).",
        "Milliseconds of the handler's own run on the event loop.",
        "Milliseconds waiting for what the handler started: an fsync, a long-polling Fetch, a coordinator.",
        "Milliseconds the finished response waited behind earlier ones of its connection.",
        "Milliseconds encoding the response and handing it to the socket.",
        "The quota delay the response carried, in milliseconds."};
    private final Histograms histograms;
    /** {@code [metric][name]}, made at a series' first value. */
    private final java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>[] requestTimes;
    private final Histograms.Family[] timeFamilies = new Histograms.Family[TIME_METRICS.length];
    /** Request sizes by request name, Apache's RequestBytes: a 64-byte Metadata to a 100 MiB Produce. */
    private static final List<Double> BYTE_BUCKETS = List.of(64d, 256d, 1024d, 4096d, 16384d, 65536d, 262144d, 1048576d, 4194304d,
            16777216d, 67108864d, 104857600d);
    private final java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series> requestBytes;
    private final Histograms.Family requestBytesFamily;
    private final java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series> conversionTimes;
    private final Histograms.Family conversionTimeFamily;
    private final java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series> temporaryMemory;
    private final Histograms.Family temporaryMemoryFamily;
    private final Histograms.Series fsyncTime;
    private final Histograms.Series fenceTime;
    private final Histograms.Series commitAppends;
    private final Histograms.Series takeoverTime;
    /** Group commit times, in milliseconds: a local SSD's tenth of a millisecond to a struggling NFS server's seconds. */
    private static final List<Double> FSYNC_BUCKETS = List.of(0.1, 0.25, 0.5, 1d, 2d, 5d, 10d, 25d, 50d, 100d, 250d, 500d, 1000d, 5000d);
    private static final List<Double> APPEND_BUCKETS = List.of(1d, 2d, 4d, 8d, 16d, 32d, 64d, 128d, 256d, 512d, 1024d);
    private static final List<Double> TAKEOVER_BUCKETS = List.of(1d, 5d, 10d, 25d, 50d, 100d, 250d, 500d, 1000d, 2500d, 5000d, 10000d,
            30000d);
    private final Source source;

    /** An OTLP/HTTP push of the metrics: the endpoint's full URL ({@code …/v1/metrics}) and the interval. */
    public record Otlp(String endpoint, Duration interval) {
    }

    /** How long one OTLP push may take; also bounds the last push when the broker stops. */
    static final Duration OTLP_TIMEOUT = Duration.ofSeconds(5);

    public BrokerMetrics(Source source, boolean partitionMetrics, int maxSeries) {
        this(source, partitionMetrics, maxSeries, "", null);
    }

    /**
     * @param partitionMetrics whether the Log gauges (one series per partition) are kept
     * @param maxSeries        the most series one metric holds (the SDK's cardinality limit, at
     *                         least 1); past it, what a scrape reads is folded into one overflow series
     * @param instance         {@code service.instance.id} of every series (the broker), so an OTLP
     *                         receiver tells brokers apart; empty: none
     * @param otlp             where to push the metrics as well; null: nowhere
     */
    public BrokerMetrics(Source source, boolean partitionMetrics, int maxSeries, String instance, Otlp otlp) {
        if (maxSeries < 1) {
            throw new IllegalArgumentException("kaas.metrics.max-series must be at least 1, not " + maxSeries);
        }
        this.source = source;
        // Its flag (no scope labels) is ignored by this version: every series carries otel_scope_name.
        this.prometheus = new PrometheusMetricReader(false, null);
        Attributes service = instance.isEmpty() ? Attributes.of(AttributeKey.stringKey("service.name"), "kaas-broker")
                : Attributes.of(AttributeKey.stringKey("service.name"), "kaas-broker", AttributeKey.stringKey("service.instance.id"), instance);
        this.histograms = new Histograms("dev.kaas.broker", System.currentTimeMillis() * 1_000_000L);
        SdkMeterProviderBuilder builder = SdkMeterProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(service)))
                .registerMetricReader(prometheus, type -> maxSeries)
                .registerMetricProducer(histograms);
        if (otlp != null) {
            // Throws on a malformed endpoint: the broker does not start with a setting it cannot honour. No retries: the
            // next push carries the cumulative values anyway, and retries would hold the broker's stop behind a dead receiver.
            builder.registerMetricReader(PeriodicMetricReader.builder(OtlpHttpMetricExporter.builder().setEndpoint(otlp.endpoint())
                    .setTimeout(OTLP_TIMEOUT).setRetryPolicy(null).build()).setInterval(otlp.interval()).build(), type -> maxSeries);
        }
        this.provider = builder.build();
        for (ApiKeys k : ApiKeys.values()) {
            names[k.ordinal()] = k.name;
        }
        names[fetchConsumer] = "FetchConsumer";
        names[fetchFollower] = "FetchFollower";
        for (int i = 0; i < names.length; i++) {
            requestAttributes[i] = Attributes.of(REQUEST, names[i]);
        }
        Meter meter = provider.get("dev.kaas.broker");
        String[] topicMetricNames = {"bytesin", "messagesin", "bytesout", "totalproducerequests", "failedproducerequests",
                "totalfetchrequests", "failedfetchrequests", "producemessageconversions", "fetchmessageconversions"};
        ObservableLongMeasurement[] topicCounters = new ObservableLongMeasurement[topicMetricNames.length];
        for (int i = 0; i < topicMetricNames.length; i++) {
            topicCounters[i] = meter.counterBuilder("kafka.server.brokertopicmetrics." + topicMetricNames[i]).buildObserver();
        }
        // One pass over the meters per collection, for all of them.
        meter.batchCallback(() -> {
            record(topicCounters, all, Attributes.empty());
            topics.forEach((topic, m) -> record(topicCounters, m, Attributes.of(TOPIC, topic)));
        }, topicCounters[0], java.util.Arrays.copyOfRange(topicCounters, 1, topicCounters.length));
        meter.counterBuilder("kafka.network.requestmetrics.requests").setDescription("Requests answered, by request type and version.")
                .buildWithCallback(m -> requests.forEach((kv, count) -> m.record(count.sum(),
                        Attributes.of(REQUEST, names[kv >>> 16], VERSION, Integer.toString(kv & 0xffff)))));
        @SuppressWarnings("unchecked")
        java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>[] times = new java.util.concurrent.atomic.AtomicReferenceArray[TIME_METRICS.length];
        this.requestTimes = times;
        for (int m = 0; m < TIME_METRICS.length; m++) {
            var byName = new java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>(names.length);
            times[m] = byName;
            timeFamilies[m] = histograms.family("kafka.network.requestmetrics." + TIME_METRICS[m], TIME_DESCRIPTIONS[m], TIME_BUCKETS, each -> {
                for (int n = 0; n < byName.length(); n++) {
                    Histograms.Series series = byName.get(n);
                    if (series != null) {
                        each.accept(requestAttributes[n], series);
                    }
                }
            });
        }
        meter.gaugeBuilder("kafka.server.socket.server.metrics.connection.count").ofLongs()
                .setDescription("Open client connections, by listener.")
                .buildWithCallback(m -> source.connections().forEach((listener, n) ->
                        m.record(n, Attributes.of(LISTENER, listener, PROCESSOR, "0"))));
        ObservableLongMeasurement partitionCount = meter.gaugeBuilder("kafka.server.replicamanager.partitioncount").ofLongs()
                .setDescription("Partitions on this broker (each led by it: kaas has no followers).").buildObserver();
        ObservableLongMeasurement leaderCount = meter.gaugeBuilder("kafka.server.replicamanager.leadercount").ofLongs()
                .setDescription("Partitions this broker leads.").buildObserver();
        ObservableLongMeasurement size = meter.gaugeBuilder("kafka.log.log.size").ofLongs()
                .setDescription("Bytes of the partition's segments.").buildObserver();
        ObservableLongMeasurement logStart = meter.gaugeBuilder("kafka.log.log.logstartoffset").ofLongs()
                .setDescription("The partition's log start offset.").buildObserver();
        ObservableLongMeasurement logEnd = meter.gaugeBuilder("kafka.log.log.logendoffset").ofLongs()
                .setDescription("The partition's log end offset.").buildObserver();
        // The partitions are walked once per collection (a size sums every segment).
        meter.batchCallback(() -> {
            if (!partitionMetrics) {
                int n = source.partitionCount();
                partitionCount.record(n);
                leaderCount.record(n);
                return;
            }
            Collection<PartitionStat> hosted = source.partitions();
            partitionCount.record(hosted.size());
            leaderCount.record(hosted.size());
            for (PartitionStat p : hosted) {
                Attributes a = Attributes.of(TOPIC, p.topic(), PARTITION, Integer.toString(p.partition()));
                size.record(p.size(), a);
                logStart.record(p.logStartOffset(), a);
                logEnd.record(p.logEndOffset(), a);
            }
        }, partitionCount, leaderCount, size, logStart, logEnd);
        groupMetrics(meter);
        var bytesByName = new java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>(names.length);
        this.requestBytes = bytesByName;
        this.requestBytesFamily = histograms.family("kafka.network.requestmetrics.requestbytes",
                "Request sizes in bytes (without the size field).", BYTE_BUCKETS, each -> {
                    for (int n = 0; n < bytesByName.length(); n++) {
                        Histograms.Series series = bytesByName.get(n);
                        if (series != null) {
                            each.accept(requestAttributes[n], series);
                        }
                    }
                });
        var conversionsByName = new java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>(names.length);
        this.conversionTimes = conversionsByName;
        this.conversionTimeFamily = histograms.family("kafka.network.requestmetrics.messageconversionstimems",
                "Milliseconds a Produce or Fetch spent converting records between message formats.", TIME_BUCKETS,
                each -> eachNamed(conversionsByName, each));
        var memoryByName = new java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series>(names.length);
        this.temporaryMemory = memoryByName;
        this.temporaryMemoryFamily = histograms.family("kafka.network.requestmetrics.temporarymemorybytes",
                "Bytes a Produce or Fetch allocated to convert records between message formats.", BYTE_BUCKETS,
                each -> eachNamed(memoryByName, each));
        this.fsyncTime = single("kaas.log.fsync.time.ms",
                "Milliseconds of each group commit's fsync, which every acks=all append waits for.", FSYNC_BUCKETS);
        this.fenceTime = single("kaas.log.fence.check.time.ms",
                "Milliseconds of the fence check after each group commit's fsync (its count: the fence checks).", FSYNC_BUCKETS);
        this.commitAppends = single("kaas.log.group.commit.appends",
                "acks=all appends one fsync acknowledged: the group commit's effectiveness.", APPEND_BUCKETS);
        this.takeoverTime = single("kaas.partition.takeover.time.ms",
                "Milliseconds to open a partition under a new leader epoch: fence the previous writer, recover the tail "
                        + "(its count: the takeovers).", TAKEOVER_BUCKETS);
        ObservableLongMeasurement assignmentVersion = meter.gaugeBuilder("kaas.broker.assignment.version").ofLongs()
                .setDescription("The version of the assignment this broker last received.").buildObserver();
        ObservableLongMeasurement controllerEpoch = meter.gaugeBuilder("kaas.broker.controller.epoch").ofLongs()
                .setDescription("The controller epoch that assignment was published under.").buildObserver();
        // A cumulative count read from the session, a gauge as elsewhere.
        ObservableLongMeasurement connects = meter.gaugeBuilder("kaas.broker.controller.stream.connects").ofLongs()
                .setDescription("Streams to a controller this broker opened since it started: reconnects show as growth.").buildObserver();
        meter.batchCallback(() -> {
            ControllerLink link = source.controllerLink();
            if (link != null) {
                assignmentVersion.record(link.assignmentVersion());
                controllerEpoch.record(link.controllerEpoch());
                connects.record(link.streamConnects());
            }
        }, assignmentVersion, controllerEpoch, connects);
    }

    private void eachNamed(java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series> byName,
                           java.util.function.BiConsumer<Attributes, Histograms.Series> each) {
        for (int n = 0; n < byName.length(); n++) {
            Histograms.Series series = byName.get(n);
            if (series != null) {
                each.accept(requestAttributes[n], series);
            }
        }
    }

    /** A histogram of one series, without attributes. */
    private Histograms.Series single(String name, String description, List<Double> buckets) {
        Histograms.Series series = new Histograms.Series(buckets.stream().mapToDouble(Double::doubleValue).toArray());
        histograms.family(name, description, buckets, each -> each.accept(Attributes.empty(), series));
        return series;
    }

    /** A group commit: its fsync's and fence check's times, and the appends it acknowledged. */
    public void groupCommit(long fsyncNanos, long fenceNanos, int appends) {
        if (fsyncNanos < 0) {
            return;
        }
        fsyncTime.record(fsyncNanos / 1e6);
        fenceTime.record(fenceNanos / 1e6);
        commitAppends.record(appends);
    }

    /** A partition taken over (opened under a new leader epoch). */
    public void takeover(long nanos) {
        takeoverTime.record(nanos / 1e6);
    }

    /** Apache's {@code GroupMetadataManager} gauges: the name of each, and the state it counts (null: every group). */
    private static final String[][] GROUP_GAUGES = {{"numgroups", null}, {"numgroupspreparingrebalance", "PreparingRebalance"},
            {"numgroupscompletingrebalance", "CompletingRebalance"}, {"numgroupsstable", "Stable"}, {"numgroupsdead", "Dead"},
            {"numgroupsempty", "Empty"}};

    private void groupMetrics(Meter meter) {
        ObservableLongMeasurement[] byState = new ObservableLongMeasurement[GROUP_GAUGES.length];
        for (int i = 0; i < GROUP_GAUGES.length; i++) {
            byState[i] = meter.gaugeBuilder("kafka.coordinator.group.groupmetadatamanager." + GROUP_GAUGES[i][0]).ofLongs().buildObserver();
        }
        ObservableLongMeasurement offsets = meter.gaugeBuilder("kafka.coordinator.group.groupmetadatamanager.numoffsets").ofLongs()
                .setDescription("Committed offsets the groups this broker coordinates hold.").buildObserver();
        // Apache's cumulative counts, gauges as the JMX exporter reads them (a counter would get a second _total).
        ObservableLongMeasurement rebalances = meter.gaugeBuilder("kafka.server.group.coordinator.metrics.group.completed.rebalance.count")
                .ofLongs().setDescription("Rebalances completed (a leader's SyncGroup made its group Stable) since the broker started.")
                .buildObserver();
        ObservableLongMeasurement commits = meter.gaugeBuilder("kafka.server.group.coordinator.metrics.offset.commit.count").ofLongs()
                .setDescription("OffsetCommits and TxnOffsetCommits stored since the broker started, one each (Apache's count).").buildObserver();
        ObservableLongMeasurement[] rest = new ObservableLongMeasurement[byState.length + 2];
        System.arraycopy(byState, 1, rest, 0, byState.length - 1);
        rest[byState.length - 1] = offsets;
        rest[byState.length] = rebalances;
        rest[byState.length + 1] = commits;
        meter.batchCallback(() -> {
            GroupsStat g = source.groups();
            if (g.byState() != null) {
                long total = 0;
                for (int n : g.byState().values()) {
                    total += n;
                }
                byState[0].record(total);
                for (int i = 1; i < GROUP_GAUGES.length; i++) {
                    byState[i].record(g.byState().getOrDefault(GROUP_GAUGES[i][1], 0));
                }
                offsets.record(g.offsets());
            }
            rebalances.record(g.completedRebalances());
            commits.record(g.offsetCommits());
        }, byState[0], rest);
    }

    private static void record(ObservableLongMeasurement[] counters, TopicMeters m, Attributes a) {
        counters[0].record(m.bytesIn.sum(), a);
        counters[1].record(m.messagesIn.sum(), a);
        counters[2].record(m.bytesOut.sum(), a);
        counters[3].record(m.totalProduce.sum(), a);
        counters[4].record(m.failedProduce.sum(), a);
        counters[5].record(m.totalFetch.sum(), a);
        counters[6].record(m.failedFetch.sum(), a);
        counters[7].record(m.produceConversions.sum(), a);
        counters[8].record(m.fetchConversions.sum(), a);
    }

    /**
     * Keeps the meters of these topics only, as Apache removes a deleted topic's meters (the
     * all-topics totals keep what it counted). Called with every applied assignment.
     */
    public void retainTopics(Set<String> existing) {
        topics.keySet().retainAll(existing);
    }

    private TopicMeters topic(String name) {
        TopicMeters m = topics.get(name);
        if (m != null) {
            return m;
        }
        // An append or read still queued for a topic deleted meanwhile must not bring its meters back (they would stay until
        // the next assignment): counted in the all-topics totals only.
        return source.topicExists(name) ? topics.computeIfAbsent(name, n -> new TopicMeters()) : new TopicMeters();
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

    /** {@code records} of a legacy (v0/v1) produce request up-converted to v2 before the append (Apache's ProduceMessageConversionsPerSec). */
    public void produceConverted(String topic, long records) {
        topic(topic).produceConversions.add(records);
        all.produceConversions.add(records);
    }

    /** {@code records} down-converted for a Fetch of version 0 to 3 (Apache's FetchMessageConversionsPerSec). */
    public void fetchConverted(String topic, long records) {
        topic(topic).fetchConversions.add(records);
        all.fetchConversions.add(records);
    }

    /** Record bytes of a consumer's fetch response, sent. */
    public void bytesOut(String topic, long bytes) {
        topic(topic).bytesOut.add(bytes);
        all.bytesOut.add(bytes);
    }

    /** Where each part of a request's time is in the array {@link #requestDone} takes, in Apache's order. */
    public static final int TOTAL = 0;
    public static final int QUEUE = 1;
    public static final int LOCAL = 2;
    public static final int REMOTE = 3;
    public static final int RESPONSE_QUEUE = 4;
    public static final int SEND = 5;
    /** How many parts the array holds. */
    public static final int PARTS = 6;

    /**
     * A request answered (or, for acks=0, done): counted by name and version, its times (Apache's
     * RequestMetrics parts, in nanoseconds, indexed {@link #TOTAL} to {@link #SEND}; the throttle in
     * milliseconds) and size in the histograms; a Fetch also as FetchConsumer or FetchFollower, as
     * Apache counts it. One loop over the parts, not a call each: this is inlined into the
     * connection's response path, whose compiled size it should barely grow.
     */
    public void requestDone(ApiKeys key, short version, boolean fromFollower, long[] partNanos, int throttleMs, int requestBytes,
                            long conversionNanos, long temporaryMemoryBytes) {
        count(key.ordinal(), version, partNanos, throttleMs, requestBytes);
        if (key == ApiKeys.FETCH) {
            count(fromFollower ? fetchFollower : fetchConsumer, version, partNanos, throttleMs, requestBytes);
        }
        if (key == ApiKeys.FETCH || key == ApiKeys.PRODUCE) {
            converted(key.ordinal(), conversionNanos, temporaryMemoryBytes);
        }
    }

    /**
     * Apache's MessageConversionsTimeMs and TemporaryMemoryBytes, which its RequestChannel keeps
     * for {@code request=Produce} and {@code request=Fetch} only (not FetchConsumer/FetchFollower),
     * recorded for each of their requests (0 when nothing was converted).
     */
    private void converted(int name, long conversionNanos, long temporaryMemoryBytes) {
        perName(conversionTimes, conversionTimeFamily, name).record(conversionNanos / 1e6);
        perName(temporaryMemory, temporaryMemoryFamily, name).record(temporaryMemoryBytes);
    }

    private static Histograms.Series perName(java.util.concurrent.atomic.AtomicReferenceArray<Histograms.Series> byName,
                                             Histograms.Family family, int name) {
        Histograms.Series s = byName.get(name);
        if (s == null) {
            byName.compareAndSet(name, null, family.newSeries());
            s = byName.get(name);
        }
        return s;
    }

    private void count(int name, short version, long[] partNanos, int throttleMs, int requestBytes) {
        int kv = name << 16 | (version & 0xffff);
        LongAdder count = requests.get(kv);
        if (count == null) {
            count = requests.computeIfAbsent(kv, x -> new LongAdder());
        }
        count.increment();
        for (int m = 0; m < PARTS; m++) {
            series(m, name).record(partNanos[m] / 1e6);
        }
        series(PARTS, name).record(throttleMs);
        bytesSeries(name).record(requestBytes);
    }

    private Histograms.Series bytesSeries(int name) {
        Histograms.Series s = requestBytes.get(name);
        if (s == null) {
            requestBytes.compareAndSet(name, null, requestBytesFamily.newSeries());
            s = requestBytes.get(name);
        }
        return s;
    }

    private Histograms.Series series(int metric, int name) {
        var byName = requestTimes[metric];
        Histograms.Series s = byName.get(name);
        if (s == null) {
            byName.compareAndSet(name, null, timeFamilies[metric].newSeries());
            s = byName.get(name);
        }
        return s;
    }

    /** The Prometheus text format (0.0.4) of everything, as a scrape reads it. */
    public void writePrometheus(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, prometheus.collect());
    }

    public static String prometheusContentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    /**
     * Metrics that read no source, for tests and tools that count without serving: one shared
     * instance (each would otherwise hold a meter provider nobody closes), never served or closed.
     */
    public static BrokerMetrics detached() {
        return Detached.INSTANCE;
    }

    private static final class Detached {
        static final BrokerMetrics INSTANCE = new BrokerMetrics(Source.NONE, false, 2000);
    }

    @Override
    public void close() {
        provider.close();
    }
}
