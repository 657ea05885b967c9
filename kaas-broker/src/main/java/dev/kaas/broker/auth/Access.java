package dev.kaas.broker.auth;

import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.ResourceType;

/**
 * What one connection's principal may do, asked by the handlers where Apache's KafkaApis asks
 * its authorizer. Each question reads the ACLs as they are now, so a change the controller
 * published applies to the next request. Without an authorizer ({@code authorizer.class.name}
 * unset) everything is allowed, as in Apache.
 */
public interface Access {
    /** The only name a CLUSTER resource has (Apache's {@code Resource.CLUSTER_NAME}). */
    String CLUSTER = "kafka-cluster";

    /** No authorizer: everything allowed. */
    Access ALL = new Access() {
        @Override
        public boolean allowed(AclOperation operation, ResourceType type, String name) {
            return true;
        }

        @Override
        public boolean allowedOnAny(AclOperation operation, ResourceType type) {
            return true;
        }

        @Override
        public boolean enabled() {
            return false;
        }
    };

    boolean allowed(AclOperation operation, ResourceType type, String name);

    /** kafka-clients' {@code Authorizer.authorizeByResourceType}: allowed on at least one resource of the type. */
    boolean allowedOnAny(AclOperation operation, ResourceType type);

    /** Whether an authorizer is configured (the ACL APIs answer SECURITY_DISABLED without one). */
    boolean enabled();

    /** False until the ACLs are known (a broker that has not applied an assignment yet): the request is not served. */
    default boolean ready() {
        return true;
    }

    default boolean allowedOnCluster(AclOperation operation) {
        return allowed(operation, ResourceType.CLUSTER, CLUSTER);
    }

    /** The names of {@code names} the principal may do {@code operation} on, each asked once (Apache's filterByAuthorized). */
    default Set<String> filter(AclOperation operation, ResourceType type, Collection<String> names) {
        Set<String> out = new LinkedHashSet<>();
        Map<String, Boolean> asked = new java.util.HashMap<>();
        for (String n : names) {
            if (asked.computeIfAbsent(n, x -> allowed(operation, type, x))) {
                out.add(n);
            }
        }
        return out;
    }

    /**
     * Apache's AuthHelper.authorizedOperations: of the operations the resource type supports
     * (AclEntry.supportedOperations), those allowed, as a bit field of their codes.
     */
    default int authorizedOperations(ResourceType type, String name) {
        int bits = 0;
        for (AclOperation op : supportedOperations(type)) {
            if (allowed(op, type, name)) {
                bits |= 1 << op.code();
            }
        }
        return bits;
    }

    static Set<AclOperation> supportedOperations(ResourceType type) {
        return switch (type) {
            case TOPIC -> EnumSet.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE, AclOperation.DELETE,
                    AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS);
            case GROUP -> EnumSet.of(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE);
            case CLUSTER -> EnumSet.of(AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                    AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE);
            case TRANSACTIONAL_ID -> EnumSet.of(AclOperation.DESCRIBE, AclOperation.WRITE);
            case DELEGATION_TOKEN -> EnumSet.of(AclOperation.DESCRIBE);
            case USER -> EnumSet.of(AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS);
            default -> throw new IllegalArgumentException("Not a concrete resource type");
        };
    }

    /** Apache's AclEntry.authorizationError. */
    static Errors denial(ResourceType type) {
        return switch (type) {
            case TOPIC -> Errors.TOPIC_AUTHORIZATION_FAILED;
            case GROUP -> Errors.GROUP_AUTHORIZATION_FAILED;
            case CLUSTER -> Errors.CLUSTER_AUTHORIZATION_FAILED;
            case TRANSACTIONAL_ID -> Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
            case DELEGATION_TOKEN -> Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED;
            default -> throw new IllegalArgumentException("Authorization error type not known");
        };
    }
}
