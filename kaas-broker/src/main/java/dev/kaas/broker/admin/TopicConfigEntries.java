package dev.kaas.broker.admin;

import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.config.TopicDefaults;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/**
 * One topic's configuration as Apache's {@code ConfigHelper} describes it: each key's effective
 * value and where it comes from — the topic's own override (DYNAMIC_TOPIC_CONFIG), this broker's
 * default under its Apache broker name (STATIC_BROKER_CONFIG, {@link TopicDefaults}), or Apache's
 * default (DEFAULT_CONFIG) — and, for {@code include_synonyms}, that chain in priority order.
 */
final class TopicConfigEntries {
    /** One link of a key's chain: the name it is set under, its value there, and the source. */
    record Synonym(String name, String value, ConfigSource source) {
    }

    private final TopicDefaults defaults;
    private final Map<String, String> overrides;
    private final Map<String, Object> effective;

    TopicConfigEntries(TopicDefaults defaults, Map<String, String> overrides) {
        this.defaults = defaults;
        this.overrides = overrides;
        this.effective = defaults.effective(overrides);
    }

    String value(String key) {
        return ConfigValues.format(effective.get(key));
    }

    ConfigSource source(String key) {
        if (overrides.containsKey(key)) {
            return ConfigSource.TOPIC_CONFIG;
        }
        return defaults.setBy().containsKey(key) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
    }

    /**
     * The chain for {@code key}: the override, the broker name that set the default, and Apache's
     * default under the broker name that carries it (the coarsest: {@code log.retention.hours=168}).
     */
    List<Synonym> synonyms(String key) {
        List<Synonym> out = new ArrayList<>();
        if (overrides.containsKey(key)) {
            out.add(new Synonym(key, value(key), ConfigSource.TOPIC_CONFIG));
        }
        TopicDefaults.Synonym set = defaults.setBy().get(key);
        if (set != null) {
            out.add(new Synonym(set.name(), set.value(), ConfigSource.STATIC_BROKER_CONFIG));
        }
        List<TopicDefaults.Synonym> names = TopicDefaults.SYNONYMS.get(key);
        ConfigDef.ConfigKey def = TopicConfigs.DEF.configKeys().get(key);
        Object apacheDefault = def.defaultValue;
        if (names == null) {
            out.add(new Synonym(key, ConfigValues.format(apacheDefault), ConfigSource.DEFAULT_CONFIG));
        } else {
            TopicDefaults.Synonym coarsest = names.get(names.size() - 1);
            String v = coarsest.multiplier() == 1 || !(apacheDefault instanceof Long ms) || ms == Long.MAX_VALUE
                    ? ConfigValues.format(apacheDefault) : Long.toString(ms / coarsest.multiplier());
            out.add(new Synonym(coarsest.name(), v, ConfigSource.DEFAULT_CONFIG));
        }
        return out;
    }
}
