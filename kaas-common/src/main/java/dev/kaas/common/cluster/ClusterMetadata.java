package dev.kaas.common.cluster;

import java.io.IOException;

/**
 * The bound metadata/lease port: one of these per controller process, chosen by configuration
 * ({@code kaas.controller.metadata}). Everything the controller keeps outside its memory goes
 * through here, so a Kubernetes binding can replace the standalone one without the controller
 * knowing.
 *
 * <p>Fencing: every write takes the lease epoch (the lease's {@code transitions} counter) under
 * which the caller believes it leads, and the binding refuses it with
 * {@link LeaseFencedException} if the lease has moved on since. Standalone compares it with the
 * lease file under the binding's lock; Kubernetes reads the Lease fresh before each write and
 * makes each store safe against a check that was overtaken (epoch-named assignment files,
 * compare-and-set on producer ids; see src/docs/kubernetes.md).
 *
 * <p>Exclusivity of the store is the binding's business too: {@link #close()} gives it up.
 */
public interface ClusterMetadata extends AutoCloseable {
    ControllerLease lease();

    TopicCatalog topics();

    /** Declared users; none unless the binding has a declarative store for them (Kubernetes). */
    default UserCatalog users() {
        return new UserCatalog() {
        };
    }

    ProducerIdStore producerIds();

    AssignmentStore assignments();

    /**
     * A stable cluster ID (22-char Kafka Uuid string, as {@code kafka-storage format}), created on
     * first use under {@code leaseEpoch}.
     */
    String clusterId(long leaseEpoch) throws IOException;

    @Override
    void close() throws IOException;
}
