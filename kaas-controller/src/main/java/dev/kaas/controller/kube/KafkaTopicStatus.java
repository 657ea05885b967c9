package dev.kaas.controller.kube;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import java.util.Map;

/**
 * What the controller accepted for the resource: {@code topicId} is minted on first acceptance
 * and never changes; {@code topicName}, {@code partitions} and {@code config} are what the
 * brokers serve, which differs from the spec while the spec is not acceptable
 * ({@code Ready=False}).
 */
public class KafkaTopicStatus {
    @JsonPropertyDescription("The Kafka topic ID, minted once when the topic is created.")
    private String topicId;

    @JsonPropertyDescription("The Kafka topic name in effect.")
    private String topicName;

    @JsonPropertyDescription("The number of partitions in effect.")
    private Integer partitions;

    @JsonPropertyDescription("The configuration overrides in effect.")
    private Map<String, String> config;

    @JsonPropertyDescription("The metadata.generation of the spec this status answers.")
    private Long observedGeneration;

    @JsonPropertyDescription("Ready: True when the spec is in effect; False with the reason when it cannot be.")
    private List<Condition> conditions;

    public String getTopicId() {
        return topicId;
    }

    public void setTopicId(String topicId) {
        this.topicId = topicId;
    }

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

    public Map<String, String> getConfig() {
        return config;
    }

    public void setConfig(Map<String, String> config) {
        this.config = config;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }
}
