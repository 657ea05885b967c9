package dev.kaas.broker.cluster;

import dev.kaas.common.model.Assignment;

/**
 * Where the controller session hands the assignments it is pushed, and what it reports back.
 * An interface so that {@code cluster} does not depend on the applier, which depends on
 * {@code data} and {@code storage}.
 */
public interface AssignmentReceiver {
    /** Queues an assignment; a stale one (older version or deposed controller) is ignored. */
    void submit(Assignment a);

    /**
     * The newest assignment applied here: every partition it gave this broker was opened (or
     * failed to), and every partition it took away is closed, so the controller may hand those on.
     */
    long appliedVersion();

    /** Runs {@code listener} (on the applier's thread) after each assignment is applied. */
    void onApplied(Runnable listener);

    /** Every partition the applied assignment gives this broker is open. */
    default boolean allAssignedOpen() {
        return unopened().isEmpty();
    }

    /**
     * Partitions the applied assignment gives this broker that could not be opened, with why.
     * Each is unavailable on its own; none makes the broker as a whole unready.
     */
    java.util.Map<org.apache.kafka.common.TopicPartition, String> unopened();
}
