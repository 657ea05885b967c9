package dev.kaas.common.cluster;

import java.util.Map;
import java.util.TreeMap;

/**
 * A topic as a user declared it in a declarative store (Kubernetes: a {@code KafkaTopic}
 * resource's spec), before the controller accepted it. The controller validates it against what
 * it accepted before and answers with a {@link TopicVerdict}; nothing here is trusted.
 *
 * @param ref        the store's identity of the declaration (Kubernetes: the resource's uid)
 * @param name       the Kafka topic name it declares
 * @param generation the declaration's revision (Kubernetes: {@code metadata.generation})
 * @param topicId    the id the controller minted when it first accepted it, null before
 */
public record TopicDeclaration(String ref, String name, long generation, int partitions, Map<String, String> configs,
                               String topicId) {
    public TopicDeclaration {
        configs = configs == null ? Map.of() : Map.copyOf(new TreeMap<>(configs));
    }
}
