package dev.kaas.broker.protocol;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.utils.Time;

/**
 * Apache's {@code max.connection.creation.rate}, broker-wide and per listener
 * ({@code listener.name.<listener>.max.connection.creation.rate}, KIP-612), as its
 * ConnectionQuotas counts it: each listener's acceptor takes one connection at a time, records
 * it in the broker's rate and its listener's (each a {@link Rate} over {@code quota.window.num}
 * samples of {@code quota.window.size.seconds}), and past either stops for the delay that brings
 * the rate back to the quota (at most one sample) before it serves that connection and takes the
 * next. kaas's event loops cannot stop accepting, so each listener's accepted connections wait in
 * a queue of its own, bounded as Apache's listen backlog is ({@link #BACKLOG}: past it a
 * connection is refused unrecorded), and are served in order when this acceptor would have taken
 * them. Thread-safe: every event loop of every listener shares one instance.
 */
public final class ConnectionCreationRates {
    /** Apache's {@code socket.listen.backlog.size} default: connections waiting for a paused acceptor. */
    static final int BACKLOG = 50;

    /** When to run a task: a Vert.x timer in the broker, a fake clock's in tests. */
    @FunctionalInterface
    public interface Timer {
        void after(long ms, Runnable task);
    }

    /** A listener's acceptor: the connections it has not taken yet, and whether it is paused. */
    private static final class Acceptor {
        Sensor rate;
        final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
        boolean paused;

        Acceptor(Sensor rate) {
            this.rate = rate;
        }
    }

    private final Metrics metrics;
    private final Time time;
    private final Timer timer;
    private final int samples;
    private final int windowSeconds;
    private final long maxDelayMs;
    /** Null while no broker-wide rate applies; replaced by {@link #update}. Guarded by this. */
    private Sensor broker;
    /** Guarded by this. */
    private final Map<String, Sensor> listenerRates = new HashMap<>();
    private final Map<String, Acceptor> acceptors = new HashMap<>();

    /**
     * @param brokerRate    connections per second over every listener ({@link Integer#MAX_VALUE}: none)
     * @param listenerRates connections per second of named listeners (any case)
     */
    public ConnectionCreationRates(int brokerRate, Map<String, Integer> listenerRates, Time time, Timer timer, int samples,
                                   int windowSeconds) {
        this.time = time;
        this.timer = timer;
        this.samples = samples;
        this.windowSeconds = windowSeconds;
        this.maxDelayMs = TimeUnit.SECONDS.toMillis(windowSeconds);
        this.metrics = new Metrics(new MetricConfig(), List.of(), time, false);
        update(brokerRate, listenerRates);
    }

    /**
     * New rates from now on (the dynamic broker configs changed them): a rate that stays keeps
     * what it has measured, with its new quota, as Apache's ConnectionQuotas updates its sensors'
     * quotas in place; a lifted one ({@link Integer#MAX_VALUE}) stops measuring. A paused acceptor
     * resumes when its delay ends.
     */
    public synchronized void update(int brokerRate, Map<String, Integer> listenerRates) {
        broker = rated(broker, "broker", brokerRate);
        Map<String, Integer> byKey = new HashMap<>();
        listenerRates.forEach((name, rate) -> byKey.put(key(name), rate));
        for (String k : new java.util.HashSet<>(this.listenerRates.keySet())) {
            byKey.putIfAbsent(k, Integer.MAX_VALUE);
        }
        byKey.forEach((k, rate) -> {
            Sensor s = rated(this.listenerRates.get(k), "listener-" + k, rate);
            if (s == null) {
                this.listenerRates.remove(k);
            } else {
                this.listenerRates.put(k, s);
            }
        });
        acceptors.forEach((k, a) -> a.rate = this.listenerRates.get(k));
    }

