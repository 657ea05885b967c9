package dev.kaas.common.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;

/**
 * A broker's defaults for topic configs, set under Apache 3.7's broker names
 * ({@code log.retention.hours}, {@code message.max.bytes}, … — Apache's
 * {@code ServerTopicConfigSynonyms}): a topic without an override of its own gets the broker's
 * value, and only where the broker sets none, Apache's default ({@link TopicConfigs#DEF}). Where
 * a topic key has several broker names, the first one set wins ({@code log.retention.ms} over
 * {@code .minutes} over {@code .hours}), as Apache. See src/docs/running.md.
 *
 * <p>Over the static settings lie the dynamic ones (IncrementalAlterConfigs BROKER, through the
 * controller): the cluster-wide defaults, then this broker's own, as Apache layers
 * DYNAMIC_BROKER_CONFIG over DYNAMIC_DEFAULT_BROKER_CONFIG over STATIC_BROKER_CONFIG.
 *
 * @param values         the broker's default per topic key, in the topic key's units
 * @param settings       every broker name set statically (server.properties, system properties,
 *                       the environment), with its value as written (all of them, not only the one
 *                       that wins: DescribeConfigs shows each)
 * @param dynamicDefault broker names set dynamically for the whole cluster
 * @param dynamicBroker  broker names set dynamically for this broker
 */
