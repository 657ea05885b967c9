package dev.kaas.broker.quota;

import dev.kaas.common.model.ClientQuota;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.internals.QuotaConfigs;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;

/**
 * One kind of client quota ({@code producer_byte_rate}, {@code consumer_byte_rate}, or
 * {@code request_percentage} as ClientRequestQuotaManager: percent of one thread's time, its
 * delay bounded by one window sample) as Apache 3.7's ClientQuotaManager enforces it, on kafka-clients' own metrics (a {@link Rate} over
 * {@code quota.window.num} samples of {@code quota.window.size.seconds}): a client's usage is
 * recorded in the sensor its quota entity resolves to (Apache's eight-level precedence, so clients
 * sharing an entity share its rate), and a violation yields the delay that brings the rate back
 * to the quota, X = (O - T) / T × W, which the broker answers with as {@code throttle_time_ms}
 * and for which it stops reading the connection (KIP-219). Each broker measures what it serves,
 * as each Apache broker does. Thread-safe.
 */
public final class QuotaManager {
    /**
     * A client quiet this long is forgotten (Apache keeps sensors an hour; the rate they measure
     * covers only quota.window.num × quota.window.size.seconds, and every kept one is memory a
     * client chose the name of).
     */
    static final long SENSOR_EXPIRY_SECONDS = 300;
    /** Metrics (one per sensor) past which new clients share a sensor per quota value. */
    static final int MAX_SENSORS = 20_000;
    static final int MAX_NAME_CHARS = 256;

    private final String key;
    private final String group;
    private final Supplier<List<ClientQuota>> quotas;
    private final Metrics metrics;
    private final int samples;
    private final int windowSeconds;
    private final int maxSensors;
    /** The metric a sensor measures (Apache's names: byte-rate, request-time). */
    private final String metricName;
    /** The longest delay one violation yields (Apache bounds request-time delays to one quota window sample). */
    private final long maxThrottleMs;
    private volatile Index index = new Index(null, Map.of());

    /** The quotas of this kind by entity ({@code user}, {@code client-id}; a null name is the default). */
    private record Index(List<ClientQuota> source, Map<Map<String, String>, Double> limits) {
    }

    /** The sensor a client's usage goes to, and the quota that applies to it (null: none). */
    record Resolved(String user, String clientId, Double limit) {
    }

    public QuotaManager(String key, String group, Supplier<List<ClientQuota>> quotas, Time time, int samples, int windowSeconds) {
        this(key, group, quotas, time, samples, windowSeconds, MAX_SENSORS);
    }

    QuotaManager(String key, String group, Supplier<List<ClientQuota>> quotas, Time time, int samples, int windowSeconds, int maxSensors) {
        this.maxSensors = maxSensors;
        this.key = key;
        boolean requestTime = QuotaConfigs.REQUEST_PERCENTAGE_OVERRIDE_CONFIG.equals(key);
        this.metricName = requestTime ? "request-time" : "byte-rate";
        this.maxThrottleMs = requestTime ? TimeUnit.SECONDS.toMillis(windowSeconds) : Long.MAX_VALUE;
        this.group = group;
        this.quotas = quotas;
        this.samples = samples;
        this.windowSeconds = windowSeconds;
        this.metrics = new Metrics(new MetricConfig(), List.of(), time, true);
    }

    private Index index() {
        List<ClientQuota> current = quotas.get();
        Index i = index;
        if (i.source() != current) {
            i = new Index(current, ClientQuota.limits(current, key));
            index = i;
        }
        return i;
    }

    /** Whether any entity has a quota of this kind: if not, nothing is recorded (Apache's quotasEnabled). */
    public boolean enabled() {
        return !index().limits().isEmpty();
    }

    /** Apache's DefaultQuotaCallback ({@link ClientQuota#resolve}). */
    static Resolved resolve(Map<Map<String, String>, Double> limits, String user, String clientId) {
        ClientQuota.Resolved r = ClientQuota.resolve(limits, user, clientId);
        return new Resolved(r.user(), r.clientId(), r.limit());
    }

