package dev.kaas.controller.kube;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import java.util.Map;

/**
 * The declared topic. Deliberately loose in the schema (no minimum, no enum): the controller, not
 * the API server, judges a declaration, so a bad one gets {@code Ready=False} with a reason a
 * user can act on instead of a rejected {@code kubectl apply}.
 */
public class KafkaTopicSpec {
    @JsonPropertyDescription("The Kafka topic name, when it is not the resource's name (Kafka names may hold '_' and capitals).")
    private String topicName;

    @JsonPropertyDescription("Number of partitions; may grow, never shrink. Defaults to the controller's num-partitions.")
    private Integer partitions;

    @JsonPropertyDescription("Accepted for compatibility with Strimzi's KafkaTopic and ignored: kaas keeps one copy on the shared volume.")
    private Integer replicas;

    @PreserveUnknownFields
    @SchemaFrom(type = Object.class)
    @JsonPropertyDescription("Topic-level configuration overrides, Apache Kafka 3.7 keys (e.g. retention.ms: 86400000).")
    private Map<String, Object> config;

    public String getTopicName() {
        return topicName;
    }

    public void setTopicName(String topicName) {
        this.topicName = topicName;
    }

    public Integer getPartitions() {
        return partitions;
    }

    public void setPartitions(Integer partitions) {
        this.partitions = partitions;
    }

    public Integer getReplicas() {
        return replicas;
    }

    public void setReplicas(Integer replicas) {
        this.replicas = replicas;
    }

    public Map<String, Object> getConfig() {
        return config;
    }

    public void setConfig(Map<String, Object> config) {
        this.config = config;
    }
}
