package dev.kaas.common.cluster;

import dev.kaas.common.model.Assignment;
import java.io.IOException;
import java.util.Optional;

/**
 * Where the published assignment is kept, so a successor controller starts from it. Standalone:
 * {@code __cluster/assignment.json}; Kubernetes: one file per controller epoch under
 * {@code __cluster/assignments/} ({@link EpochAssignmentFiles}). Only the lease holder writes.
 */
public interface AssignmentStore {
    Optional<Assignment> load() throws IOException;

    /**
     * Stores {@code json} (the serialization of one {@link Assignment}, byte for byte what brokers
     * are sent) if {@code leaseEpoch} is still the lease's current epoch.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    void store(long leaseEpoch, String json) throws IOException;
}