    /**
     * Records {@code value} (bytes) for the client at {@code nowMs} and answers how long it must
     * wait (0 within its quota).
     */
    public int recordAndGetThrottleTimeMs(KafkaPrincipal principal, String clientId, double value, long nowMs) {
        Index i = index();
        if (i.limits().isEmpty()) {
            return 0;
        }
        Sensor sensor = sensor(i, principal, clientId);
        if (sensor == null) {
            return 0;
        }
        try {
            sensor.record(value, nowMs, true);
            return 0;
        } catch (QuotaViolationException e) {
            return (int) Math.min(Integer.MAX_VALUE, Math.min(maxThrottleMs, throttleTimeMs(e, nowMs)));
        }
    }

    /** Takes back a recorded value: a throttled Fetch sends nothing (Apache's unrecordQuotaSensor). */
    public void unrecord(KafkaPrincipal principal, String clientId, double value, long nowMs) {
        Index i = index();
        if (!i.limits().isEmpty()) {
            Sensor sensor = sensor(i, principal, clientId);
            if (sensor != null) {
                sensor.record(-value, nowMs, false);
            }
        }
    }

    /** The most one response may hold without being throttled for it alone (Apache's getMaxValueInQuotaWindow). */
    public double maxValueInQuotaWindow(KafkaPrincipal principal, String clientId) {
        Index i = index();
        if (i.limits().isEmpty()) {
            return Double.MAX_VALUE;
        }
        Double limit = resolve(i.limits(), userName(principal), clientId == null ? "" : clientId).limit();
        return limit == null ? Double.MAX_VALUE : limit * (samples - 1) * windowSeconds;
    }

    /** Apache's throttleTime: the delay X with O × W / (W + X) = T, over the rate's own window. */
    private static long throttleTimeMs(QuotaViolationException e, long nowMs) {
        KafkaMetric metric = e.metric();
        long window = ((Rate) metric.measurable()).windowSize(metric.config(), nowMs);
        return Math.round((e.value() - e.bound()) / e.bound() * window);
    }

    /** The principal's name as quota entities name users (Apache sanitizes both sides alike; kaas compares them unsanitized). */
    private static String userName(KafkaPrincipal principal) {
        return principal.getName();
    }

    /**
     * The sensor the client's usage goes to, or null when no quota applies to it (nothing to
     * measure: Apache would measure against an unbounded quota). Sensors are bounded in number
     * (past {@link #MAX_SENSORS}, clients without one share one per user and quota value) and in name
     * length (long names by digest): client ids are the client's to choose, up to 32 KiB each.
     */
    private Sensor sensor(Index i, KafkaPrincipal principal, String clientId) {
        Resolved r = resolve(i.limits(), userName(principal), clientId == null ? "" : clientId);
        if (r.limit() == null) {
            return null;
        }
        double limit = r.limit();
        String user = bounded(r.user());
        String client = bounded(r.clientId());
        String name = group + "-" + user + ":" + client;
        synchronized (this) {
            Sensor sensor = metrics.getSensor(name);
            if (sensor == null && metrics.metrics().size() >= maxSensors) {
                // Shared per user and quota value: clients of other users do not pay for these.
                client = "*overflow*" + limit;
                name = group + "-overflow-" + user + ":" + limit;
                sensor = metrics.getSensor(name);
            }
            MetricName rateName = metrics.metricName(metricName, group, "", Map.of("user", user, "client-id", client));
            if (sensor == null) {
                sensor = metrics.sensor(name, config(limit), Math.max(SENSOR_EXPIRY_SECONDS, (long) samples * windowSeconds));
                sensor.add(rateName, new Rate(TimeUnit.SECONDS));
            } else {
                KafkaMetric metric = metrics.metric(rateName);
                if (metric != null && (metric.config().quota() == null || metric.config().quota().bound() != limit)) {
                    // The quota changed (AlterClientQuotas): the client's measured rate carries over.
                    metric.config(config(limit));
                }
            }
            return sensor;
        }
    }

    private static String bounded(String name) {
        if (name.length() <= MAX_NAME_CHARS) {
            return name;
        }
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "sha256:" + java.util.HexFormat.of().formatHex(digest);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java 17 runtime", e);
        }
    }

    private MetricConfig config(double limit) {
        return new MetricConfig().timeWindow(windowSeconds, TimeUnit.SECONDS).samples(samples).quota(Quota.upperBound(limit));
    }

    /** Metrics kept (one per sensor, and the registry's own count). */
    int metricCount() {
        return metrics.metrics().size();
    }

    public void close() {
        metrics.close();
    }
}
