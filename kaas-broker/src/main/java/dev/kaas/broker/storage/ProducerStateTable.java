package dev.kaas.broker.storage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Idempotent-producer state of one partition, as Apache's {@code ProducerStateManager} keeps it:
 * per producer ID the current epoch and the metadata of its last five batches, which is the
 * dedupe window (a producer has at most five requests in flight).
 *
 * <p>Rules (Apache 3.7): an older epoch is INVALID_PRODUCER_EPOCH; a new epoch must start at
 * sequence 0 unless the producer is unknown; in the same epoch a batch must start right after
 * the last sequence (with int wrap-around); a batch that matches one of the cached five is a
 * duplicate and gets the offsets it was first written at. An unknown producer may start at any
 * sequence (its state may have been lost to retention).
 *
 * <p>Transactions (Apache's {@code ProducerAppendInfo}): a producer's first transactional batch
 * opens its transaction on this partition at that batch's offset; a COMMIT or ABORT marker
 * closes it. A marker from an older producer epoch is INVALID_PRODUCER_EPOCH, one from an older
 * coordinator epoch than the last marker's is TRANSACTION_COORDINATOR_FENCED (a deposed
 * coordinator). A non-transactional batch while the producer's transaction is open is
 * INVALID_TXN_STATE. The open transactions' first offsets bound the last stable offset.
 *
 * <p>Verification (KIP-890 part 1): a producer's first transactional batch here needs the
 * coordinator's confirmation ({@link VerificationGuards}); its later batches in the same
 * transaction do not.
 *
 * <p>Threading: only the partition's serial executor touches it; snapshots copy.
 */
final class ProducerStateTable {
    static final int WINDOW = 5;

    record BatchMeta(int firstSeq, int lastSeq, long firstOffset, long lastOffset, long timestamp) {
    }

    /**
     * A producer's state as snapshotted. {@code coordinatorEpoch} and {@code txnFirstOffset} are
     * null in snapshots written before transactions existed (no marker seen, none open).
     */
    record Entry(long producerId, short epoch, List<BatchMeta> batches, Integer coordinatorEpoch, Long txnFirstOffset) {
        Entry(long producerId, short epoch, List<BatchMeta> batches) {
            this(producerId, epoch, batches, null, null);
        }
    }

    /** A transaction a marker closed on this partition: data from {@code firstOffset} to the marker at {@code lastOffset}. */
    record CompletedTxn(long producerId, long firstOffset, long lastOffset, boolean aborted) {
    }

    /** A producer with a transaction open on this partition (DescribeProducers, the LSO). */
    record Active(long producerId, short epoch, int lastSequence, long lastTimestamp, int coordinatorEpoch, long txnFirstOffset) {
    }

    private static final class State {
        short epoch;
        int coordinatorEpoch = -1;
        long txnFirstOffset = -1;
        final ArrayDeque<BatchMeta> batches = new ArrayDeque<>(WINDOW);
    }

    private final Map<Long, State> producers = new HashMap<>();
    /** Rebuilt from a log whose head was deleted: a producer may be missing for that reason alone. */
    private boolean forgetful;
    private final VerificationGuards guards = new VerificationGuards();

