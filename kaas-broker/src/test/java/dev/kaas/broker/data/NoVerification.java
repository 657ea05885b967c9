package dev.kaas.broker.data;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/** For handler tests without a transaction coordinator: verification off, as with {@code partition-verification-enable=false}. */
final class NoVerification implements TxnVerifier {
    @Override
    public boolean enabled() {
        return false;
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short producerEpoch,
                                                                Set<TopicPartition> partitions) {
        throw new AssertionError("verification is off");
    }
}
