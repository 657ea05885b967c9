package dev.kaas.common.cluster;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Kafka user as declared in a declarative store (Kubernetes: a {@code KafkaUser} resource,
 * shaped like Strimzi's), before the controller judged it. Everything here is as the user wrote it:
 * the controller validates it ({@code UserReconciler}) and answers with a {@link UserVerdict}.
 *
 * @param ref             the store's identity of the declaration (Kubernetes: the resource's uid)
 * @param name            the resource's name: the user name (SCRAM), or the certificate's CN (TLS)
 * @param generation      the declaration's revision (Kubernetes: {@code metadata.generation})
 * @param authentication  {@code scram-sha-512}, {@code tls}, {@code tls-external}, null for none, or
 *                        what else the user wrote ("" for an authentication without a type)
 * @param password        the SCRAM password, once the store read it ({@code UserCatalog.withPassword});
 *                        null before, or when it could not be read ({@code passwordProblem} says why)
 * @param passwordProblem why the password could not be read, null when it could (or is not needed)
 * @param authorization   {@code simple}, another type (refused), or null: no ACLs for the user
 * @param acls            the declared ACL rules, unchecked
 * @param quotas          the declared quotas by Apache's key ({@code producer_byte_rate}, ...), unchecked
 */
public record UserDeclaration(String ref, String name, long generation, String authentication, String password, String passwordProblem,
                              String authorization,
                              List<Rule> acls, Map<String, Double> quotas) {
    public UserDeclaration {
        acls = acls == null ? List.of() : List.copyOf(acls);
        quotas = quotas == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(quotas));
    }

    /**
     * One declared ACL rule, as Strimzi's {@code spec.authorization.acls[]}: resource
     * {@code type} (topic, group, cluster, transactionalId), {@code name}, {@code patternType}
     * (literal, prefix), the operations, {@code host} and {@code type} (allow, deny). Null where
     * the user wrote nothing.
     */
    public record Rule(String resourceType, String resourceName, String patternType, List<String> operations, String host,
                       String type) {
        public Rule {
            // Elements may be null (a YAML "- ~"): the controller refuses them, List.copyOf would throw.
            operations = operations == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(operations));
        }
    }

    @Override
    public String toString() {
        // The password stays out of logs.
        return "UserDeclaration[ref=" + ref + ", name=" + name + ", generation=" + generation
                + ", authentication=" + authentication + ", acls=" + acls.size() + ", quotas=" + quotas + "]";
    }
}
