package dev.kaas.common.cluster;

import dev.kaas.common.model.TopicSpec;
import java.io.IOException;
import java.util.List;

/**
 * The metadata-store port for topics. Standalone: a JSON file under {@code __cluster/catalog/};
 * Kubernetes: {@code KafkaTopic} custom resources. Only the lease holder writes.
 */
public interface TopicCatalog {
    List<TopicSpec> topics() throws IOException;

    /**
     * Replaces the whole set of topics, if {@code leaseEpoch} is still the lease's current epoch.
     * Called by the lease holder only, after it validated the change.
     *
     * @throws LeaseFencedException if another controller took the lease since
     */
    void store(long leaseEpoch, List<TopicSpec> topics) throws IOException;
}
