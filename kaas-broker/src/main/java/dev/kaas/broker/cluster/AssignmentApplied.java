package dev.kaas.broker.cluster;

import dev.kaas.common.model.Assignment;

/**
 * CDI event fired on the assignment thread once an assignment's partitions are open or closed and
 * {@link ClusterView} shows it. Coordinators observe it to follow their slots, so the applier
 * never calls them and the packages keep one direction: coordinators depend on {@code cluster},
 * never the other way round.
 */
public record AssignmentApplied(Assignment assignment) {
}