    /**
     * Checks a batch against the producer's state without changing it.
     *
     * @return the cached metadata when it is a duplicate, else null
     * @throws InvalidProducerEpochException  for a stale epoch
     * @throws OutOfOrderSequenceException   for a sequence gap
     */
    BatchMeta check(long producerId, short epoch, int firstSeq, int lastSeq) {
        State s = producers.get(producerId);
        if (s == null) {
            // Apache accepts any sequence here, because it may have dropped the producer's state
            // with its records. This table drops nothing, and a takeover reads the same log; unless
            // it was rebuilt after records were deleted, a first sequence past 0 means the batches
            // before it never landed: a request the new leader refused while opening the partition
            // whose successor arrived once it was open. Taken, those batches would stay out of
            // order for good (the client retries them until delivery.timeout.ms); refused, the
            // client retries this one after them.
            if (firstSeq != 0 && !forgetful) {
                throw new OutOfOrderSequenceException("Out of order sequence number for producer " + producerId
                        + " at offset: " + firstSeq + " (incoming seq. number), -1 (current end sequence number)");
            }
            return null;
        }
        if (epoch < s.epoch) {
            throw new InvalidProducerEpochException("Epoch of producer " + producerId + " at offset is " + epoch
                    + ", which is smaller than the last seen epoch " + s.epoch);
        }
        if (epoch > s.epoch) {
            if (firstSeq != 0) {
                throw new OutOfOrderSequenceException("Invalid sequence number for new epoch of producer " + producerId
                        + ": " + epoch + " (request epoch), " + firstSeq + " (seq. number), " + s.epoch + " (current producer epoch)");
            }
            return null;
        }
        for (BatchMeta b : s.batches) {
            if (b.firstSeq() == firstSeq && b.lastSeq() == lastSeq) {
                return b;
            }
        }
        if (!s.batches.isEmpty()) {
            int last = s.batches.peekLast().lastSeq();
            int next = last == Integer.MAX_VALUE ? 0 : last + 1;
            if (firstSeq != next) {
                throw new OutOfOrderSequenceException("Out of order sequence number for producer " + producerId
                        + " at offset: " + firstSeq + " (incoming seq. number), " + last + " (current end sequence number)");
            }
        }
        return null;
    }

    /**
     * Checks that a data batch fits the producer's transaction state: a non-transactional batch
     * may not interleave with the producer's open transaction (Apache 3.7's message).
     */
    void checkTransactional(long producerId, boolean transactional) {
        State s = producers.get(producerId);
        if (!transactional && s != null && s.txnFirstOffset >= 0) {
            throw new InvalidTxnStateException("Expected transactional write from producer " + producerId + " at offset "
                    + s.txnFirstOffset + " but the batch is not transactional");
        }
    }

    /**
     * A transactional batch of a producer with a verification open here waits its turn, before
     * any other check: its sequence can only be judged once the batches before it are written.
     *
     * @throws VerificationGuards.Required with the batch's place in the queue
     */
    void queueIfVerifying(long producerId, short epoch, VerificationGuards.Ticket presented, long nowMs) {
        if (presented == VerificationGuards.Ticket.UNVERIFIED && guards.open(producerId)) {
            throw new VerificationGuards.Required(guards.join(producerId, epoch, nowMs));
        }
    }

    /**
     * Checks that a transactional data batch may be written (Apache 3.7's
     * {@code analyzeAndValidateProducerState}): the producer's transaction is already open here,
     * or {@code presented} holds a verification the coordinator confirmed and no marker voided.
     *
     * @throws VerificationGuards.Required for a first attempt: verify, then append again with the ticket
     * @throws InvalidTxnStateException     when the verification failed or a marker came in between
     */
    void checkVerified(long producerId, short epoch, VerificationGuards.Ticket presented, long nowMs) {
        if (presented == VerificationGuards.Ticket.DISABLED || txnFirstOffset(producerId) >= 0) {
            return;
        }
        if (presented == VerificationGuards.Ticket.UNVERIFIED) {
            throw new VerificationGuards.Required(guards.join(producerId, epoch, nowMs));
        }
        if (!guards.confirmed(producerId, presented)) {
            throw new InvalidTxnStateException("Record was not part of an ongoing transaction (producer " + producerId + ")");
        }
    }

    /** The request holding {@code ticket} was written or refused; see {@link VerificationGuards#done}. */
    void verificationDone(long producerId, VerificationGuards.Ticket ticket) {
        guards.done(producerId, ticket);
    }

    /**
     * Records a batch that was written (or recovered from the log).
     *
     * @return the batch's offset when it opened a transaction on this partition, else -1
     */
    long update(long producerId, short epoch, int firstSeq, int lastSeq, long firstOffset, long lastOffset, long timestamp,
                boolean transactional) {
        if (producerId == RecordBatch.NO_PRODUCER_ID) {
            return -1;
        }
        State s = producers.computeIfAbsent(producerId, id -> new State());
        if (epoch != s.epoch) {
            s.epoch = epoch;
            s.batches.clear();
        }
        long opened = -1;
        if (transactional && s.txnFirstOffset < 0) {
            s.txnFirstOffset = firstOffset;
            opened = firstOffset;
        }
        if (firstSeq == RecordBatch.NO_SEQUENCE) {
            return opened;
        }
        if (s.batches.size() == WINDOW) {
            s.batches.pollFirst();
        }
        s.batches.addLast(new BatchMeta(firstSeq, lastSeq, firstOffset, lastOffset, timestamp));
        return opened;
    }

