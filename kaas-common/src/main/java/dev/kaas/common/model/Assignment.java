package dev.kaas.common.model;

import java.util.List;
import java.util.Optional;

/**
 * The whole placement the controller publishes: written to {@code __cluster/assignment.json}
 * (temp + fsync + rename) and pushed down every broker stream, byte for byte the same.
 * {@code version} grows by one per publication; {@code controllerEpoch} is the lease's
 * transitions counter of the controller that wrote it, so a broker ignores anything from a
 * deposed controller.
 */
public record Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                         List<TopicAssignment> topics, List<SlotAssignment> groupSlots,
                         List<SlotAssignment> txnSlots) {
    public static final int SLOTS = 50;

    public Assignment {
        brokers = List.copyOf(brokers);
        topics = List.copyOf(topics);
        groupSlots = List.copyOf(groupSlots);
        txnSlots = List.copyOf(txnSlots);
    }

    public static Assignment empty(String clusterId) {
        return new Assignment(0, 0, clusterId, List.of(), List.of(), List.of(), List.of());
    }

    public Optional<TopicAssignment> topicByName(String name) {
        return topics.stream().filter(t -> t.topic().name().equals(name)).findFirst();
    }

    public Optional<TopicAssignment> topicById(String topicId) {
        return topics.stream().filter(t -> t.topic().topicId().equals(topicId)).findFirst();
    }

    public Optional<BrokerInfo> broker(int id) {
        return brokers.stream().filter(b -> b.id() == id).findFirst();
    }
}
