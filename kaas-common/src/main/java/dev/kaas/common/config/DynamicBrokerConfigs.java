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
 *   <li>the replication throttles ({@code leader.replication.throttled.rate}, …), which
 *       {@code kafka-reassign-partitions.sh --throttle} sets: kept and described, but kaas
 *       copies no data between brokers, so they limit nothing.</li>
 * </ul>
 * Any other name is refused as Apache refuses one it cannot update dynamically.
 */
public final class DynamicBrokerConfigs {
    public static final Set<String> THROTTLES = Set.of("leader.replication.throttled.rate", "follower.replication.throttled.rate",
            "replica.alter.log.dirs.io.max.bytes.per.second");

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

    @SuppressWarnings("deprecation")
    private static Set<String> names() {
        Set<String> out = new TreeSet<>(THROTTLES);
        TopicDefaults.SYNONYMS.forEach((topicKey, names) -> {
            if (!topicKey.equals(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG)) {
                out.add(names.get(0).name());
            }
        });
        return java.util.Collections.unmodifiableSet(out);
    }
}
