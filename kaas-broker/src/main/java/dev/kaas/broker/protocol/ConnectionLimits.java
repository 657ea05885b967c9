package dev.kaas.broker.protocol;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import dev.kaas.common.config.DynamicBrokerConfigs;
import org.apache.kafka.common.config.ConfigException;

/**
 * Open connections per client address (Apache {@code max.connections.per.ip}, with
 * {@code max.connections.per.ip.overrides} for named hosts or addresses) and in all (Apache
 * {@code max.connections}): a connection above a limit is closed as soon as it is accepted,
 * before it can send a byte, as Apache's {@code ConnectionQuotas} closes one above its address's
 * limit. (Above {@code max.connections} Apache instead stops accepting until a connection closes,
 * leaving new ones in the listen backlog; kaas cannot stop its event loops accepting, so it closes
 * them and the client reconnects after its back-off.) Counts span every listener; a listener may
 * have a limit of its own ({@code listener.name.<listener>.max.connections}), enforced the same
 * way. Thread-safe: every event loop shares one instance.
 */
public final class ConnectionLimits {
    /** Why a connection was refused, for the log line. */
    public enum Refusal {
        NONE, PER_IP, TOTAL, LISTENER
    }

    /**
     * The limits in force: replaced whole when the dynamic broker configs change them (as
     * Apache's ConnectionQuotas updates its limits in place); connections already open are kept.
     *
     * @param overrides      per address literal (as {@link #parseOverrides} makes them)
     * @param maxPerListener {@code listener.name.<listener>.max.connections} by upper-cased listener name
     */
    public record Limits(int maxPerIp, Map<String, Integer> overrides, int maxTotal, Map<String, Integer> maxPerListener) {
        public Limits {
            Map<String, Integer> listeners = new HashMap<>();
            maxPerListener.forEach((name, max) -> listeners.put(key(name), max));
            maxPerListener = Map.copyOf(listeners);
            overrides = Map.copyOf(overrides);
        }
    }

    private volatile Limits limits;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<String, Integer> open = new ConcurrentHashMap<>();
    /** Open connections by upper-cased listener name, counted whether or not the listener has a limit (one may be set later). */
    private final ConcurrentHashMap<String, AtomicInteger> perListener = new ConcurrentHashMap<>();

    public ConnectionLimits(int maxPerIp) {
        this(maxPerIp, Map.of(), Integer.MAX_VALUE);
    }

    /** @param overrides per address literal (as {@link #parseOverrides} makes them) */
    public ConnectionLimits(int maxPerIp, Map<String, Integer> overrides, int maxTotal) {
        this(maxPerIp, overrides, maxTotal, Map.of());
    }

    /** @param maxPerListener {@code listener.name.<listener>.max.connections} by listener name (any case) */
    public ConnectionLimits(int maxPerIp, Map<String, Integer> overrides, int maxTotal, Map<String, Integer> maxPerListener) {
        this(new Limits(maxPerIp, overrides, maxTotal, maxPerListener));
    }

    public ConnectionLimits(Limits limits) {
        this.limits = limits;
    }

    public Limits limits() {
        return limits;
    }

    /** New limits for connections from now on; open ones are kept, whatever they exceed. */
    public void update(Limits next) {
        this.limits = next;
    }

    /**
     * Apache's {@code max.connections.per.ip.overrides} ({@code host:count,host:count}), its checks
     * and messages, each host resolved to its address once, when the setting is read (at start-up,
     * or when the dynamic setting changes, as Apache's ConnectionQuotas resolves it): a connection
     * is matched by address.
     */
    public static Map<String, Integer> parseOverrides(String value, int maxPerIp) {
        Map<String, Integer> byHost;
        try {
            byHost = DynamicBrokerConfigs.overrides(value);
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (maxPerIp == 0 && byHost.isEmpty()) {
            throw new IllegalArgumentException("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
        }
        Map<String, Integer> byAddress = new HashMap<>();
        byHost.forEach((host, count) -> {
            try {
                byAddress.put(InetAddress.getByName(host).getHostAddress(), count);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("max.connections.per.ip.overrides: cannot resolve " + host, e);
            }
        });
        return byAddress;
    }

    /** Counts a new connection from {@code ip}; false (and not counted) when a limit is reached. */
    public boolean tryOpen(String ip) {
        return admit(ip) == Refusal.NONE;
    }

    /** As {@link #tryOpen}, saying which limit refused it. */
    public Refusal admit(String ip) {
        return admit(null, ip);
    }

    /** Counts a new connection on {@code listener} (null: none named) from {@code ip}, or says which limit refused it. */
    public Refusal admit(String listener, String ip) {
        Limits now = limits;
        AtomicInteger onListener = listenerCount(listener);
        if (onListener != null && onListener.incrementAndGet() > now.maxPerListener().getOrDefault(key(listener), Integer.MAX_VALUE)) {
            onListener.decrementAndGet();
            return Refusal.LISTENER;
        }
        Refusal refused = admitOnBroker(now, ip);
        if (refused != Refusal.NONE && onListener != null) {
            onListener.decrementAndGet();
        }
        return refused;
    }

    private static String key(String listener) {
        return listener.toUpperCase(java.util.Locale.ROOT);
    }

    private AtomicInteger listenerCount(String listener) {
        return listener == null ? null : perListener.computeIfAbsent(key(listener), k -> new AtomicInteger());
    }

    private Refusal admitOnBroker(Limits now, String ip) {
        if (total.incrementAndGet() > now.maxTotal()) {
            total.decrementAndGet();
            return Refusal.TOTAL;
        }
        int limit = now.overrides().getOrDefault(ip, now.maxPerIp());
        boolean[] admitted = {false};
        open.compute(ip, (k, n) -> {
            int current = n == null ? 0 : n;
            if (current >= limit) {
                return n;
            }
            admitted[0] = true;
            return current + 1;
        });
        if (!admitted[0]) {
            total.decrementAndGet();
            return Refusal.PER_IP;
        }
        return Refusal.NONE;
    }

    /** A counted connection from {@code ip} closed. */
    public void closed(String ip) {
        closed(null, ip);
    }

    /** A counted connection on {@code listener} from {@code ip} closed. */
    public void closed(String listener, String ip) {
        AtomicInteger onListener = listenerCount(listener);
        if (onListener != null) {
            onListener.decrementAndGet();
        }
        open.computeIfPresent(ip, (k, n) -> n <= 1 ? null : n - 1);
        total.decrementAndGet();
    }

    public int open(String ip) {
        return open.getOrDefault(ip, 0);
    }

    public int total() {
        return total.get();
    }

    /** Connections open on {@code listener} (any case). */
    public int openOn(String listener) {
        AtomicInteger n = listenerCount(listener);
        return n == null ? 0 : Math.max(0, n.get());
    }
}
