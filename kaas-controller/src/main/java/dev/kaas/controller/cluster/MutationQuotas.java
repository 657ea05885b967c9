package dev.kaas.controller.cluster;

import dev.kaas.common.model.ClientQuota;
import dev.kaas.proto.MutationClient;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.TokenBucket;
import org.apache.kafka.common.utils.Sanitizer;
import org.apache.kafka.common.utils.Time;

/**
 * {@code controller_mutation_rate} (KIP-599) as Apache 3.7's ControllerMutationQuotaManager
 * enforces it, on the active controller, so the rate is the whole cluster's: each topic created
 * or deleted, or partition added, spends one token per partition from the bucket the client's
 * quota entity resolves to (Apache's eight-level precedence), which refills at the quota's rate
 * up to quota × {@code controller.quota.window.num} × {@code controller.quota.window.size.seconds}.
 * A strict request (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+) has a change refused
 * with THROTTLING_QUOTA_EXCEEDED once the bucket is below zero; an older one is always served and
 * the client only delayed. Either way the answer carries the time until the bucket is back at zero,
 * as {@code throttle_time_ms}. The buckets live in this controller's memory: a new controller starts
 * them full, as a restarted Apache controller does. Runs on the controller's loop; the clock is
 * injected, so the arithmetic is tested without waiting.
 */
final class MutationQuotas {
    static final String KEY = "controller_mutation_rate";
    /**
     * A client quiet this long is forgotten, Apache's hour: a refused change records nothing, so a
     * shorter one would hand a deeply spent bucket back full. Names are the client's own choice, so
     * they are bounded in length and, past {@link #MAX_SENSORS}, new clients share one bucket per
     * user and quota.
     */
    static final long SENSOR_EXPIRY_SECONDS = 3600;
    static final int MAX_NAME_CHARS = 256;
    static final int MAX_SENSORS = 20_000;

    /** One request's quota (Apache's ControllerMutationQuota). */
    interface Recorder {
        /** Spends {@code partitions} tokens; false: refused (a strict request past its quota), nothing spent. */
        boolean record(int partitions);

        /** How long the client must wait: the time until its bucket is back at zero, as of now. */
        int throttleTimeMs();
    }

    static final Recorder UNBOUNDED = new Recorder() {
        @Override
        public boolean record(int partitions) {
            return true;
        }

        @Override
        public int throttleTimeMs() {
            return 0;
        }
    };

    private final Supplier<List<ClientQuota>> quotas;
    private final LongSupplier clock;
    private final int samples;
    private final int windowSeconds;
    private final Metrics metrics;
    private List<ClientQuota> indexed;
    private Map<Map<String, String>, Double> limits = Map.of();

    MutationQuotas(Supplier<List<ClientQuota>> quotas, LongSupplier clock, int samples, int windowSeconds) {
        this.quotas = quotas;
        this.clock = clock;
        this.samples = samples;
        this.windowSeconds = windowSeconds;
        this.metrics = new Metrics(new MetricConfig(), List.of(), new ClockTime(clock), true);
    }

    /** The quota of the client a call names; {@link #UNBOUNDED} without a client or a quota for it (Apache's quotasEnabled). */
    synchronized Recorder forClient(MutationClient client) {
        if (client == null) {
            return UNBOUNDED;
        }
        List<ClientQuota> current = quotas.get();
        if (current != indexed) {
            limits = ClientQuota.limits(current, KEY);
            indexed = current;
        }
        if (limits.isEmpty()) {
            return UNBOUNDED;
        }
        ClientQuota.Resolved r = ClientQuota.resolve(limits, client.getUser(), client.getClientId());
        if (r.limit() == null) {
            return UNBOUNDED;
        }
        Sensor sensor = sensor(r);
        return new Bucket(sensor, client.getStrict());
    }

    private Sensor sensor(ClientQuota.Resolved r) {
        String user = bounded(r.user());
        String client = bounded(r.clientId());
        // Sanitized, as Apache's: a ':' in a user name must not make two clients' names one.
        String name = "ControllerMutation-" + Sanitizer.sanitize(user) + ":" + Sanitizer.sanitize(client);
        MetricConfig config = new MetricConfig().timeWindow(windowSeconds, TimeUnit.SECONDS).samples(samples)
                .quota(Quota.upperBound(r.limit()));
        Sensor sensor = metrics.getSensor(name);
        if (sensor == null && metrics.metrics().size() >= MAX_SENSORS) {
            client = "*overflow*" + r.limit();
            name = "ControllerMutation-overflow-" + Sanitizer.sanitize(user) + ":" + r.limit();
            sensor = metrics.getSensor(name);
        }
        var metricName = metrics.metricName("tokens", "ControllerMutation", "", Map.of("user", user, "client-id", client));
        if (sensor == null) {
            sensor = metrics.sensor(name, config, Math.max(SENSOR_EXPIRY_SECONDS, (long) samples * windowSeconds));
            sensor.add(metricName, new TokenBucket());
        } else {
            var metric = metrics.metric(metricName);
            if (metric != null && metric.config().quota().bound() != r.limit()) {
                // The quota changed (AlterClientQuotas): the bucket keeps its tokens, at the new rate.
                metric.config(config);
            }
        }
        return sensor;
    }

    synchronized void close() {
        metrics.close();
    }

    /** Apache's ControllerMutationQuotaManager.throttleTimeMs: the time the bucket needs to climb back to zero. */
    static long throttleTimeMs(QuotaViolationException e) {
        return Math.round(-e.value() / e.bound() * 1000);
    }

    /**
     * Apache's StrictControllerMutationQuota (a change is refused once the bucket is below zero; one
     * change may take it below) and PermissiveControllerMutationQuota (always served, the client delayed).
     */
    private final class Bucket implements Recorder {
        final Sensor sensor;
        final boolean strict;
        long lastThrottleMs;
        long lastRecordedMs;

        Bucket(Sensor sensor, boolean strict) {
            this.sensor = sensor;
            this.strict = strict;
        }

        @Override
        public boolean record(int partitions) {
            long now = clock.getAsLong();
            try {
                synchronized (MutationQuotas.this) {
                    if (strict) {
                        sensor.checkQuotas(now);
                    }
                    sensor.record(partitions, now, !strict);
                }
                return true;
            } catch (QuotaViolationException e) {
                lastThrottleMs = MutationQuotas.throttleTimeMs(e);
                lastRecordedMs = now;
                return !strict;
            }
        }

        @Override
        public int throttleTimeMs() {
            return (int) Math.min(Integer.MAX_VALUE, Math.max(0, lastThrottleMs - (clock.getAsLong() - lastRecordedMs)));
        }
    }

    private static String bounded(String name) {
        if (name.length() <= MAX_NAME_CHARS) {
            return name;
        }
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(name.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java 17 runtime", e);
        }
    }

    /** kafka-clients' Time over the controller's clock. */
    private record ClockTime(LongSupplier clock) implements Time {
        @Override
        public long milliseconds() {
            return clock.getAsLong();
        }

        @Override
        public long nanoseconds() {
            return TimeUnit.MILLISECONDS.toNanos(clock.getAsLong());
        }

        @Override
        public void sleep(long ms) {
            throw new UnsupportedOperationException("the controller's quotas never sleep");
        }

        @Override
        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("the controller's quotas never wait");
        }
    }
}