public record TopicDefaults(Map<String, String> values, Map<String, String> settings, Map<String, String> dynamicDefault,
                            Map<String, String> dynamicBroker) {
    public static final TopicDefaults NONE = new TopicDefaults(Map.of(), Map.of(), Map.of(), Map.of());
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(TopicDefaults.class);

    /** One broker name of a topic key, and what one of its units is in the topic key's units. */
    public record Synonym(String name, long multiplier) {
    }

    private static final long MINUTE = 60_000L;
    private static final long HOUR = 3_600_000L;

    /** Apache 3.7's table, in its priority order per topic key. */
    public static final Map<String, List<Synonym>> SYNONYMS = synonyms();

    /** The broker names, typed as Apache types them (hours and minutes are INT, for a number of those). */
    private static final ConfigDef BROKER_DEF = brokerDef();

    public TopicDefaults {
        values = Map.copyOf(values);
        settings = Map.copyOf(settings);
        dynamicDefault = Map.copyOf(dynamicDefault);
        dynamicBroker = Map.copyOf(dynamicBroker);
    }

    /**
     * Reads the broker names through {@code setting} (the process's configuration: the
     * server.properties file, system properties, the environment), as {@link #ofStatic}.
     *
     * @throws ConfigException naming the broker key, for a value of the wrong type or range
     */
    public static TopicDefaults from(Function<String, Optional<String>> setting) {
        Map<String, String> raw = new HashMap<>();
        for (List<Synonym> names : SYNONYMS.values()) {
            for (Synonym s : names) {
                setting.apply(s.name()).map(String::trim).ifPresent(v -> raw.put(s.name(), v));
            }
        }
        return ofStatic(raw);
    }

    /** As {@link #from}, for the broker names in {@code raw} (others are not looked at); each value checked on its own. */
    public static TopicDefaults of(Map<String, String> raw) {
        Map<String, String> settings = onlyBrokerNames(raw);
        return new TopicDefaults(resolve(settings), settings, Map.of(), Map.of());
    }

    /**
     * A process's static settings: as {@link #of}, and held to Apache's rule across keys, which
     * its LogManager checks at start-up ({@code LogConfig.validateBrokerLogConfigValues}:
     * {@code log.cleaner.min.compaction.lag.ms} at most {@code log.cleaner.max.compaction.lag.ms}).
     * Dynamic values are not (Apache's DynamicLogConfig does not check it either).
     *
     * @throws ConfigException with Apache's text
     */
    public static TopicDefaults ofStatic(Map<String, String> raw) {
        TopicDefaults defaults = of(raw);
        String conflict = TopicConfigs.lagConflict(TopicConfigs.DEF.parse(defaults.values()));
        if (conflict != null) {
            throw new ConfigException(conflict);
        }
        return defaults;
    }

    /**
     * These static defaults with the dynamic ones over them. Never fails: the controller checked
     * each dynamic value, and one that does not pass here (another kaas version's rules) is left
     * out, as Apache's DynamicBrokerConfig leaves out an invalid dynamic value.
     */
    public TopicDefaults withDynamic(Map<String, String> clusterDefault, Map<String, String> broker) {
        Map<String, String> d = valid(onlyBrokerNames(clusterDefault));
        Map<String, String> b = valid(onlyBrokerNames(broker));
        if (d.equals(dynamicDefault) && b.equals(dynamicBroker)) {
            return this;
        }
        Map<String, String> merged = new HashMap<>(settings);
        merged.putAll(d);
        merged.putAll(b);
        return new TopicDefaults(resolve(merged), settings, d, b);
    }

    private static Map<String, String> valid(Map<String, String> layer) {
        Map<String, String> out = new HashMap<>();
        layer.forEach((name, value) -> {
            try {
                resolve(Map.of(name, value));
                out.put(name, value);
            } catch (ConfigException e) {
                LOG.warnf("dynamic broker config %s=%s left out: %s", name, value, e.getMessage());
            }
        });
        return out;
    }

    /** The broker names' values, from the highest layer that sets them (null: none does). */
    public String setting(String brokerName) {
        String v = dynamicBroker.get(brokerName);
        if (v == null) {
            v = dynamicDefault.get(brokerName);
        }
        return v != null ? v : settings.get(brokerName);
    }

    private static Map<String, String> resolve(Map<String, String> settings) {
        Map<String, Object> parsed = BROKER_DEF.parse(settings);
        Map<String, String> values = new HashMap<>();
        Map<String, String> winner = new HashMap<>();
        for (var e : SYNONYMS.entrySet()) {
            for (Synonym s : e.getValue()) {
                Object v = parsed.get(s.name());
                if (v == null) {
                    continue;
                }
                String topicValue = s.multiplier() != 1 ? Long.toString(((Number) v).longValue() * s.multiplier()) : settings.get(s.name());
                // Apache's KafkaConfig.logRetentionTimeMillis: a negative retention in any unit is "forever".
                if (e.getKey().equals(TopicConfig.RETENTION_MS_CONFIG) && ((Number) v).longValue() < 0) {
                    topicValue = "-1";
                }
                values.put(e.getKey(), topicValue);
                winner.put(e.getKey(), s.name());
                break;
            }
        }
        // The topic key's own validator, reported as Apache reports a broker setting: under the broker name that was set.
        for (var e : values.entrySet()) {
            String invalid = TopicConfigs.validate(Map.of(e.getKey(), e.getValue()));
            if (invalid != null) {
                String name = winner.get(e.getKey());
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^Invalid value \\S+ for configuration "
                        + java.util.regex.Pattern.quote(e.getKey()) + ":(.*)$", java.util.regex.Pattern.DOTALL).matcher(invalid);
                throw new ConfigException(m.matches()
                        ? "Invalid value " + settings.get(name) + " for configuration " + name + ":" + m.group(1)
                        : name + "=" + settings.get(name) + ": " + invalid);
            }
        }
        // Apache's KafkaConfig: a retention of 0 in any unit would delete every closed segment at once. (The rule across
        // keys, min.compaction.lag.ms <= max.compaction.lag.ms, binds static settings only: ofStatic.)
        if ("0".equals(values.get(TopicConfig.RETENTION_MS_CONFIG))) {
            throw new ConfigException("log.retention.ms must be unlimited (-1) or, equal or greater than 1");
        }
        return values;
    }

    /**
     * Apache's default under one broker name of {@code topicKey}, in that name's units: only the
     * coarsest name carries one ({@code log.retention.hours=168}; {@code log.retention.ms} has
     * none), as in Apache's KafkaConfig. Null for the others.
     */
    public static String brokerDefault(String topicKey, Synonym name) {
        List<Synonym> names = SYNONYMS.get(topicKey);
        if (!name.equals(names.get(names.size() - 1))) {
            return null;
        }
        Object d = TopicConfigs.DEF.configKeys().get(topicKey).defaultValue;
        if (d == null) {
            return null;
        }
        if (name.multiplier() != 1 && d instanceof Long ms) {
            return Long.toString(ms / name.multiplier());
        }
        return d instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(d);
    }

    /** Every broker name of the table, in no particular order. */
    public static List<String> brokerNames() {
        List<String> out = new ArrayList<>();
        SYNONYMS.values().forEach(l -> l.forEach(s -> out.add(s.name())));
        return out;
    }

    /** Effective topic values: the topic's overrides over these defaults over Apache's, typed as {@link TopicConfigs#DEF} parses them. */
    public Map<String, Object> effective(Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>(values);
        merged.putAll(overrides);
        return TopicConfigs.DEF.parse(merged);
    }

    private static Map<String, String> onlyBrokerNames(Map<String, String> raw) {
        Map<String, String> out = new HashMap<>();
        for (String name : brokerNames()) {
            if (raw.containsKey(name)) {
                out.put(name, raw.get(name).trim());
            }
        }
        return out;
    }

    @SuppressWarnings("deprecation")
    private static Map<String, List<Synonym>> synonyms() {
        Map<String, List<Synonym>> m = new LinkedHashMap<>();
        m.put(TopicConfig.SEGMENT_BYTES_CONFIG, List.of(new Synonym("log.segment.bytes", 1)));
        m.put(TopicConfig.SEGMENT_MS_CONFIG, List.of(new Synonym("log.roll.ms", 1), new Synonym("log.roll.hours", HOUR)));
        m.put(TopicConfig.SEGMENT_JITTER_MS_CONFIG, List.of(new Synonym("log.roll.jitter.ms", 1), new Synonym("log.roll.jitter.hours", HOUR)));
        m.put(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG, List.of(new Synonym("log.index.size.max.bytes", 1)));
        m.put(TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG, List.of(new Synonym("log.flush.interval.messages", 1)));
        m.put(TopicConfig.FLUSH_MS_CONFIG, List.of(new Synonym("log.flush.interval.ms", 1), new Synonym("log.flush.scheduler.interval.ms", 1)));
        m.put(TopicConfig.RETENTION_BYTES_CONFIG, List.of(new Synonym("log.retention.bytes", 1)));
        m.put(TopicConfig.RETENTION_MS_CONFIG, List.of(new Synonym("log.retention.ms", 1), new Synonym("log.retention.minutes", MINUTE),
                new Synonym("log.retention.hours", HOUR)));
        m.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, List.of(new Synonym("message.max.bytes", 1)));
        m.put(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG, List.of(new Synonym("log.index.interval.bytes", 1)));
        m.put(TopicConfig.DELETE_RETENTION_MS_CONFIG, List.of(new Synonym("log.cleaner.delete.retention.ms", 1)));
        m.put(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG, List.of(new Synonym("log.cleaner.min.compaction.lag.ms", 1)));
        m.put(TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG, List.of(new Synonym("log.cleaner.max.compaction.lag.ms", 1)));
        m.put(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG, List.of(new Synonym("log.segment.delete.delay.ms", 1)));
        m.put(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG, List.of(new Synonym("log.cleaner.min.cleanable.ratio", 1)));
        m.put(TopicConfig.CLEANUP_POLICY_CONFIG, List.of(new Synonym("log.cleanup.policy", 1)));
        m.put(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, List.of(new Synonym("unclean.leader.election.enable", 1)));
        m.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, List.of(new Synonym("min.insync.replicas", 1)));
        m.put(TopicConfig.COMPRESSION_TYPE_CONFIG, List.of(new Synonym("compression.type", 1)));
        m.put(TopicConfig.PREALLOCATE_CONFIG, List.of(new Synonym("log.preallocate", 1)));
        m.put(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG, List.of(new Synonym("log.message.format.version", 1)));
        m.put(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, List.of(new Synonym("log.message.timestamp.type", 1)));
        m.put(TopicConfig.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_CONFIG, List.of(new Synonym("log.message.timestamp.difference.max.ms", 1)));
        m.put(TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, List.of(new Synonym("log.message.timestamp.before.max.ms", 1)));
        m.put(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, List.of(new Synonym("log.message.timestamp.after.max.ms", 1)));
        m.put(TopicConfig.MESSAGE_DOWNCONVERSION_ENABLE_CONFIG, List.of(new Synonym("log.message.downconversion.enable", 1)));
        m.put(TopicConfig.LOCAL_LOG_RETENTION_MS_CONFIG, List.of(new Synonym("log.local.retention.ms", 1)));
        m.put(TopicConfig.LOCAL_LOG_RETENTION_BYTES_CONFIG, List.of(new Synonym("log.local.retention.bytes", 1)));
        return java.util.Collections.unmodifiableMap(m);
    }

    private static ConfigDef brokerDef() {
        ConfigDef def = new ConfigDef();
        for (var e : SYNONYMS.entrySet()) {
            ConfigDef.ConfigKey topic = TopicConfigs.DEF.configKeys().get(e.getKey());
            for (Synonym s : e.getValue()) {
                // Hours and minutes are counted as INT; every other name has its topic key's type (its validator runs on the topic value).
                ConfigDef.Type type = s.multiplier() == 1 ? topic.type : ConfigDef.Type.INT;
                def.define(s.name(), type, null, ConfigDef.Importance.MEDIUM, "The broker default of the topic config " + e.getKey() + ".");
            }
        }
        return def;
    }
}
