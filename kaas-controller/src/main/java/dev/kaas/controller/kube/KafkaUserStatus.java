package dev.kaas.controller.kube;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/** What the controller applied for a {@link KafkaUser}, and whether that is what it declares. */
public class KafkaUserStatus {
    @JsonPropertyDescription("The user name in effect: the principal is User:<username>.")
    private String username;

    @JsonPropertyDescription("The Secret holding the user's SCRAM password.")
    private String secret;

    @JsonPropertyDescription("The metadata.generation of the spec this status answers.")
    private Long observedGeneration;

    @JsonPropertyDescription("Ready: True when the spec is in effect; False with the reason when it cannot be.")
    private List<Condition> conditions;

    public String getUsername() {
        return username;
    }

    public void setUsername(String username) {
        this.username = username;
    }

    public String getSecret() {
        return secret;
    }

    public void setSecret(String secret) {
        this.secret = secret;
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
