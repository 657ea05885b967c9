package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ErrorMapper;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;

/** What the transaction APIs share: Apache's per-version error downgrades and the partition checks done before the coordinator. */
final class TxnRequests {
    private TxnRequests() {
    }

    /** Clients older than KIP-588 know INVALID_PRODUCER_EPOCH, not PRODUCER_FENCED (Apache downgrades it per API). */
    static Errors forVersion(Errors error, short version, short firstVersionWithFenced) {
        return error == Errors.PRODUCER_FENCED && version < firstVersionWithFenced ? Errors.INVALID_PRODUCER_EPOCH : error;
    }

    /** A coordinator call that failed as a whole (not owned here, slot moving) as its error code. */
    static Errors coordinatorError(Throwable failure, String transactionalId) {
        return ErrorMapper.forCoordinator(failure, transactionalId);
    }

    /**
     * Apache's checks of AddPartitionsToTxn before the coordinator: internal topics are refused
     * (TOPIC_AUTHORIZATION_FAILED when {@code internalRefused}), unknown partitions get
     * UNKNOWN_TOPIC_OR_PARTITION, and when any partition fails the others get
     * OPERATION_NOT_ATTEMPTED. Empty when all may go to the coordinator.
     */
    static Map<TopicPartition, Errors> refusals(ClusterView view, Collection<TopicPartition> partitions, boolean internalRefused,
                                                java.util.function.Predicate<String> mayWrite) {
        Map<TopicPartition, Errors> bad = new LinkedHashMap<>();
        Map<String, Boolean> writable = new java.util.HashMap<>();
        for (TopicPartition tp : partitions) {
            // A client's partitions need WRITE on their topic, asked before their existence, as Apache's.
            if (internalRefused && (Topic.isInternal(tp.topic()) || !writable.computeIfAbsent(tp.topic(), mayWrite::test))) {
                bad.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
            } else if (!view.exists(tp)) {
                bad.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
        }
        if (bad.isEmpty()) {
            return bad;
        }
        Map<TopicPartition, Errors> out = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, bad.getOrDefault(tp, Errors.OPERATION_NOT_ATTEMPTED));
        }
        return out;
    }
}
