package dev.kaas.broker.storage;

import dev.kaas.common.config.TopicDefaults;
import java.util.Map;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The effective topic configuration one partition log obeys: the topic's overrides over the
 * broker's defaults over Apache's. Replaced whole when either changes ({@link PartitionLog#updateConfig}).
 */
public record LogConfig(int segmentBytes, long segmentMs, int indexIntervalBytes, int maxMessageBytes,
                        long flushMessages, long flushMs, boolean logAppendTime,
                        long timestampBeforeMaxMs, long timestampAfterMaxMs, boolean compacted,
                        long retentionMs, long retentionBytes, long fileDeleteDelayMs, boolean deletePolicy,
                        long deleteRetentionMs, long minCompactionLagMs, long maxCompactionLagMs, double minCleanableRatio) {

    /** Overrides over Apache's defaults: for tests and tools; a broker resolves with its own defaults. */
    public static LogConfig from(Map<String, String> overrides) {
        return from(TopicDefaults.NONE, overrides);
    }

    public static LogConfig from(TopicDefaults defaults, Map<String, String> overrides) {
        Map<String, Object> e = defaults.effective(overrides);
        return new LogConfig(
                (Integer) e.get(TopicConfig.SEGMENT_BYTES_CONFIG),
                (Long) e.get(TopicConfig.SEGMENT_MS_CONFIG),
                (Integer) e.get(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG),
                (Integer) e.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG),
                (Long) e.get(TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG),
                (Long) e.get(TopicConfig.FLUSH_MS_CONFIG),
                "LogAppendTime".equals(e.get(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG)),
                Math.min((Long) e.get(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG),
                        (Long) e.get(TopicConfig.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_CONFIG)),
                Math.min((Long) e.get(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG),
                        (Long) e.get(TopicConfig.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_CONFIG)),
                String.valueOf(e.get(TopicConfig.CLEANUP_POLICY_CONFIG)).contains(TopicConfig.CLEANUP_POLICY_COMPACT),
                (Long) e.get(TopicConfig.RETENTION_MS_CONFIG),
                (Long) e.get(TopicConfig.RETENTION_BYTES_CONFIG),
                (Long) e.get(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG),
                String.valueOf(e.get(TopicConfig.CLEANUP_POLICY_CONFIG)).contains(TopicConfig.CLEANUP_POLICY_DELETE),
                (Long) e.get(TopicConfig.DELETE_RETENTION_MS_CONFIG),
                (Long) e.get(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG),
                (Long) e.get(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG),
                (Double) e.get(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG));
    }

    public static LogConfig defaults() {
        return from(Map.of());
    }

    /** True when acknowledgements wait for fsync: kaas's default, Apache's {@code flush.messages=1}. */
    public boolean syncEveryAppend() {
        return flushMessages <= 1;
    }
}
