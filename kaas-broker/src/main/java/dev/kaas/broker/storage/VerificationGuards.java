package dev.kaas.broker.storage;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.Errors;

/**
 * KIP-890 part 1 verifications of one partition (or one group slot), Apache 3.7's
 * {@code VerificationStateEntry}: before a producer's first transactional write here is
 * accepted, the transaction coordinator must confirm that the partition is part of the
 * producer's ongoing transaction.
 *
 * <p>The <b>guard</b> closes the race with the transaction's end: it is created before the
 * coordinator is asked, and the write is accepted only if the same guard is still here when the
 * answer comes back. A marker for the producer removes it, so a verification that raced an abort
 * marker (the abort, then a late produce: KAFKA-14402) finds no guard and is refused instead of
 * opening a transaction no coordinator knows.
 *
 * <p>The <b>queue</b> keeps the producer's order. Apache handles one request per connection at a
 * time, so a producer's second request reaches the log only after its first was verified and
 * written. kaas handles a connection's requests concurrently, so every request of the producer
 * that arrives while a verification is open takes a {@link Ticket} and waits its turn: it is
 * checked (sequence, epoch, transaction) only once the one before it was written or refused.
 * The first request asks the coordinator; the others share its answer. The verification ends
 * when the last waiting request is done.
 *
 * <p>Everything is in memory: a new owner of the partition starts with none, and a request in
 * flight across the change fails and is retried by the client.
 *
 * <p>Threading: only the owner's serial executor calls the package's methods; a ticket's futures
 * may complete on any thread.
 */
public final class VerificationGuards {
    /** How long an abandoned verification is kept: far beyond any verification's bound. */
    static final long TTL_MS = 5 * 60_000;
    /** Above this many open verifications, the stale ones are dropped when another starts. */
    static final int PURGE_ABOVE = 1_000;

    /** One producer's open verification. Compared by identity. */
    private static final class Guard {
        final short epoch;
        final long createdMs;
        final CompletableFuture<Errors> outcome = new CompletableFuture<>();
        CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
        int waiting;

        Guard(short epoch, long createdMs) {
            this.epoch = epoch;
            this.createdMs = createdMs;
        }

        /** A later request may share it: same producer epoch, and not already refused (a refusal is not reused). */
        boolean shareableWith(short requestEpoch) {
            return epoch == requestEpoch && outcome.getNow(Errors.NONE) == Errors.NONE;
        }
    }

    /**
     * A request's place in a producer's verification, or one of the two modes a write starts in.
     * Whoever holds a ticket must finish it ({@link PartitionLog#verificationDone}), or, when the
     * partition's writer is gone, at least {@link #release()} it, or the requests behind it wait
     * for nothing.
     */
    public static final class Ticket {
        /** A write that needs no verification (recovery, tests, verification disabled). */
        public static final Ticket DISABLED = new Ticket(null, null, null, false);
        /** A client's write not verified yet: the first attempt of a transactional produce. */
        public static final Ticket UNVERIFIED = new Ticket(null, null, null, false);

        private final Guard guard;
        private final CompletableFuture<Void> previous;
        private final CompletableFuture<Void> turn;
        private final boolean asks;
        private boolean done;

        private Ticket(Guard guard, CompletableFuture<Void> previous, CompletableFuture<Void> turn, boolean asks) {
            this.guard = guard;
            this.previous = previous;
            this.turn = turn;
            this.asks = asks;
        }

        /** Whether this request asks the coordinator; the others wait for its {@link #outcome()}. */
        public boolean asks() {
            return asks;
        }

        /** The coordinator's answer; the asking request completes it (NONE: the partition is in the transaction). */
        public CompletableFuture<Errors> outcome() {
            return guard.outcome;
        }

        /** Completes once the request before this one was written or refused: its turn. */
        public CompletableFuture<Void> previous() {
            return previous;
        }

        /** Whether the coordinator answered this ticket's verification with a refusal (never for the two modes). */
        public boolean refused() {
            return guard != null && guard.outcome.getNow(Errors.NONE) != Errors.NONE;
        }

        /** Lets the next request go; idempotent, any thread. */
        public void release() {
            turn.complete(null);
        }

        @Override
        public String toString() {
            return this == DISABLED ? "Ticket[disabled]" : this == UNVERIFIED ? "Ticket[unverified]"
                    : "Ticket[" + Integer.toHexString(System.identityHashCode(guard)) + (asks ? ", asks]" : "]");
        }
    }

    /**
     * Thrown by an append that must wait for a verification: the caller settles the ticket's
     * outcome (when it {@link Ticket#asks()}), waits for its turn, and appends again with the
     * ticket. Nothing was written.
     */
    public static final class Required extends RuntimeException {
        private final transient Ticket ticket;

        Required(Ticket ticket) {
            super("the transaction coordinator must verify this partition first", null, false, false);
            this.ticket = ticket;
        }

        public Ticket ticket() {
            return ticket;
        }
    }

    private final Map<Long, Guard> guards = new HashMap<>();

    /** Whether the producer has a verification open here: its writes queue behind it. */
    boolean open(long producerId) {
        return guards.containsKey(producerId);
    }

    /**
     * Takes a place in the producer's verification, opening one (whose ticket asks) if it has none
     * that this request may share: a request of another producer epoch (a zombie, or the instance
     * that fenced it) is verified on its own, and a refused verification is not reused. What
     * queued behind a replaced verification still waits its turn there, and can only be refused.
     */
    public Ticket join(long producerId, short epoch, long nowMs) {
        Guard g = guards.get(producerId);
        boolean asks = false;
        if (g == null || !g.shareableWith(epoch)) {
            if (guards.size() >= PURGE_ABOVE) {
                guards.values().removeIf(old -> nowMs - old.createdMs > TTL_MS);
            }
            g = new Guard(epoch, nowMs);
            guards.put(producerId, g);
            asks = true;
        }
        CompletableFuture<Void> previous = g.tail;
        CompletableFuture<Void> turn = new CompletableFuture<>();
        g.tail = turn;
        g.waiting++;
        return new Ticket(g, previous, turn, asks);
    }

    /** Whether the coordinator confirmed {@code ticket}'s verification and it is still the producer's (no marker since). */
    public boolean confirmed(long producerId, Ticket ticket) {
        return ticket.guard != null && guards.get(producerId) == ticket.guard && ticket.guard.outcome.getNow(null) == Errors.NONE;
    }

    /** {@code ticket}'s request was written or refused: the next may go; the last one out closes the verification. */
    public void done(long producerId, Ticket ticket) {
        if (ticket.guard == null || ticket.done) {
            return;
        }
        ticket.done = true;
        ticket.release();
        if (--ticket.guard.waiting <= 0 && guards.get(producerId) == ticket.guard) {
            guards.remove(producerId);
        }
    }

    /** A marker for the producer: its open verification is stale (the transaction it was about has ended). */
    public void clear(long producerId) {
        guards.remove(producerId);
    }
}
