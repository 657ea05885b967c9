package dev.kaas.broker.quota;

import dev.kaas.common.model.ClientQuota;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.MetricName;
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
 * One kind of client quota ({@code producer_byte_rate} or {@code consumer_byte_rate}) as Apache
 * 3.7's ClientQuotaManager enforces it, on kafka-clients' own metrics (a {@link Rate} over
 * {@code quota.window.num} samples of {@code quota.window.size.seconds}): a client's usage is
 * recorded in the sensor its quota entity resolves to (Apache's eight-level precedence, so clients
 * sharing an entity share its rate), and a violation yields the delay that brings the rate back
 * to the quota, X = (O - T) / T × W, which the broker answers with as {@code throttle_time_ms}
 * and for which it stops reading the connection (KIP-219). Each broker measures what it serves,
 * as each Apache broker does. Thread-safe.
 */
public final class QuotaManager {
    /** Apache's InactiveSensorExpirationTimeSeconds: a client quiet this long is forgotten. */
    static final long SENSOR_EXPIRY_SECONDS = 3600;

    private final String key;
    private final String group;
    private final Supplier<List<ClientQuota>> quotas;
    private final Metrics metrics;
    private final int samples;
    private final int windowSeconds;
    private volatile Index index = new Index(null, Map.of());

    /** The quotas of this kind by entity ({@code user}, {@code client-id}; a null name is the default). */
    private record Index(List<ClientQuota> source, Map<Map<String, String>, Double> limits) {
    }

    /** The sensor a client's usage goes to, and the quota that applies to it (null: none). */
    record Resolved(String user, String clientId, Double limit) {
    }

    public QuotaManager(String key, String group, Supplier<List<ClientQuota>> quotas, Time time, int samples, int windowSeconds) {
        this.key = key;
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
            Map<Map<String, String>, Double> limits = new HashMap<>();
            for (ClientQuota q : current) {
                Double v = q.values().get(key);
                if (v != null && !q.entity().containsKey(ClientQuota.IP)) {
                    limits.put(q.entity(), v);
                }
            }
            i = new Index(current, limits);
            index = i;
        }
        return i;
    }

    /** Whether any entity has a quota of this kind: if not, nothing is recorded (Apache's quotasEnabled). */
    public boolean enabled() {
        return !index().limits().isEmpty();
    }

    /** Apache's DefaultQuotaCallback: which sensor (user, client-id) a client's usage is counted in, and its quota. */
    static Resolved resolve(Map<Map<String, String>, Double> limits, String user, String clientId) {
        Map<String, String> u = userEntity(user);
        Map<String, String> du = userEntity(null);
        if (limits.containsKey(both(user, clientId)) || limits.containsKey(both(user, null))) {
            return new Resolved(user, clientId, first(limits, both(user, clientId), both(user, null), both(null, clientId), both(null, null)));
        }
        if (limits.containsKey(u)) {
            return new Resolved(user, "", limits.get(u));
        }
        if (limits.containsKey(both(null, clientId)) || limits.containsKey(both(null, null))) {
            return new Resolved(user, clientId, first(limits, both(user, clientId), both(user, null), both(null, clientId), both(null, null)));
        }
        if (limits.containsKey(du)) {
            return new Resolved(user, "", limits.get(du));
        }
        return new Resolved("", clientId, first(limits, client(clientId), client(null)));
    }

    @SafeVarargs
    private static Double first(Map<Map<String, String>, Double> limits, Map<String, String>... entities) {
        for (Map<String, String> e : entities) {
            Double v = limits.get(e);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private static Map<String, String> userEntity(String name) {
        Map<String, String> m = new java.util.TreeMap<>();
        m.put(ClientQuota.USER, name);
        return m;
    }

    private static Map<String, String> client(String name) {
        Map<String, String> m = new java.util.TreeMap<>();
        m.put(ClientQuota.CLIENT_ID, name);
        return m;
    }

    private static Map<String, String> both(String user, String clientId) {
        Map<String, String> m = new java.util.TreeMap<>();
        m.put(ClientQuota.USER, user);
        m.put(ClientQuota.CLIENT_ID, clientId);
        return m;
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
        try {
            sensor.record(value, nowMs, true);
            return 0;
        } catch (QuotaViolationException e) {
            return (int) Math.min(Integer.MAX_VALUE, throttleTimeMs(e, nowMs));
        }
    }

    /** Takes back a recorded value: a throttled Fetch sends nothing (Apache's unrecordQuotaSensor). */
    public void unrecord(KafkaPrincipal principal, String clientId, double value, long nowMs) {
        Index i = index();
        if (!i.limits().isEmpty()) {
            sensor(i, principal, clientId).record(-value, nowMs, false);
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

    private Sensor sensor(Index i, KafkaPrincipal principal, String clientId) {
        Resolved r = resolve(i.limits(), userName(principal), clientId == null ? "" : clientId);
        double limit = r.limit() == null ? Long.MAX_VALUE : r.limit();
        String name = group + "-" + r.user() + ":" + r.clientId();
        synchronized (this) {
            Sensor sensor = metrics.getSensor(name);
            MetricName rateName = metrics.metricName("byte-rate", group, "", Map.of("user", r.user(), "client-id", r.clientId()));
            if (sensor == null) {
                sensor = metrics.sensor(name, config(limit), SENSOR_EXPIRY_SECONDS);
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

    private MetricConfig config(double limit) {
        return new MetricConfig().timeWindow(windowSeconds, TimeUnit.SECONDS).samples(samples).quota(Quota.upperBound(limit));
    }

    public void close() {
        metrics.close();
    }
}
