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
 * default under its Apache broker name (STATIC_BROKER_CONFIG, {@link TopicDefaults}), or Apache's
 * default (DEFAULT_CONFIG) — and, for {@code include_synonyms}, that chain in priority order.
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
     * builds it: the override; then, over the key's broker names in priority order, those this
     * broker sets (STATIC_BROKER_CONFIG) and those with an Apache default (DEFAULT_CONFIG); less
     * everything before the first entry under the key's primary broker name. So
     * {@code log.retention.hours=24} alone gives retention.ms its value with DEFAULT_CONFIG and
     * no synonyms, as Apache does (its primary name is {@code log.retention.ms}).
     */
    List<Synonym> synonyms(String key) {
        List<Synonym> out = new ArrayList<>();
        if (overrides.containsKey(key)) {
            out.add(new Synonym(key, value(key), ConfigSource.TOPIC_CONFIG));
        }
        List<TopicDefaults.Synonym> names = TopicDefaults.SYNONYMS.get(key);
        if (names == null) {
            return out;
        }
        List<Synonym> broker = new ArrayList<>();
        for (TopicDefaults.Synonym n : names) {
            String set = defaults.settings().get(n.name());
            if (set != null) {
                broker.add(new Synonym(n.name(), set, ConfigSource.STATIC_BROKER_CONFIG));
            }
        }
        for (TopicDefaults.Synonym n : names) {
            String d = TopicDefaults.brokerDefault(key, n);
            if (d != null) {
                broker.add(new Synonym(n.name(), d, ConfigSource.DEFAULT_CONFIG));
            }
        }
        String primary = names.get(0).name();
        int first = 0;
        while (first < broker.size() && !broker.get(first).name().equals(primary)) {
            first++;
        }
        out.addAll(broker.subList(first, broker.size()));
        return out;
    }
}
