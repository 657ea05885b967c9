package dev.kaas.broker.txn;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

/**
 * One transactional id's coordinator state, as persisted in its slot file (Apache's
 * {@code TransactionMetadata}, immutable: a transition is a new value, applied once durable).
 *
 * @param producerId       the current producer id
 * @param lastProducerId   the id before the last rotation (KIP-360 retries), or -1
 * @param producerEpoch    the current epoch
 * @param lastProducerEpoch the epoch before the last bump, or -1 (a retried InitProducerId gets the current one again)
 * @param partitions       the partitions of the open (or finishing) transaction; {@code __consumer_offsets-N} stands for group slot N
 * @param startTimestamp   when the open transaction began (first AddPartitions), or -1
 */
public record TxnMetadata(String transactionalId, long producerId, long lastProducerId, short producerEpoch,
                          short lastProducerEpoch, int timeoutMs, TxnState state, List<TopicPartition> partitions,
                          long startTimestamp, long lastUpdateTimestamp) {
    public TxnMetadata {
        partitions = List.copyOf(partitions);
    }

    /** Epoch at which Apache rotates to a new producer id rather than bump again. */
    static boolean epochExhausted(short epoch) {
        return epoch >= Short.MAX_VALUE - 1;
    }

    boolean exhausted() {
        return epochExhausted(producerEpoch);
    }

    Set<TopicPartition> partitionSet() {
        Set<TopicPartition> s = new TreeSet<>((a, b) -> a.topic().equals(b.topic())
                ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        s.addAll(partitions);
        return s;
    }

    TxnMetadata to(TxnState next, long pid, long lastPid, short epoch, short lastEpoch, int timeout, List<TopicPartition> parts,
                   long start, long now) {
        if (!state.canTransitionTo(next)) {
            throw new IllegalStateException("transactional id " + transactionalId + ": no transition from " + state + " to " + next);
        }
        return new TxnMetadata(transactionalId, pid, lastPid, epoch, lastEpoch, timeout, next, parts, start, now);
    }
}
