package dev.kaas.common.config;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The broker settings kaas changes at run time (IncrementalAlterConfigs and AlterConfigs on a
 * BROKER resource: {@code ""} for the whole cluster, a broker id for one broker), a subset of
 * Apache 3.7's dynamic ones (src/docs/compatibility.md):
 * <ul>
 *   <li>the topic defaults under their primary broker names, as Apache's {@code DynamicLogConfig}
 *       ({@code log.retention.ms}, {@code log.segment.bytes}, {@code message.max.bytes}, …; not
 *       {@code log.message.format.version}, nor the secondary names such as
 *       {@code log.retention.hours}): open partitions follow a change at once;</li>
 *   <li>the log cleaner's settings, as Apache's {@code LogCleaner.ReconfigurableConfigs}
 *       ({@code log.cleaner.threads}, {@code log.cleaner.io.max.bytes.per.second}, …): the
 *       broker restarts its cleaner threads with them;</li>
 *   <li>the replication throttles ({@code leader.replication.throttled.rate}, …), which
 *       {@code kafka-reassign-partitions.sh --throttle} sets: kept and described, but kaas
 *       copies no data between brokers, so they limit nothing.</li>
 * </ul>
 * Any other name is refused as Apache refuses one it cannot update dynamically.
 */
public final class DynamicBrokerConfigs {
    public static final Set<String> THROTTLES = Set.of("leader.replication.throttled.rate", "follower.replication.throttled.rate",
            "replica.alter.log.dirs.io.max.bytes.per.second");

    /**
     * The log cleaner's reconfigurable settings, typed and bounded as Apache 3.7 defines them
     * ({@code KafkaConfig}): a dynamic value is checked against this before it is stored.
     */
    public static final ConfigDef CLEANER = new ConfigDef()
            .define("log.cleaner.threads", ConfigDef.Type.INT, 1, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.dedupe.buffer.size", ConfigDef.Type.LONG, 128L * 1024 * 1024, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.buffer.load.factor", ConfigDef.Type.DOUBLE, 0.9d, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.buffer.size", ConfigDef.Type.INT, 512 * 1024, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.max.bytes.per.second", ConfigDef.Type.DOUBLE, Double.MAX_VALUE, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.backoff.ms", ConfigDef.Type.LONG, 15_000L, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "");

    /** Every name kaas changes at run time, sorted. */
    @SuppressWarnings("deprecation")
    public static final Set<String> NAMES = names();

    private DynamicBrokerConfigs() {
    }

    public static boolean dynamic(String name) {
        return NAMES.contains(name);
    }

    /** A name whose value is a list (APPEND and SUBTRACT apply to it). */
    public static boolean isList(String name) {
        return name.equals("log.cleanup.policy");
    }

    /**
     * Checks one resource's dynamic configuration as it would be after a change, each value by its
     * broker name's type and its topic key's validator (Apache has no broker-level rule across
     * keys). Returns Apache's message, or null.
     */
    public static String validate(Map<String, String> configs) {
        for (var e : configs.entrySet()) {
            if (CLEANER.configKeys().containsKey(e.getKey())) {
                try {
                    cleanerValue(e.getKey(), e.getValue());
                } catch (ConfigException ex) {
                    return ex.getMessage();
                }
            }
            if (THROTTLES.contains(e.getKey())) {
                try {
                    long v = (Long) ConfigDef.parseType(e.getKey(), e.getValue(), ConfigDef.Type.LONG);
                    if (v < 0) {
                        return "Invalid value " + e.getValue() + " for configuration " + e.getKey() + ": Value must be at least 0";
                    }
                } catch (ConfigException ex) {
                    return ex.getMessage();
                }
            }
        }
        try {
            TopicDefaults.of(configs);
            return null;
        } catch (ConfigException ex) {
            return ex.getMessage();
        }
    }

    /**
     * A cleaner setting's value, typed and checked by Apache's definition ({@link #CLEANER}).
     *
     * @throws ConfigException with Apache's message when it does not pass
     */
    public static Object cleanerValue(String name, String value) {
        ConfigDef.ConfigKey key = CLEANER.configKeys().get(name);
        Object v = ConfigDef.parseType(name, value, key.type);
        if (key.validator != null) {
            key.validator.ensureValid(name, v);
        }
        return v;
    }

    @SuppressWarnings("deprecation")
    private static Set<String> names() {
        Set<String> out = new TreeSet<>(THROTTLES);
        out.addAll(CLEANER.names());
        TopicDefaults.SYNONYMS.forEach((topicKey, names) -> {
            if (!topicKey.equals(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG)) {
                out.add(names.get(0).name());
            }
        });
        return java.util.Collections.unmodifiableSet(out);
    }
}
