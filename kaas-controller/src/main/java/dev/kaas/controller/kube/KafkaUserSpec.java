package dev.kaas.controller.kube;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import java.util.List;

/**
 * The declared user, Strimzi's {@code KafkaUserSpec}. Deliberately loose in the schema (strings,
 * no enums): the controller judges a declaration, so a bad one gets {@code Ready=False} with a
 * reason instead of a refused {@code kubectl apply}.
 */
public class KafkaUserSpec {
    @JsonPropertyDescription("How the user authenticates: type scram-sha-512 (a password) or tls-external (a client certificate "
            + "with CN=<name> from your own CA). Absent: no credentials, ACLs and quotas only.")
    private Authentication authentication;

    @JsonPropertyDescription("What the user may do: type simple and its ACL rules. Absent: no ACLs for the user.")
    private Authorization authorization;

    @JsonPropertyDescription("The user's quotas (the user entity, as kafka-configs.sh --entity-type users --entity-name <username>).")
    private Quotas quotas;

    public Authentication getAuthentication() {
        return authentication;
    }

    public void setAuthentication(Authentication authentication) {
        this.authentication = authentication;
    }

    public Authorization getAuthorization() {
        return authorization;
    }

    public void setAuthorization(Authorization authorization) {
        this.authorization = authorization;
    }

    public Quotas getQuotas() {
        return quotas;
    }

    public void setQuotas(Quotas quotas) {
        this.quotas = quotas;
    }

    public static class Authentication {
        @JsonPropertyDescription("scram-sha-512 or tls-external (tls, a certificate the operator issues, is refused: kaas issues none).")
        private String type;

        @JsonPropertyDescription("scram-sha-512: where the password is; absent: the controller makes one in a Secret named after the user.")
        private Password password;

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }

        public Password getPassword() {
            return password;
        }

        public void setPassword(Password password) {
            this.password = password;
        }
    }

    public static class Password {
        @JsonPropertyDescription("The password's source.")
        private PasswordSource valueFrom;

        public PasswordSource getValueFrom() {
            return valueFrom;
        }

        public void setValueFrom(PasswordSource valueFrom) {
            this.valueFrom = valueFrom;
        }
    }

    public static class PasswordSource {
        @JsonPropertyDescription("A key of a Secret in the user's namespace.")
        private SecretKeySelector secretKeyRef;

        public SecretKeySelector getSecretKeyRef() {
            return secretKeyRef;
        }

        public void setSecretKeyRef(SecretKeySelector secretKeyRef) {
            this.secretKeyRef = secretKeyRef;
        }
    }

    public static class Authorization {
        @JsonPropertyDescription("simple: Kafka ACLs.")
        private String type;

        @JsonPropertyDescription("The ACL rules of the user.")
        private List<AclRule> acls;

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }

        public List<AclRule> getAcls() {
            return acls;
        }

        public void setAcls(List<AclRule> acls) {
            this.acls = acls;
        }
    }

    public static class AclRule {
        @JsonPropertyDescription("The resource the rule is about.")
        private AclResource resource;

        @JsonPropertyDescription("Read, Write, Create, Delete, Alter, Describe, ClusterAction, AlterConfigs, DescribeConfigs, "
                + "IdempotentWrite or All.")
        private List<String> operations;

        @JsonPropertyDescription("One operation (Strimzi's older form); adds to operations.")
        private String operation;

        @JsonPropertyDescription("The client address the rule is for; * (the default) for any.")
        private String host;

        @JsonPropertyDescription("allow (the default) or deny.")
        private String type;

        public AclResource getResource() {
            return resource;
        }

        public void setResource(AclResource resource) {
            this.resource = resource;
        }

        public List<String> getOperations() {
            return operations;
        }

        public void setOperations(List<String> operations) {
            this.operations = operations;
        }

        public String getOperation() {
            return operation;
        }

        public void setOperation(String operation) {
            this.operation = operation;
        }

        public String getHost() {
            return host;
        }

        public void setHost(String host) {
            this.host = host;
        }

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }
    }

    public static class AclResource {
        @JsonPropertyDescription("topic, group, cluster or transactionalId.")
        private String type;

        @JsonPropertyDescription("The resource's name (* for all); none for cluster.")
        private String name;

        @JsonPropertyDescription("literal (the default) or prefix.")
        private String patternType;

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public String getPatternType() {
            return patternType;
        }

        public void setPatternType(String patternType) {
            this.patternType = patternType;
        }
    }

    public static class Quotas {
        @JsonPropertyDescription("Bytes per second the user may produce (producer_byte_rate).")
        private Double producerByteRate;

        @JsonPropertyDescription("Bytes per second the user may fetch (consumer_byte_rate).")
        private Double consumerByteRate;

        @JsonPropertyDescription("Percent of one request handler thread's time (request_percentage).")
        private Double requestPercentage;

        @JsonPropertyDescription("Partitions per second the user may create or delete (controller_mutation_rate).")
        private Double controllerMutationRate;

        public Double getProducerByteRate() {
            return producerByteRate;
        }

        public void setProducerByteRate(Double producerByteRate) {
            this.producerByteRate = producerByteRate;
        }

        public Double getConsumerByteRate() {
            return consumerByteRate;
        }

        public void setConsumerByteRate(Double consumerByteRate) {
            this.consumerByteRate = consumerByteRate;
        }

        public Double getRequestPercentage() {
            return requestPercentage;
        }

        public void setRequestPercentage(Double requestPercentage) {
            this.requestPercentage = requestPercentage;
        }

        public Double getControllerMutationRate() {
            return controllerMutationRate;
        }

        public void setControllerMutationRate(Double controllerMutationRate) {
            this.controllerMutationRate = controllerMutationRate;
        }
    }
}
