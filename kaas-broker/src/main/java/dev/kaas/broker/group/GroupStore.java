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
     * A group's durable state: committed offsets, the transactional offsets still pending per
     * producer id (TxnOffsetCommit before its transaction's marker), and the membership of its last
     * completed rebalance (null: none to restore, the group loads Empty).
     */
    record StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets,
                       Map<Long, PendingTxnOffsets> pending, StoredMembership membership) {
        public StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets,
                           Map<Long, PendingTxnOffsets> pending) {
            this(groupId, protocolType, offsets, pending, null);
        }

        public StoredGroup(String groupId, String protocolType, Map<TopicPartition, CommittedOffset> offsets) {
            this(groupId, protocolType, offsets, Map.of());
        }
    }

    /**
     * Apache's {@code GroupMetadataValue}: the generation a rebalance completed, with its protocol,
     * leader and members (each with the subscription of the chosen protocol and its assignment),
     * so that a coordinator taking the slot over keeps the group Stable and its members keep their
     * generation, as Apache's coordinator does when it loads {@code __consumer_offsets}.
     */
    record StoredMembership(int generationId, String protocolName, String leaderId, java.util.List<StoredMember> members) {
    }

    record StoredMember(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs,
                        int sessionTimeoutMs, byte[] subscription, byte[] assignment) {
    }

    /** Offsets a transaction committed, visible only once its COMMIT marker reaches the group (KIP-98). */
    record PendingTxnOffsets(short producerEpoch, Map<TopicPartition, CommittedOffset> offsets) {
    }

    Map<String, StoredGroup> loadAll() throws IOException;

    /** @throws org.apache.kafka.common.errors.NotCoordinatorException when the slot was taken over */
    void save(StoredGroup group) throws IOException;

    void delete(String groupId) throws IOException;
}
