package dev.kaas.broker.txn;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * Delivers one transaction marker: a COMMIT or ABORT control batch on a data partition, or the
 * commit or discard of a group's pending transactional offsets for {@code __consumer_offsets-N}.
 * The future completes once the marker is durable where it belongs; it fails with a retriable
 * exception when the partition cannot take it now (not led here yet, moving), with
 * {@link org.apache.kafka.common.errors.UnknownTopicOrPartitionException} when the partition is
 * gone (the coordinator stops sending to it, as Apache), and with
 * {@link org.apache.kafka.common.errors.InvalidProducerEpochException} or
 * {@link org.apache.kafka.common.errors.TransactionCoordinatorFencedException} when the marker
 * is stale (this coordinator was deposed).
 */
public interface MarkerWriter {
    /** @param slot the transaction slot whose coordinator sends it (a leader refuses a slot epoch older than its assignment's) */
    CompletableFuture<Void> write(int slot, TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit);
}
