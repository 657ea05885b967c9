package dev.kaas.broker.txn;

import dev.kaas.broker.group.Scheduler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The runtime of one transaction slot this broker owns: the {@link TxnStateMachine} with its
 * writes made durable through a {@link TxnStore} before any answer, markers sent after a
 * Prepare state is durable and retried until every partition has one, then the Complete state
 * written; timers for timed-out transactions and expired ids.
 *
 * <p>Threading: every method runs on the slot's serial executor ({@code executor}); marker and
 * producer-id callbacks post back onto it. Time comes from {@code clock}, timers from
 * {@code scheduler}, so tests drive it without sleeps.
 */
public final class TxnSlot {
    private static final Logger LOG = Logger.getLogger(TxnSlot.class);
    static final long MARKER_RETRY_MIN_MS = 20;
    static final long MARKER_RETRY_MAX_MS = 1_000;

    /** InitProducerId's answer. */
    public record Init(Errors error, long producerId, short epoch) {
    }

    private final int slot;
    private final int coordinatorEpoch;
    private final TxnStateMachine machine;
    private final TxnStore store;
    private final MarkerWriter markers;
    private final Supplier<CompletableFuture<Long>> producerIds;
    private final Scheduler scheduler;
    private final LongSupplier clock;
    private final Executor executor;
    private final long abortCheckIntervalMs;
    private final long expireCheckIntervalMs;
    private boolean closed;
    private boolean lost;
    /** AddPartitions of a producer's next transaction that arrived while its last one's markers were still out. */
    private final java.util.Map<String, java.util.List<Runnable>> waitingForMarkers = new java.util.HashMap<>();
    private long parkedSeq;

    public TxnSlot(int slot, int coordinatorEpoch, TxnStateMachine machine, TxnStore store, MarkerWriter markers,
                   Supplier<CompletableFuture<Long>> producerIds, Scheduler scheduler, LongSupplier clock, Executor executor,
                   long abortCheckIntervalMs, long expireCheckIntervalMs) {
        this.slot = slot;
        this.coordinatorEpoch = coordinatorEpoch;
        this.machine = machine;
        this.store = store;
        this.markers = markers;
        this.producerIds = producerIds;
        this.scheduler = scheduler;
        this.clock = clock;
        this.executor = executor;
        this.abortCheckIntervalMs = abortCheckIntervalMs;
        this.expireCheckIntervalMs = expireCheckIntervalMs;
    }

    /**
     * Takeover, after the fence: loads the newest slot file at or below our epoch, writes it again
     * under our own epoch (so a deposed owner's late write to its file is never read by anyone),
     * then finishes every Prepare transaction by sending its markers again. Ongoing ones are left
     * to their timeout, as Apache.
     */
    public void open() throws IOException {
        for (TxnMetadata m : store.load()) {
            machine.apply(m);
        }
        store.save(machine.all());
        for (TxnMetadata m : machine.all()) {
            if (m.state().preparing()) {
                sendMarkers(m);
            }
        }
        scheduler.schedule("abort-timed-out", abortCheckIntervalMs, this::abortTimedOut);
        scheduler.schedule("expire-ids", expireCheckIntervalMs, this::expireIds);
    }

    public void close() {
        closed = true;
        store.close();
        // Whoever waited for markers is answered now: the slot's next owner serves the retry.
        List<Runnable> parked = new ArrayList<>();
        waitingForMarkers.values().forEach(parked::addAll);
        waitingForMarkers.clear();
        parked.forEach(Runnable::run);
    }

    public boolean usable() {
        return !closed && !lost;
    }

    public TxnStateMachine state() {
        return machine;
    }

    public int coordinatorEpoch() {
        return coordinatorEpoch;
    }

    public CompletableFuture<Init> initProducerId(String id, int timeoutMs, long expectedPid, short expectedEpoch) {
        CompletableFuture<Init> answer = new CompletableFuture<>();
        init(id, timeoutMs, expectedPid, expectedEpoch, -1, answer);
        return answer;
    }