    /** {@code current} with {@code rate} as its quota, a new sensor if there was none, or null for no rate. */
    private Sensor rated(Sensor current, String name, int rate) {
        if (rate == Integer.MAX_VALUE) {
            if (current != null) {
                metrics.removeSensor(current.name());
            }
            return null;
        }
        if (current == null) {
            return sensor(name, rate);
        }
        KafkaMetric m = metrics.metric(metrics.metricName("connection-accept-rate", "connection-quotas", Map.of("entity", name)));
        m.config(quotaConfig(rate));
        return current;
    }

    private MetricConfig quotaConfig(int rate) {
        return new MetricConfig().timeWindow(windowSeconds, TimeUnit.SECONDS).samples(samples).quota(new Quota(rate, true));
    }

    private static String key(String listener) {
        return listener.toUpperCase(Locale.ROOT);
    }

    private Sensor sensor(String name, int rate) {
        Sensor s = metrics.sensor(name, quotaConfig(rate));
        s.add(metrics.metricName("connection-accept-rate", "connection-quotas", Map.of("entity", name)), new Rate());
        return s;
    }

    /** Whether any rate applies to {@code listener}; if not, its connections are served at once and nothing is recorded. */
    public synchronized boolean limits(String listener) {
        return broker != null || listenerRates.containsKey(key(listener));
    }

    /**
     * Queues a connection accepted on {@code listener}: {@code serve} runs when the listener's
     * acceptor takes it (at once within the rates and with nobody waiting). False when the
     * listener's backlog is full: the connection is to be closed, and nothing was recorded.
     */
    public boolean offer(String listener, Runnable serve) {
        List<Runnable> now;
        synchronized (this) {
            Acceptor a = acceptors.computeIfAbsent(key(listener), k -> new Acceptor(listenerRates.get(k)));
            if (a.waiting.size() >= BACKLOG) {
                return false;
            }
            a.waiting.add(serve);
            if (a.paused) {
                return true;
            }
            now = take(a);
        }
        now.forEach(Runnable::run);
        return true;
    }

    /**
     * The acceptor takes waiting connections, recording each, until one is past a rate: that one
     * is served after its delay, and the acceptor takes the next then. Answers what to serve now.
     */
    private List<Runnable> take(Acceptor a) {
        List<Runnable> now = new ArrayList<>();
        while (!a.waiting.isEmpty()) {
            long nowMs = time.milliseconds();
            long delay = Math.max(record(broker, nowMs), record(a.rate, nowMs));
            if (delay > 0) {
                a.paused = true;
                timer.after(delay, () -> resume(a));
                break;
            }
            now.add(a.waiting.poll());
        }
        return now;
    }

    private void resume(Acceptor a) {
        List<Runnable> now = new ArrayList<>();
        synchronized (this) {
            a.paused = false;
            Runnable held = a.waiting.poll();
            if (held != null) {
                now.add(held);
            }
            now.addAll(take(a));
        }
        now.forEach(Runnable::run);
    }

    /**
     * A connection its address's {@code connection_creation_rate} refused after all: taken back from
     * the broker's and the listener's rates, as Apache's updateListenerMetrics takes it back.
     */
    public synchronized void unrecord(String listener) {
        long nowMs = time.milliseconds();
        if (broker != null) {
            broker.record(-1.0, nowMs, false);
        }
        Sensor own = listenerRates.get(key(listener));
        if (own != null) {
            own.record(-1.0, nowMs, false);
        }
    }

    /** Apache's recordAndGetThrottleTimeMs: the connection is counted either way; the delay bounded to one sample. */
    private long record(Sensor sensor, long nowMs) {
        if (sensor == null) {
            return 0;
        }
        try {
            sensor.record(1.0, nowMs);
            return 0;
        } catch (QuotaViolationException e) {
            KafkaMetric metric = e.metric();
            long window = ((Rate) metric.measurable()).windowSize(metric.config(), nowMs);
            long delay = Math.round((e.value() - e.bound()) / e.bound() * window);
            return Math.min(maxDelayMs, Math.max(0, delay));
        }
    }
}
