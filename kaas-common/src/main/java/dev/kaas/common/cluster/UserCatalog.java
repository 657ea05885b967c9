package dev.kaas.common.cluster;

import java.io.IOException;
import java.util.List;

/**
 * The metadata-store port for declared users. Standalone has none: users, their SCRAM
 * credentials, ACLs and quotas come through the Kafka API only and live in the published
 * assignment. Kubernetes: {@code KafkaUser} resources, each the source of truth for what its user
 * may do (credential, ACLs, user quotas), reconciled into the assignment by the lease holder.
 */
public interface UserCatalog {
    /** Whether users are declared in this store ({@link #declarations()} is meaningful). */
    default boolean declarative() {
        return false;
    }

    /**
     * Every declaration, valid or not, with SCRAM passwords resolved from where they are kept; all
     * of them or an exception, never part: a declaration missing from the list is taken as gone,
     * and what was applied for it is removed.
     */
    default List<UserDeclaration> declarations() throws IOException {
        return List.of();
    }

    /**
     * Makes a password for a SCRAM declaration that names none and keeps it where its user reads
     * it (Kubernetes: a Secret named after the user, as Strimzi's User Operator makes). Returns
     * the declaration with it.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    default UserDeclaration withNewPassword(long leaseEpoch, UserDeclaration declaration) throws IOException {
        throw new UnsupportedOperationException("no declared users here");
    }

    /**
     * Records the controller's verdict where the declaration's author looks; a no-op when it is
     * already recorded.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    default void report(long leaseEpoch, UserVerdict verdict) throws IOException {
    }

    /** Calls {@code listener} (on any thread, possibly in bursts) whenever declarations may have changed. */
    default void watch(Runnable listener) {
    }
}