    private void init(String id, int timeoutMs, long expectedPid, short expectedEpoch, long newPid, CompletableFuture<Init> answer) {
        if (!usable()) {
            answer.complete(new Init(Errors.NOT_COORDINATOR, -1, (short) -1));
            return;
        }
        TxnStateMachine.Decision d = machine.initProducerId(id, timeoutMs, expectedPid, expectedEpoch, newPid, clock.getAsLong());
        if (d instanceof TxnStateMachine.Decision.NeedProducerId) {
            producerIds.get().whenComplete((pid, e) -> executor.execute(() -> {
                if (e != null) {
                    LOG.warnf("no producer id for transactional id in slot=%d: %s", slot, e.toString());
                    answer.complete(new Init(Errors.COORDINATOR_NOT_AVAILABLE, -1, (short) -1));
                } else {
                    init(id, timeoutMs, expectedPid, expectedEpoch, pid, answer);
                }
            }));
            return;
        }
        Errors error = decide(d);
        TxnMetadata now = machine.get(id);
        if (error == Errors.NONE && now != null) {
            answer.complete(new Init(Errors.NONE, now.producerId(), now.producerEpoch()));
        } else {
            answer.complete(new Init(error, -1, (short) -1));
        }
    }

    /**
     * AddPartitionsToTxn / AddOffsetsToTxn. A producer's next transaction usually asks to add its
     * first partition right after EndTxn was answered, while that transaction's markers are still
     * being written: instead of CONCURRENT_TRANSACTIONS at once (which costs the Java producer a
     * 20 ms back-off) the request waits up to {@link #MARKER_WAIT_MS} for them and is then decided
     * afresh; past that it gets CONCURRENT_TRANSACTIONS, as Apache would have answered at once.
     */
    public CompletableFuture<Errors> addPartitions(String id, long producerId, short epoch, Set<TopicPartition> partitions) {
        CompletableFuture<Errors> answer = new CompletableFuture<>();
        addPartitions(id, producerId, epoch, partitions, answer, true);
        return answer;
    }

    /** How long an AddPartitions waits for the previous transaction's markers before CONCURRENT_TRANSACTIONS. */
    static final long MARKER_WAIT_MS = 100;

    private void addPartitions(String id, long producerId, short epoch, Set<TopicPartition> partitions, CompletableFuture<Errors> answer,
                               boolean mayWait) {
        if (!usable()) {
            answer.complete(Errors.NOT_COORDINATOR);
            return;
        }
        TxnStateMachine.Decision d = machine.addPartitions(id, producerId, epoch, partitions, clock.getAsLong());
        TxnMetadata m = machine.get(id);
        boolean markersOut = d instanceof TxnStateMachine.Decision.Answer a && a.error() == Errors.CONCURRENT_TRANSACTIONS
                && m != null && m.state().preparing();
        if (!markersOut || !mayWait) {
            answer.complete(decide(d));
            return;
        }
        String key = "wait-markers " + id + " " + (parkedSeq++);
        Runnable retry = () -> {
            if (!answer.isDone()) {
                scheduler.cancel(key);
                addPartitions(id, producerId, epoch, partitions, answer, false);
            }
        };
        waitingForMarkers.computeIfAbsent(id, k -> new ArrayList<>()).add(retry);
        scheduler.schedule(key, MARKER_WAIT_MS, () -> {
            List<Runnable> parked = waitingForMarkers.get(id);
            if (parked != null && parked.remove(retry) && parked.isEmpty()) {
                waitingForMarkers.remove(id);
            }
            retry.run();
        });
    }

    public java.util.Map<TopicPartition, Errors> verify(String id, long producerId, short epoch, Set<TopicPartition> partitions) {
        if (!usable()) {
            java.util.Map<TopicPartition, Errors> out = new java.util.LinkedHashMap<>();
            partitions.forEach(tp -> out.put(tp, Errors.NOT_COORDINATOR));
            return out;
        }
        return machine.verify(id, producerId, epoch, partitions);
    }

    public Errors endTxn(String id, long producerId, short epoch, boolean commit) {
        if (!usable()) {
            return Errors.NOT_COORDINATOR;
        }
        return decide(machine.endTxn(id, producerId, epoch, commit, clock.getAsLong()));
    }

    private Errors decide(TxnStateMachine.Decision d) {
        if (d instanceof TxnStateMachine.Decision.Answer a) {
            return a.error();
        }
        TxnStateMachine.Decision.Write w = (TxnStateMachine.Decision.Write) d;
        Errors failed = persist(w.next());
        if (failed != null) {
            return failed;
        }
        if (w.sendMarkers()) {
            sendMarkers(w.next());
        }
        return w.answer();
    }

