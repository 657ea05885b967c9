package dev.kaas.broker.cluster;

import dev.kaas.common.model.Assignment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * CDI event fired on the assignment thread once an assignment's partitions are open or closed and
 * {@link ClusterView} shows it. Coordinators observe it to follow their slots, so the applier
 * never calls them and the packages keep one direction: coordinators depend on {@code cluster},
 * never the other way round.
 *
 * <p>An observer that gives something up (a coordinator slot) adds a future to
 * {@link #releases} that completes once it is let go: the broker reports the assignment applied,
 * which lets the controller hand the slot on, only after all of them completed.
 */
public record AssignmentApplied(Assignment assignment, List<CompletableFuture<Void>> releases) {
    public AssignmentApplied(Assignment assignment) {
        this(assignment, new CopyOnWriteArrayList<>());
    }
}
