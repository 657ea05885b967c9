package dev.kaas.broker.group;

import java.io.IOException;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a shard's committed offsets live. The file binding is {@link GroupFiles}; tests use a
 * map. {@code save} returns only once the state is durable and the slot still ours.
 */
public interface GroupStore {
    /**
     * A group's durable state: committed offsets, and the transactional offsets still pending per
     * producer id (TxnOffsetCommit before its transaction's marker).
     */
    record StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets,
                       Map<Long, PendingTxnOffsets> pending) {
        public StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets) {
            this(groupId, protocolType, offsets, Map.of());
        }
    }

    /** Offsets a transaction committed, visible only once its COMMIT marker reaches the group (KIP-98). */
    record PendingTxnOffsets(short producerEpoch, Map<TopicPartition, CommittedOffset> offsets) {
    }

    Map<String, StoredGroup> loadAll() throws IOException;

    /** @throws org.apache.kafka.common.errors.NotCoordinatorException when the slot was taken over */
    void save(StoredGroup group) throws IOException;

    void delete(String groupId) throws IOException;
}
