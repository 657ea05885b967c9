package dev.kaas.broker.txn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;

/**
 * The transactions of one coordinator slot as a pure state machine (Apache 3.7's
 * {@code TransactionCoordinator} and {@code TransactionMetadata} rules, see
 * {@code src/docs/transactions.md}). A handler decides; it changes nothing. The runtime
 * ({@link TxnSlot}) persists a {@link Decision.Write} to the slot file and only then
 * {@link #apply applies} it and answers, so every answer reflects durable state.
 *
 * <p>Not thread-safe: one slot's calls run one at a time on its serial executor. Time is passed in.
 */
public final class TxnStateMachine {
    /** Stands for the offsets of group slot N inside a transaction's partition set, as Apache's {@code __consumer_offsets-N}. */
    public static final String GROUP_OFFSETS = "__consumer_offsets";

    /** What a handler decided. */
    public sealed interface Decision {
        /** Nothing to write: answer {@code error} ({@code current} may be null). */
        record Answer(Errors error, TxnMetadata current) implements Decision {
        }

        /** Persist {@code next}, apply it, then answer {@code answer}; with {@code sendMarkers}, markers follow. */
        record Write(TxnMetadata next, Errors answer, boolean sendMarkers) implements Decision {
        }

        /** InitProducerId needs a fresh producer id: call again with one. */
        record NeedProducerId() implements Decision {
        }
    }

    private final int maxTimeoutMs;
    private final long idExpirationMs;
    private final Map<String, TxnMetadata> txns = new HashMap<>();

    public TxnStateMachine(int maxTimeoutMs, long idExpirationMs) {
        this.maxTimeoutMs = maxTimeoutMs;
        this.idExpirationMs = idExpirationMs;
    }

    public TxnMetadata get(String transactionalId) {
        return txns.get(transactionalId);
    }

    public Collection<TxnMetadata> all() {
        return List.copyOf(txns.values());
    }

    /** Makes a persisted decision current (or loads the slot file's state). */
    public void apply(TxnMetadata next) {
        txns.put(next.transactionalId(), next);
    }

    public void remove(String transactionalId) {
        txns.remove(transactionalId);
    }

    /** The state with {@code next} applied: what the slot file must hold once a write is durable. */
    public Collection<TxnMetadata> with(TxnMetadata next) {
        Map<String, TxnMetadata> copy = new HashMap<>(txns);
        copy.put(next.transactionalId(), next);
        return copy.values();
    }

    public Collection<TxnMetadata> without(Collection<String> ids) {
        Map<String, TxnMetadata> copy = new HashMap<>(txns);
        ids.forEach(copy::remove);
        return copy.values();
    }

