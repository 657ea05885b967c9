package dev.kaas.common.model;

import java.util.Map;
import java.util.TreeMap;

/**
 * A topic in the catalog. The topic ID (a Kafka {@code Uuid} in its string form) is the
 * identity; the name is not: a deleted and recreated topic gets a new ID and a new directory.
 *
 * @param configs only the topic-level overrides the user set; defaults are resolved by readers
 */
public record TopicSpec(String name, String topicId, int partitions, Map<String, String> configs) {
    public TopicSpec {
        configs = configs == null ? Map.of() : Map.copyOf(new TreeMap<>(configs));
    }
}
