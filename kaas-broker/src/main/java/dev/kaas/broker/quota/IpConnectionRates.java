package dev.kaas.broker.quota;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.ConnectionRates;
import dev.kaas.common.model.ClientQuota;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.utils.Time;

/**
 * {@code connection_creation_rate} of {@code ip} entities (KIP-612) as Apache 3.7's
 * ConnectionQuotas enforces it: the quota of the address's own entity, else of the default ip
 * entity, else none; each accepted connection is counted in the address's rate over
 * {@code quota.window.num} × {@code quota.window.size.seconds}; one that would exceed it is not
 * counted and is closed after the delay that brings the rate back to the quota, at most one
 * window ({@code QuotaUtils.boundedThrottleTime}). On the quotas of the assignment this broker
 * applied last; each broker counts what it accepts, as each Apache broker does.
 */
@Singleton
public class IpConnectionRates implements ConnectionRates {
    static final String KEY = "connection_creation_rate";
    static final long SENSOR_EXPIRY_SECONDS = 300;
    /** Addresses measured at once; past it, new addresses share one measurement per quota (clients choose their addresses, IPv6 offers plenty). */
    static final int MAX_SENSORS = 20_000;

    private final Supplier<List<ClientQuota>> quotas;
    private final Time time;
    private final int samples;
    private final int windowSeconds;
    private final Metrics metrics;
    private List<ClientQuota> indexed;
    /** By address (normalized), null for the default entity. */
    private Map<String, Double> limits = Map.of();

    @Inject
    public IpConnectionRates(ClusterView view, BrokerConfig config) {
        this(() -> view.assignment().clientQuotas(), Time.SYSTEM, config.broker().quotaWindowNum(), config.broker().quotaWindowSizeSeconds());
    }

    IpConnectionRates(Supplier<List<ClientQuota>> quotas, Time time, int samples, int windowSeconds) {
        this.quotas = quotas;
        this.time = time;
        this.samples = samples;
        this.windowSeconds = windowSeconds;
        this.metrics = new Metrics(new MetricConfig(), List.of(), time, true);
    }

    /** An address literal as Apache compares them (InetAddress equality): IPv6 in one spelling. */
    static String normalized(String literal) {
        try {
            return InetAddress.getByName(literal).getHostAddress();
        } catch (UnknownHostException | RuntimeException e) {
            return literal;
        }
    }

    private Map<String, Double> limits() {
        List<ClientQuota> current = quotas.get();
        if (current != indexed) {
            Map<String, Double> next = new HashMap<>();
            for (ClientQuota q : current) {
                Double v = q.values().get(KEY);
                if (v != null && q.entity().size() == 1 && q.entity().containsKey(ClientQuota.IP)) {
                    String ip = q.entity().get(ClientQuota.IP);
                    // Only address literals are accepted (ClientQuotaChanges), so this never asks DNS.
                    next.put(ip == null ? null : normalized(ip), v);
                }
            }
            limits = next;
            indexed = current;
        }
        return limits;
    }

    @Override
    public synchronized long throttleMs(String ip) {
        Map<String, Double> l = limits();
        if (l.isEmpty()) {
            return 0;
        }
        String address = normalized(ip);
        Double limit = l.containsKey(address) ? l.get(address) : l.get(null);
        if (limit == null) {
            return 0;
        }
        Sensor sensor = sensor(address, limit);
        long now = time.milliseconds();
        try {
            sensor.record(1.0, now, true);
            return 0;
        } catch (QuotaViolationException e) {
            // Not accepted, so not counted (Apache's unrecord).
            sensor.record(-1.0, now, false);
            long window = ((Rate) e.metric().measurable()).windowSize(e.metric().config(), now);
            return Math.max(1, Math.min(Math.round((e.value() - e.bound()) / e.bound() * window), TimeUnit.SECONDS.toMillis(windowSeconds)));
        }
    }

    private Sensor sensor(String address, double limit) {
        String name = "ConnectionRate-" + address;
        Sensor sensor = metrics.getSensor(name);
        if (sensor == null && metrics.metrics().size() >= MAX_SENSORS) {
            name = "ConnectionRate-overflow-" + limit;
            address = "*overflow*" + limit;
            sensor = metrics.getSensor(name);
        }
        var metricName = metrics.metricName("connection-creation-rate", "ConnectionQuotas", "", Map.of("ip", address));
        MetricConfig config = new MetricConfig().timeWindow(windowSeconds, TimeUnit.SECONDS).samples(samples).quota(Quota.upperBound(limit));
        if (sensor == null) {
            sensor = metrics.sensor(name, config, Math.max(SENSOR_EXPIRY_SECONDS, (long) samples * windowSeconds));
            sensor.add(metricName, new Rate(TimeUnit.SECONDS));
        } else {
            KafkaMetric metric = metrics.metric(metricName);
            if (metric != null && metric.config().quota().bound() != limit) {
                // The quota changed (AlterClientQuotas): the measured rate carries over.
                metric.config(config);
            }
        }
        return sensor;
    }

    void onStop(@Observes ShutdownEvent ev) {
        metrics.close();
    }
}
