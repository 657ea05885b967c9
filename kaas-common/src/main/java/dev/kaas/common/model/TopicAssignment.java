package dev.kaas.common.model;

import java.util.List;

/** A catalog topic together with the placement of each of its partitions. */
public record TopicAssignment(TopicSpec topic, List<PartitionAssignment> partitions) {
    public TopicAssignment {
        partitions = List.copyOf(partitions);
    }
}
