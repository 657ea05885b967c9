package dev.kaas.broker.admin;

import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.config.TopicDefaults;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/**
 * One topic's configuration as Apache's {@code ConfigHelper} describes it: each key's effective
 * value and where it comes from — the topic's own override (DYNAMIC_TOPIC_CONFIG), this broker's
 * default under its Apache broker name (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
 * STATIC_BROKER_CONFIG: {@link TopicDefaults}), or Apache's default (DEFAULT_CONFIG) — and, for
 * {@code include_synonyms}, that chain in priority order.
 * Topic keys with no broker name ({@code remote.storage.enable}, the throttled-replica lists) are
 * DEFAULT_CONFIG with no chain.
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
        List<Synonym> chain = synonyms(key);
        return chain.isEmpty() ? ConfigSource.DEFAULT_CONFIG : chain.get(0).source();
    }

    /**
     * The chain for {@code key}, as Apache 3.7's {@code ConfigHelper.createTopicConfigEntry}
     * builds it: the override; then {@link #brokerChain} from the key's primary broker name. So
     * {@code log.retention.hours=24} alone gives retention.ms its value with DEFAULT_CONFIG and
     * no synonyms, as Apache does (its primary name is {@code log.retention.ms}).
     */
    List<Synonym> synonyms(String key) {
        List<Synonym> out = new ArrayList<>();
        if (overrides.containsKey(key)) {
            out.add(new Synonym(key, value(key), ConfigSource.TOPIC_CONFIG));
        }
        List<TopicDefaults.Synonym> names = TopicDefaults.SYNONYMS.get(key);
        if (names != null) {
            out.addAll(brokerChain(defaults, key, names.get(0).name()));
        }
        return out;
    }

    /**
     * Apache's {@code ConfigHelper.configSynonyms} for the broker names of {@code topicKey}: over
     * the names in priority order, those set for this broker dynamically, then dynamically for the
     * cluster, then statically, then those with an Apache default; less everything before the
     * first entry under {@code from}.
     */
    static List<Synonym> brokerChain(TopicDefaults defaults, String topicKey, String from) {
        List<TopicDefaults.Synonym> names = TopicDefaults.SYNONYMS.get(topicKey);
        List<Synonym> chain = new ArrayList<>();
        addSet(chain, names, defaults.dynamicBroker(), ConfigSource.DYNAMIC_BROKER_CONFIG);
        addSet(chain, names, defaults.dynamicDefault(), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        addSet(chain, names, defaults.settings(), ConfigSource.STATIC_BROKER_CONFIG);
        for (TopicDefaults.Synonym n : names) {
            String d = TopicDefaults.brokerDefault(topicKey, n);
            if (d != null) {
                chain.add(new Synonym(n.name(), d, ConfigSource.DEFAULT_CONFIG));
            }
        }
        int first = 0;
        while (first < chain.size() && !chain.get(first).name().equals(from)) {
            first++;
        }
        return List.copyOf(chain.subList(first, chain.size()));
    }

    private static void addSet(List<Synonym> chain, List<TopicDefaults.Synonym> names, Map<String, String> layer, ConfigSource source) {
        for (TopicDefaults.Synonym n : names) {
            String v = layer.get(n.name());
            if (v != null) {
                chain.add(new Synonym(n.name(), v, source));
            }
        }
    }
}
