package dev.kaas.common.cluster;

import dev.kaas.common.model.TopicSpec;
import java.io.IOException;
import java.util.List;

/**
 * The metadata-store port for topics. Standalone: a JSON file under {@code __cluster/catalog/};
 * Kubernetes: {@code KafkaTopic} custom resources. Only the lease holder writes.
 *
 * <p>A declarative store (Kubernetes) also holds topics users declared outside the Kafka API.
 * There the declarations are the source of truth: the controller reads them with
 * {@link #declarations()}, decides what to accept, records its verdicts with {@link #report} and
 * the accepted set with {@link #store}; a declaration that disappears deletes its topic. A store
 * that is not declarative (standalone) holds only what the controller stored.
 */
public interface TopicCatalog {
    /** The accepted topics, as last stored. */
    List<TopicSpec> topics() throws IOException;

    /**
     * Makes the accepted set {@code topics}, if {@code leaseEpoch} is still the lease's current
     * epoch. Called by the lease holder only, after it validated the change. A declarative store
     * creates a declaration for a topic the Kafka API created and removes the declaration of one
     * the Kafka API deleted.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    void store(long leaseEpoch, List<TopicSpec> topics) throws IOException;

    /** Whether users declare topics in this store ({@link #declarations()} is meaningful). */
    default boolean declarative() {
        return false;
    }

    /** Every declaration in the store, valid or not. */
    default List<TopicDeclaration> declarations() throws IOException {
        return List.of();
    }

    /**
     * Records the controller's verdict on a declaration where its author looks; a no-op when it is
     * already recorded, so reconciling twice writes nothing.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    default void report(long leaseEpoch, TopicVerdict verdict) throws IOException {
    }

    /** Calls {@code listener} (on any thread, possibly in bursts) whenever declarations may have changed. */
    default void watch(Runnable listener) {
    }
}
