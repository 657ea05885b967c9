package dev.kaas.broker.data;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.storage.LogCleaner;
import dev.kaas.common.config.DynamicBrokerConfigs;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;

/**
 * The broker's log cleaner settings in force: the static ones ({@code kaas.broker.log-cleaner-*},
 * server.properties' {@code log.cleaner.*}) under the dynamic ones (the cluster's defaults, then
 * this broker's own), as Apache's {@code CleanerConfig}. Pure.
 *
 * @param threads        {@code log.cleaner.threads}; a broker with the cleaner disabled runs none
 * @param dedupeBytes    {@code log.cleaner.dedupe.buffer.size}, shared out among the threads
 * @param loadFactor     {@code log.cleaner.io.buffer.load.factor}
 * @param ioBufferBytes  {@code log.cleaner.io.buffer.size}, shared out among the threads
 * @param ioMaxBytesPerSecond {@code log.cleaner.io.max.bytes.per.second}, each thread's
 * @param backoffMs      {@code log.cleaner.backoff.ms}
 */
record CleanerSettings(boolean enabled, int threads, long dedupeBytes, double loadFactor, int ioBufferBytes,
                       double ioMaxBytesPerSecond, long backoffMs) {

    static CleanerSettings of(BrokerConfig.Broker b) {
        return new CleanerSettings(b.logCleanerEnable(), b.logCleanerThreads(), b.logCleanerDedupeBufferSize(),
                b.logCleanerIoBufferLoadFactor(), b.logCleanerIoBufferSize(), b.logCleanerIoMaxBytesPerSecond(),
                b.logCleanerBackoff().toMillis());
    }

    /** The threads that run: Apache's threads setting, at least one while the cleaner is enabled. */
    int runningThreads() {
        return enabled ? Math.max(1, threads) : 0;
    }

    /** One thread's share, as Apache's {@code LogCleaner} shares the buffers out. */
    LogCleaner.Settings perThread() {
        int n = Math.max(1, runningThreads());
        return new LogCleaner.Settings((int) Math.min(Integer.MAX_VALUE - 64, dedupeBytes / n), Math.max(1024, ioBufferBytes / n / 2),
                ioMaxBytesPerSecond, loadFactor);
    }

    /**
     * These settings with the dynamic layers over them. A dynamic value that does not parse (the
     * controller checked it; another kaas version's rules) is left out, as Apache leaves out an
     * invalid dynamic value.
     */
    CleanerSettings withDynamic(Map<String, String> clusterDefault, Map<String, String> broker) {
        CleanerSettings s = this;
        for (Map<String, String> layer : java.util.List.of(clusterDefault, broker)) {
            s = s.with(layer);
        }
        return s;
    }

    private CleanerSettings with(Map<String, String> layer) {
        int t = threads;
        long dedupe = dedupeBytes;
        double load = loadFactor;
        int io = ioBufferBytes;
        double rate = ioMaxBytesPerSecond;
        long backoff = backoffMs;
        for (var e : layer.entrySet()) {
            if (!DynamicBrokerConfigs.CLEANER.configKeys().containsKey(e.getKey())) {
                continue;
            }
            Object v;
            try {
                v = DynamicBrokerConfigs.cleanerValue(e.getKey(), e.getValue());
            } catch (ConfigException invalid) {
                continue;
            }
            switch (e.getKey()) {
                case "log.cleaner.threads" -> t = (Integer) v;
                case "log.cleaner.dedupe.buffer.size" -> dedupe = (Long) v;
                case "log.cleaner.io.buffer.load.factor" -> load = (Double) v;
                case "log.cleaner.io.buffer.size" -> io = (Integer) v;
                case "log.cleaner.io.max.bytes.per.second" -> rate = (Double) v;
                case "log.cleaner.backoff.ms" -> backoff = (Long) v;
                default -> throw new IllegalStateException("a cleaner setting without a field: " + e.getKey());
            }
        }
        return new CleanerSettings(enabled, t, dedupe, load, io, rate, backoff);
    }

    /**
     * What no cleaner could start with: fewer than one thread, a load factor outside (0, 1], a
     * key map of fewer than two usable slots per thread (kaas refuses these where Apache would fail
     * later). Null: these settings may run.
     */
    String startError() {
        if (threads < 1) {
            return "Log cleaner threads should be at least 1";
        }
        if (!(loadFactor > 0 && loadFactor <= 1)) {
            return "log.cleaner.io.buffer.load.factor must be more than 0 and at most 1, not " + loadFactor;
        }
        LogCleaner.Settings each = perThread();
        if (each.dedupeBufferBytes() / 24 * each.loadFactor() <= 1) {
            return "log.cleaner.dedupe.buffer.size of " + dedupeBytes + " bytes leaves each of " + runningThreads()
                    + " cleaner threads too small a key map: each key takes 24 bytes";
        }
        return null;
    }

    /**
     * Apache's {@code LogCleaner.validateReconfiguration}, from these settings to {@code next}: the
     * thread count at least 1 and within half to double of the current one, then
     * {@link #startError}. Null: {@code next} may be applied.
     */
    String reconfigurationError(CleanerSettings next) {
        if (next.threads < 1) {
            return "Log cleaner threads should be at least 1";
        }
        if (next.threads < threads / 2) {
            return "Log cleaner threads cannot be reduced to less than half the current value " + threads;
        }
        if (next.threads > threads * 2) {
            return "Log cleaner threads cannot be increased to more than double the current value " + threads;
        }
        return next.startError();
    }
}
