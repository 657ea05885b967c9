package dev.kaas.broker.group;

import java.io.IOException;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a shard's committed offsets live. The file binding is {@link GroupFiles}; tests use a
 * map. {@code save} returns only once the state is durable and the slot still ours.
 */
public interface GroupStore {
    record StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets) {
    }

    Map<String, StoredGroup> loadAll() throws IOException;

    /** @throws org.apache.kafka.common.errors.NotCoordinatorException when the slot was taken over */
    void save(StoredGroup group) throws IOException;

    void delete(String groupId) throws IOException;
}