    /**
     * Checks a COMMIT/ABORT marker against the producer's state without changing it.
     *
     * @throws InvalidProducerEpochException          for a marker older than the producer's epoch
     * @throws TransactionCoordinatorFencedException  for a marker from an older coordinator epoch
     */
    void checkMarker(long producerId, short epoch, int coordinatorEpoch) {
        State s = producers.get(producerId);
        if (s == null) {
            return;
        }
        if (epoch < s.epoch) {
            throw new InvalidProducerEpochException("Epoch of producer " + producerId + " in the transaction marker is " + epoch
                    + ", which is smaller than the last seen epoch " + s.epoch);
        }
        if (s.coordinatorEpoch > coordinatorEpoch) {
            throw new TransactionCoordinatorFencedException("Invalid coordinator epoch for producer " + producerId + ": "
                    + coordinatorEpoch + " (zombie), " + s.coordinatorEpoch + " (current)");
        }
    }

    /**
     * Records a marker written at {@code markerOffset}: the producer's transaction here (if any)
     * ends. A marker of a newer epoch bumps the producer's epoch and clears its window, as Apache.
     *
     * @return the transaction it closed; null when none was open (as Apache: no index entry, no effect on the LSO)
     */
    CompletedTxn completeTxn(long producerId, short epoch, int coordinatorEpoch, long markerOffset, boolean abort) {
        State s = producers.computeIfAbsent(producerId, id -> new State());
        if (epoch != s.epoch) {
            s.epoch = epoch;
            s.batches.clear();
        }
        s.coordinatorEpoch = coordinatorEpoch;
        // The KAFKA-14402 race: a verification that began before this marker must not open a new transaction.
        guards.clear(producerId);
        long first = s.txnFirstOffset;
        s.txnFirstOffset = -1;
        return first < 0 ? null : new CompletedTxn(producerId, first, markerOffset, abort);
    }

    /** The first offset of {@code producerId}'s open transaction here, or -1. */
    long txnFirstOffset(long producerId) {
        State s = producers.get(producerId);
        return s == null ? -1 : s.txnFirstOffset;
    }

    /** Every producer known here, with its open transaction if any (DescribeProducers). */
    List<Active> active() {
        List<Active> out = new ArrayList<>(producers.size());
        producers.forEach((id, s) -> {
            BatchMeta last = s.batches.peekLast();
            out.add(new Active(id, s.epoch, last == null ? -1 : last.lastSeq(), last == null ? -1 : last.timestamp(),
                    s.coordinatorEpoch, s.txnFirstOffset));
        });
        return out;
    }

    int size() {
        return producers.size();
    }

    List<Entry> snapshot() {
        List<Entry> out = new ArrayList<>(producers.size());
        producers.forEach((id, s) -> out.add(new Entry(id, s.epoch, List.copyOf(s.batches),
                s.coordinatorEpoch, s.txnFirstOffset)));
        return out;
    }

    boolean forgetful() {
        return forgetful;
    }

    /** Producers whose records all went before the log start may be missing: accept them at any sequence, as Apache does. */
    void forgetful(boolean forgetful) {
        this.forgetful = forgetful;
    }

    void restore(List<Entry> entries) {
        producers.clear();
        for (Entry e : entries) {
            State s = new State();
            s.epoch = e.epoch();
            s.batches.addAll(e.batches());
            s.coordinatorEpoch = e.coordinatorEpoch() == null ? -1 : e.coordinatorEpoch();
            s.txnFirstOffset = e.txnFirstOffset() == null ? -1 : e.txnFirstOffset();
            producers.put(e.producerId(), s);
        }
    }
}
