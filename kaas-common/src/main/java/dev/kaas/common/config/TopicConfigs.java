package dev.kaas.common.config;

import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;

import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.ValidString;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.Records;

/**
 * Apache 3.7's topic-level configuration keys, types, validators and defaults, in one place for
 * the controller (validating CreateTopics) and the broker (resolving effective values,
 * DescribeConfigs). One deliberate difference, documented in src/docs/durability.md: the broker
 * default for {@code flush.messages} is 1, so that {@code acks=1/all} mean fsynced.
 */
public final class TopicConfigs {
    /** kaas's default for {@code log.flush.interval.messages}: fsync before acknowledging. */
    public static final long DEFAULT_FLUSH_MESSAGES = 1L;

    public static final ConfigDef DEF = new ConfigDef()
            .define(TopicConfig.SEGMENT_BYTES_CONFIG, Type.INT, 1024 * 1024 * 1024, atLeast(Records.LOG_OVERHEAD + 14), Importance.MEDIUM, TopicConfig.SEGMENT_BYTES_DOC)
            .define(TopicConfig.SEGMENT_MS_CONFIG, Type.LONG, 7 * 24 * 3600 * 1000L, atLeast(1), Importance.MEDIUM, TopicConfig.SEGMENT_MS_DOC)
            .define(TopicConfig.SEGMENT_JITTER_MS_CONFIG, Type.LONG, 0L, atLeast(0), Importance.MEDIUM, TopicConfig.SEGMENT_JITTER_MS_DOC)
            .define(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG, Type.INT, 10 * 1024 * 1024, atLeast(4), Importance.MEDIUM, TopicConfig.SEGMENT_INDEX_BYTES_DOC)
            .define(TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG, Type.LONG, DEFAULT_FLUSH_MESSAGES, atLeast(1), Importance.MEDIUM, TopicConfig.FLUSH_MESSAGES_INTERVAL_DOC)
            .define(TopicConfig.FLUSH_MS_CONFIG, Type.LONG, Long.MAX_VALUE, atLeast(0), Importance.MEDIUM, TopicConfig.FLUSH_MS_DOC)
            .define(TopicConfig.RETENTION_BYTES_CONFIG, Type.LONG, -1L, Importance.MEDIUM, TopicConfig.RETENTION_BYTES_DOC)
            .define(TopicConfig.RETENTION_MS_CONFIG, Type.LONG, 7 * 24 * 3600 * 1000L, atLeast(-1), Importance.MEDIUM, TopicConfig.RETENTION_MS_DOC)
            .define(TopicConfig.REMOTE_LOG_STORAGE_ENABLE_CONFIG, Type.BOOLEAN, false, Importance.MEDIUM, TopicConfig.REMOTE_LOG_STORAGE_ENABLE_DOC)
            .define(TopicConfig.LOCAL_LOG_RETENTION_MS_CONFIG, Type.LONG, -2L, atLeast(-2), Importance.MEDIUM, TopicConfig.LOCAL_LOG_RETENTION_MS_DOC)
            .define(TopicConfig.LOCAL_LOG_RETENTION_BYTES_CONFIG, Type.LONG, -2L, atLeast(-2), Importance.MEDIUM, TopicConfig.LOCAL_LOG_RETENTION_BYTES_DOC)
            .define(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Type.INT, 1024 * 1024 + Records.LOG_OVERHEAD, atLeast(0), Importance.MEDIUM, TopicConfig.MAX_MESSAGE_BYTES_DOC)
            .define(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG, Type.INT, 4096, atLeast(0), Importance.MEDIUM, TopicConfig.INDEX_INTERVAL_BYTES_DOC)
            .define(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG, Type.LONG, 60000L, atLeast(0), Importance.MEDIUM, TopicConfig.FILE_DELETE_DELAY_MS_DOC)
            .define(TopicConfig.DELETE_RETENTION_MS_CONFIG, Type.LONG, 24 * 3600 * 1000L, atLeast(0), Importance.MEDIUM, TopicConfig.DELETE_RETENTION_MS_DOC)
            .define(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG, Type.LONG, 0L, atLeast(0), Importance.MEDIUM, TopicConfig.MIN_COMPACTION_LAG_MS_DOC)
            .define(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG, Type.LONG, Long.MAX_VALUE, atLeast(1), Importance.MEDIUM, TopicConfig.MAX_COMPACTION_LAG_MS_DOC)
            .define(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG, Type.DOUBLE, 0.5, between(0, 1), Importance.MEDIUM, TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_DOC)
            .define(TopicConfig.CLEANUP_POLICY_CONFIG, Type.LIST, TopicConfig.CLEANUP_POLICY_DELETE,
                    ConfigDef.ValidList.in(TopicConfig.CLEANUP_POLICY_COMPACT, TopicConfig.CLEANUP_POLICY_DELETE), Importance.MEDIUM, TopicConfig.CLEANUP_POLICY_DOC)
            .define(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, Type.BOOLEAN, false, Importance.MEDIUM, TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_DOC)
            .define(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Type.INT, 1, atLeast(1), Importance.MEDIUM, TopicConfig.MIN_IN_SYNC_REPLICAS_DOC)
            .define(TopicConfig.COMPRESSION_TYPE_CONFIG, Type.STRING, "producer",
                    ValidString.in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), Importance.MEDIUM, TopicConfig.COMPRESSION_TYPE_DOC)
            .define(TopicConfig.PREALLOCATE_CONFIG, Type.BOOLEAN, false, Importance.MEDIUM, TopicConfig.PREALLOCATE_DOC)
            .define(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG, Type.STRING, "3.0-IV1", Importance.MEDIUM, TopicConfig.MESSAGE_FORMAT_VERSION_DOC)
            .define(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, Type.STRING, "CreateTime",
                    ValidString.in("CreateTime", "LogAppendTime"), Importance.MEDIUM, TopicConfig.MESSAGE_TIMESTAMP_TYPE_DOC)
            .define(TopicConfig.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_CONFIG, Type.LONG, Long.MAX_VALUE, atLeast(0), Importance.MEDIUM, TopicConfig.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_DOC)
            .define(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, Type.LONG, Long.MAX_VALUE, atLeast(0), Importance.MEDIUM, TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_DOC)
            .define(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, Type.LONG, Long.MAX_VALUE, atLeast(0), Importance.MEDIUM, TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_DOC)
            .define(TopicConfig.MESSAGE_DOWNCONVERSION_ENABLE_CONFIG, Type.BOOLEAN, true, Importance.LOW, TopicConfig.MESSAGE_DOWNCONVERSION_ENABLE_DOC)
            .define("leader.replication.throttled.replicas", Type.LIST, "", Importance.MEDIUM, "Unused in kaas: there is no replication.")
            .define("follower.replication.throttled.replicas", Type.LIST, "", Importance.MEDIUM, "Unused in kaas: there is no replication.");

    private TopicConfigs() {
    }

    public static Set<String> names() {
        return DEF.names();
    }

    /** As {@link #validate(Map, Map)} with no broker defaults: a key the topic does not set has Apache's default. */
    public static String validate(Map<String, String> overrides) {
        return validate(overrides, Map.of());
    }

    /**
     * Validates user overrides as Apache's CreateTopics and AlterConfigs do on the controller
     * ({@code LogConfig.validate} over the controller's own log settings): unknown keys and bad
     * values are INVALID_CONFIG, and the rule across keys ({@code min.compaction.lag.ms} at most
     * {@code max.compaction.lag.ms}) reads a key the topic does not override from
     * {@code brokerDefaults}, then Apache's default. Returns a description of the first problem, or
     * null.
     *
     * @param brokerDefaults the broker-level values under their topic keys ({@link TopicDefaults#values()})
     */
    public static String validate(Map<String, String> overrides, Map<String, String> brokerDefaults) {
        for (String key : overrides.keySet()) {
            if (!DEF.names().contains(key)) {
                return "Unknown topic config name: " + key;
            }
            if (overrides.get(key) == null) {
                return "Null value not supported for topic configs: " + key;
            }
        }
        Map<String, Object> values;
        try {
            DEF.parse(overrides);
            Map<String, String> combined = new java.util.HashMap<>(brokerDefaults);
            combined.putAll(overrides);
            values = DEF.parse(combined);
        } catch (ConfigException e) {
            return e.getMessage();
        }
        // Apache's LogConfig.validateValues and validateRemoteStorageOnlyIfSystemEnabled (kaas has no remote tier).
        String conflict = lagConflict(values);
        if (conflict != null) {
            return conflict;
        }
        if (Boolean.TRUE.equals(values.get(TopicConfig.REMOTE_LOG_STORAGE_ENABLE_CONFIG))) {
            return "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.";
        }
        return null;
    }

    /** Apache's {@code LogConfig.validateValues}, on parsed values: null when they agree. */
    static String lagConflict(Map<String, Object> values) {
        long minLag = (Long) values.get(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG);
        long maxLag = (Long) values.get(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG);
        if (minLag > maxLag) {
            return "conflict topic config setting " + TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG + " (" + minLag + ") > "
                    + TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG + " (" + maxLag + ")";
        }
        return null;
    }
}