    /** Durable first, then current: null on success, else the error the request gets. */
    private Errors persist(TxnMetadata next) {
        try {
            store.save(machine.with(next));
        } catch (NotCoordinatorException e) {
            lost = true;
            LOG.warnf("transaction slot taken over slot=%d epoch=%d: %s", slot, coordinatorEpoch, e.getMessage());
            return Errors.NOT_COORDINATOR;
        } catch (IOException | RuntimeException e) {
            LOG.errorf(e, "could not write transaction slot slot=%d epoch=%d", slot, coordinatorEpoch);
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        machine.apply(next);
        return null;
    }

    private void sendMarkers(TxnMetadata m) {
        Set<TopicPartition> remaining = ConcurrentHashMap.newKeySet();
        remaining.addAll(m.partitions());
        if (remaining.isEmpty()) {
            completeIfCurrent(m);
            return;
        }
        for (TopicPartition tp : m.partitions()) {
            deliver(m, tp, remaining, MARKER_RETRY_MIN_MS);
        }
    }

    private void deliver(TxnMetadata m, TopicPartition tp, Set<TopicPartition> remaining, long backoffMs) {
        if (!usable() || !stillFinishing(m)) {
            // A retry after the slot was lost or the transaction moved on: its next owner sends what is left.
            return;
        }
        boolean commit = m.state() == TxnState.PREPARE_COMMIT;
        CompletableFuture<Void> sent;
        try {
            sent = markers.write(slot, tp, m.producerId(), m.producerEpoch(), coordinatorEpoch, commit);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((v, e) -> executor.execute(() -> {
            if (!usable() || !stillFinishing(m)) {
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause == null || cause instanceof UnknownTopicOrPartitionException) {
                remaining.remove(tp);
                if (remaining.isEmpty()) {
                    completeIfCurrent(m);
                }
            } else if (cause instanceof InvalidProducerEpochException || cause instanceof TransactionCoordinatorFencedException) {
                // As Apache: a stale marker means a newer coordinator or producer epoch took over; it finishes the transaction.
                LOG.warnf("marker refused, stop sending transactionalId=%s partition=%s: %s", m.transactionalId(), tp, cause.getMessage());
            } else {
                LOG.debugf("marker not written yet, retrying in %d ms transactionalId=%s partition=%s: %s", backoffMs,
                        m.transactionalId(), tp, cause.toString());
                scheduler.schedule("marker " + m.transactionalId() + " " + tp, backoffMs,
                        () -> deliver(m, tp, remaining, Math.min(MARKER_RETRY_MAX_MS, backoffMs * 2)));
            }
        }));
    }

    private boolean stillFinishing(TxnMetadata m) {
        TxnMetadata now = machine.get(m.transactionalId());
        return now != null && now.state() == m.state() && now.producerId() == m.producerId() && now.producerEpoch() == m.producerEpoch();
    }

    /**
     * Every marker is written: CompleteCommit/CompleteAbort, applied at once and written with the
     * slot's next write, not on its own. The decision was durable with the Prepare state; if the
     * completion is lost to a crash, the slot's next owner finds Prepare and sends the markers
     * again, which close nothing twice. Apache likewise appends it without waiting for a flush.
     */
    private void completeIfCurrent(TxnMetadata m) {
        TxnMetadata done = machine.complete(m.transactionalId(), m.producerId(), m.producerEpoch(), clock.getAsLong());
        if (done == null) {
            return;
        }
        machine.apply(done);
        List<Runnable> parked = waitingForMarkers.remove(m.transactionalId());
        if (parked != null) {
            parked.forEach(Runnable::run);
        }
    }

    /** Apache's abortTimedOutTransactions: each expired Ongoing transaction aborts under a bumped epoch. */
    void abortTimedOut() {
        if (!usable()) {
            return;
        }
        for (TxnMetadata next : machine.timedOut(clock.getAsLong())) {
            LOG.infof("aborting timed-out transaction transactionalId=%s producerId=%d epoch=%d timeoutMs=%d",
                    next.transactionalId(), next.producerId(), next.producerEpoch(), next.timeoutMs());
            if (persist(next) == null) {
                sendMarkers(next);
            }
        }
        scheduler.schedule("abort-timed-out", abortCheckIntervalMs, this::abortTimedOut);
    }

    void expireIds() {
        if (!usable()) {
            return;
        }
        var ids = machine.expired(clock.getAsLong());
        if (!ids.isEmpty()) {
            try {
                store.save(machine.without(ids));
                ids.forEach(machine::remove);
                LOG.infof("expired %d transactional ids slot=%d", ids.size(), slot);
            } catch (NotCoordinatorException e) {
                lost = true;
            } catch (IOException | RuntimeException e) {
                LOG.warnf("could not expire transactional ids slot=%d: %s", slot, e.toString());
            }
        }
        scheduler.schedule("expire-ids", expireCheckIntervalMs, this::expireIds);
    }
}