    /**
     * InitProducerId with a transactional id (KIP-98, KIP-360 when {@code expectedProducerId} is
     * not -1). A new id, or an exhausted epoch, needs {@code newProducerId}.
     */
    public Decision initProducerId(String id, int timeoutMs, long expectedProducerId, short expectedEpoch, long newProducerId, long now) {
        if (id.isEmpty()) {
            return new Decision.Answer(Errors.INVALID_REQUEST, null);
        }
        if (timeoutMs <= 0 || timeoutMs > maxTimeoutMs) {
            return new Decision.Answer(Errors.INVALID_TRANSACTION_TIMEOUT, null);
        }
        boolean expected = expectedProducerId != RecordBatch.NO_PRODUCER_ID;
        TxnMetadata m = txns.get(id);
        if (m == null) {
            if (newProducerId < 0) {
                return new Decision.NeedProducerId();
            }
            m = new TxnMetadata(id, newProducerId, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                    RecordBatch.NO_PRODUCER_EPOCH, timeoutMs, TxnState.EMPTY, List.of(), -1, now);
        }
        if (expected && !validProducerId(m, expectedProducerId, expectedEpoch)) {
            return new Decision.Answer(Errors.PRODUCER_FENCED, m);
        }
        switch (m.state()) {
            case PREPARE_COMMIT, PREPARE_ABORT:
                return new Decision.Answer(Errors.CONCURRENT_TRANSACTIONS, m);
            case ONGOING:
                // Apache's prepareFenceProducerEpoch: the open transaction is aborted under a bumped
                // epoch, which fences the old producer on every partition the markers reach; this
                // caller retries on CONCURRENT_TRANSACTIONS until the abort completes.
                return new Decision.Write(fenceAndAbort(m, now), Errors.CONCURRENT_TRANSACTIONS, true);
            default:
                break;
        }
        if (m.exhausted() && (!expected || expectedEpoch == m.producerEpoch())) {
            if (newProducerId < 0) {
                return new Decision.NeedProducerId();
            }
            return new Decision.Write(m.to(TxnState.EMPTY, newProducerId, m.producerId(), (short) 0,
                    expected ? m.producerEpoch() : RecordBatch.NO_PRODUCER_EPOCH, timeoutMs, List.of(), -1, now), Errors.NONE, false);
        }
        short epoch;
        short lastEpoch;
        short bumped = (short) (m.producerEpoch() + 1);
        if (!expected) {
            epoch = bumped;
            lastEpoch = RecordBatch.NO_PRODUCER_EPOCH;
        } else if (m.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH || expectedEpoch == m.producerEpoch()) {
            epoch = bumped;
            lastEpoch = m.producerEpoch();
        } else if (expectedEpoch == m.lastProducerEpoch()) {
            // A retry of a bump whose answer was lost: the same epoch again.
            epoch = m.producerEpoch();
            lastEpoch = m.lastProducerEpoch();
        } else {
            return new Decision.Answer(Errors.PRODUCER_FENCED, m);
        }
        return new Decision.Write(m.to(TxnState.EMPTY, m.producerId(), m.lastProducerId(), epoch, lastEpoch, timeoutMs, List.of(),
                -1, now), Errors.NONE, false);
    }

    /** Apache's {@code isValidProducerId}: the expected id is current, or the previous one at an exhausted epoch (a retried rotation). */
    private static boolean validProducerId(TxnMetadata m, long pid, short epoch) {
        return m.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH || pid == m.producerId()
                || (pid == m.lastProducerId() && TxnMetadata.epochExhausted(epoch));
    }

    /** AddPartitionsToTxn and AddOffsetsToTxn (whose partition is the group's slot). */
    public Decision addPartitions(String id, long producerId, short epoch, Set<TopicPartition> partitions, long now) {
        TxnMetadata m = id.isEmpty() ? null : txns.get(id);
        Errors refused = checkProducer(id, m, producerId, epoch);
        if (refused != null) {
            return new Decision.Answer(refused, m);
        }
        if (m.state().preparing()) {
            return new Decision.Answer(Errors.CONCURRENT_TRANSACTIONS, m);
        }
        Set<TopicPartition> all = m.partitionSet();
        if (m.state() == TxnState.ONGOING && all.containsAll(partitions)) {
            return new Decision.Answer(Errors.NONE, m);
        }
        all.addAll(partitions);
        long start = TxnState.SETTLED.contains(m.state()) ? now : m.startTimestamp();
        return new Decision.Write(m.to(TxnState.ONGOING, m.producerId(), m.lastProducerId(), m.producerEpoch(),
                m.lastProducerEpoch(), m.timeoutMs(), new ArrayList<>(all), start, now), Errors.NONE, false);
    }

