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
     * Every declaration, valid or not, all of them or an exception, never part: a declaration
     * missing from the list is taken as gone, and what was applied for it is removed. SCRAM
     * passwords are not read here ({@link #withPassword} reads them, one declaration at a time, so
     * a pass spends only the calls it has time for).
     */
    default List<UserDeclaration> declarations() throws IOException {
        return List.of();
    }

    /**
     * The declaration with its SCRAM password, read from where it is kept; one that names none
     * gets a new one, kept where its user reads it (Kubernetes: a Secret named after the user, as
     * Strimzi's User Operator makes). What keeps a password from being read or made (a missing
     * Secret, a refused create, a failed call) comes back as the declaration's
     * {@code passwordProblem}, not as an exception: one user's Secret never holds the others back.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    default UserDeclaration withPassword(long leaseEpoch, UserDeclaration declaration) throws IOException {
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
