package dev.kaas.broker.data;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * KIP-890 part 1: asks the transaction coordinator of {@code transactionalId} whether each
 * partition is part of the producer's ongoing transaction (Apache's AddPartitionsToTxn v4
 * {@code verify_only}, which kaas brokers send each other through the volume instead). Declared
 * here so the produce and offset paths need not know the coordinator.
 */
public interface TxnVerifier {
    /** {@code kaas.transaction.partition-verification-enable}, Apache's {@code transaction.partition.verification.enable}. */
    boolean enabled();

    /**
     * Completes with one error per partition, as the coordinator answered: NONE when the partition
     * is in the transaction, else Apache's codes (INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING,
     * PRODUCER_FENCED, CONCURRENT_TRANSACTIONS, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or
     * NETWORK_EXCEPTION when the coordinator did not answer in time). Never completes exceptionally.
     */
    CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short producerEpoch,
                                                         Set<TopicPartition> partitions);

    /**
     * What a refused verification makes of the write, as Apache 3.7's {@code AddPartitionsToTxnManager}
     * and {@code ReplicaManager}: a fenced producer is INVALID_PRODUCER_EPOCH, and a coordinator that
     * cannot answer now is NOT_ENOUGH_REPLICAS, which producers retry; the rest stands.
     */
    static Errors forAppend(Errors verification) {
        return switch (verification) {
            case PRODUCER_FENCED -> Errors.INVALID_PRODUCER_EPOCH;
            case CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR ->
                    Errors.NOT_ENOUGH_REPLICAS;
            default -> verification;
        };
    }
}
