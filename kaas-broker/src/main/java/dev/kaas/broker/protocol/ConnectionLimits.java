package dev.kaas.broker.protocol;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Open connections per client address (Apache {@code max.connections.per.ip}): a connection
 * above the limit is closed as soon as it is accepted, before it can send a byte, as Apache's
 * {@code ConnectionQuotas} does. Counts span every listener. Thread-safe: every event loop
 * shares one instance.
 */
public final class ConnectionLimits {
    private final int maxPerIp;
    private final ConcurrentHashMap<String, Integer> open = new ConcurrentHashMap<>();

    public ConnectionLimits(int maxPerIp) {
        this.maxPerIp = maxPerIp;
    }

    /** Counts a new connection from {@code ip}; false (and not counted) when that address is at its limit. */
    public boolean tryOpen(String ip) {
        boolean[] admitted = {false};
        open.compute(ip, (k, n) -> {
            int current = n == null ? 0 : n;
            if (current >= maxPerIp) {
                return n;
            }
            admitted[0] = true;
            return current + 1;
        });
        return admitted[0];
    }

    /** A counted connection from {@code ip} closed. */
    public void closed(String ip) {
        open.computeIfPresent(ip, (k, n) -> n <= 1 ? null : n - 1);
    }

    public int open(String ip) {
        return open.getOrDefault(ip, 0);
    }
}