    /**
     * AddPartitionsToTxn v4 with {@code verify_only} (KIP-890): whether each partition is part of
     * the producer's transaction, without changing anything (Apache's handleVerifyPartitionsInTransaction).
     */
    public java.util.Map<TopicPartition, Errors> verify(String id, long producerId, short epoch, Set<TopicPartition> partitions) {
        TxnMetadata m = id.isEmpty() ? null : txns.get(id);
        Errors refused = checkProducer(id, m, producerId, epoch);
        if (refused == null && m.state().preparing()) {
            refused = Errors.CONCURRENT_TRANSACTIONS;
        }
        java.util.Map<TopicPartition, Errors> out = new java.util.LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, refused != null ? refused : m.partitionSet().contains(tp) ? Errors.NONE : Errors.INVALID_TXN_STATE);
        }
        return out;
    }

    /** EndTxn from a client: strict epoch equality; a retried EndTxn of a decided transaction is answered as the first. */
    public Decision endTxn(String id, long producerId, short epoch, boolean commit, long now) {
        TxnMetadata m = id.isEmpty() ? null : txns.get(id);
        Errors refused = checkProducer(id, m, producerId, epoch);
        if (refused != null) {
            return new Decision.Answer(refused, m);
        }
        return switch (m.state()) {
            case ONGOING -> new Decision.Write(m.to(commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, m.producerId(),
                    m.lastProducerId(), m.producerEpoch(), m.lastProducerEpoch(), m.timeoutMs(), m.partitions(),
                    m.startTimestamp(), now), Errors.NONE, true);
            case COMPLETE_COMMIT -> new Decision.Answer(commit ? Errors.NONE : Errors.INVALID_TXN_STATE, m);
            case COMPLETE_ABORT -> new Decision.Answer(commit ? Errors.INVALID_TXN_STATE : Errors.NONE, m);
            case PREPARE_COMMIT -> new Decision.Answer(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE, m);
            case PREPARE_ABORT -> new Decision.Answer(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS, m);
            case EMPTY -> new Decision.Answer(Errors.INVALID_TXN_STATE, m);
        };
    }

    private static Errors checkProducer(String id, TxnMetadata m, long producerId, short epoch) {
        if (id.isEmpty()) {
            return Errors.INVALID_REQUEST;
        }
        if (m == null || m.producerId() != producerId) {
            return Errors.INVALID_PRODUCER_ID_MAPPING;
        }
        if (m.producerEpoch() != epoch) {
            return Errors.PRODUCER_FENCED;
        }
        return null;
    }

    /** Every marker of a finishing transaction is written: CompleteCommit or CompleteAbort. Null when it is not finishing (any more). */
    public TxnMetadata complete(String id, long producerId, short epoch, long now) {
        TxnMetadata m = txns.get(id);
        if (m == null || !m.state().preparing() || m.producerId() != producerId || m.producerEpoch() != epoch) {
            return null;
        }
        TxnState done = m.state() == TxnState.PREPARE_COMMIT ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
        return m.to(done, m.producerId(), m.lastProducerId(), m.producerEpoch(), m.lastProducerEpoch(), m.timeoutMs(), List.of(),
                m.startTimestamp(), now);
    }

    /** Ongoing transactions past their {@code transaction.timeout.ms}: each aborted under a bumped epoch (Apache's abortTimedOutTransactions). */
    public List<TxnMetadata> timedOut(long now) {
        List<TxnMetadata> out = new ArrayList<>();
        for (TxnMetadata m : txns.values()) {
            if (m.state() == TxnState.ONGOING && m.startTimestamp() + m.timeoutMs() < now) {
                out.add(fenceAndAbort(m, now));
            }
        }
        return out;
    }

    /** Settled ids idle past {@code transactional.id.expiration.ms}. */
    public List<String> expired(long now) {
        List<String> out = new ArrayList<>();
        for (TxnMetadata m : txns.values()) {
            if (TxnState.SETTLED.contains(m.state()) && m.lastUpdateTimestamp() + idExpirationMs <= now) {
                out.add(m.transactionalId());
            }
        }
        return out;
    }

    /**
     * PrepareAbort under a bumped epoch: the markers carry it, so the partitions refuse the old
     * producer's later writes, and the coordinator its later requests. An epoch that cannot grow
     * stays (the next InitProducerId rotates the id).
     */
    private static TxnMetadata fenceAndAbort(TxnMetadata m, long now) {
        short epoch = m.producerEpoch() == Short.MAX_VALUE ? m.producerEpoch() : (short) (m.producerEpoch() + 1);
        return m.to(TxnState.PREPARE_ABORT, m.producerId(), m.lastProducerId(), epoch, RecordBatch.NO_PRODUCER_EPOCH,
                m.timeoutMs(), m.partitions(), m.startTimestamp(), now);
    }
}
