package dev.kaas.broker.storage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
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
 * <p>Threading: only the partition's serial executor touches it; snapshots copy.
 */
final class ProducerStateTable {
    static final int WINDOW = 5;

    record BatchMeta(int firstSeq, int lastSeq, long firstOffset, long lastOffset, long timestamp) {
    }

    record Entry(long producerId, short epoch, List<BatchMeta> batches) {
    }

    private static final class State {
        short epoch;
        final ArrayDeque<BatchMeta> batches = new ArrayDeque<>(WINDOW);
    }

    private final Map<Long, State> producers = new HashMap<>();

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

    /** Records a batch that was written (or recovered from the log). */
    void update(long producerId, short epoch, int firstSeq, int lastSeq, long firstOffset, long lastOffset, long timestamp) {
        if (producerId == RecordBatch.NO_PRODUCER_ID) {
            return;
        }
        State s = producers.computeIfAbsent(producerId, id -> new State());
        if (epoch != s.epoch) {
            s.epoch = epoch;
            s.batches.clear();
        }
        if (firstSeq == RecordBatch.NO_SEQUENCE) {
            return;
        }
        if (s.batches.size() == WINDOW) {
            s.batches.pollFirst();
        }
        s.batches.addLast(new BatchMeta(firstSeq, lastSeq, firstOffset, lastOffset, timestamp));
    }

    int size() {
        return producers.size();
    }

    List<Entry> snapshot() {
        List<Entry> out = new ArrayList<>(producers.size());
        producers.forEach((id, s) -> out.add(new Entry(id, s.epoch, List.copyOf(s.batches))));
        return out;
    }

    void restore(List<Entry> entries) {
        producers.clear();
        for (Entry e : entries) {
            State s = new State();
            s.epoch = e.epoch();
            s.batches.addAll(e.batches());
            producers.put(e.producerId(), s);
        }
    }
}
