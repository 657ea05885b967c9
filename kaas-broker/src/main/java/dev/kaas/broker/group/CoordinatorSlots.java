package dev.kaas.broker.group;

import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.SlotAssignment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import dev.kaas.broker.storage.SerialExecutor;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.jboss.logging.Logger;

/**
 * The coordinator slots of one kind (group or transaction) this broker owns: one shard per slot,
 * each on its own serial executor (on the storage pool: loading and saving do file I/O), with
 * timers that post back onto it. Follows the slots of every applied assignment: a slot gained is
 * a coordinator failover (the shard's {@code open} fences, then loads the files); a slot lost, or
 * assigned again under another epoch, is closed on its executor after what is queued there.
 *
 * @param <S> the shard type ({@link GroupShard}, the transaction slot)
 */
public final class CoordinatorSlots<S> {
    private static final Logger LOG = Logger.getLogger(CoordinatorSlots.class);

    /**
     * How a shard of this kind is opened on takeover and closed on release; both run on the slot's
     * executor, which {@code open} also gets for callbacks that must come back onto it.
     */
    public interface Lifecycle<S> {
        S open(int slot, int epoch, Scheduler timers, Executor executor) throws Exception;

        void close(S shard);
    }

    @FunctionalInterface
    public interface ShardCall<S, T> {
        T apply(S shard) throws Exception;
    }

    private final String kind;
    private final Executor pool;
    private final ScheduledExecutorService timers;
    private final Lifecycle<S> lifecycle;
    private final Map<Integer, Slot> slots = new ConcurrentHashMap<>();
    /** Slot releases not yet complete. */
    private final Set<CompletableFuture<Void>> releasing = ConcurrentHashMap.newKeySet();

    private final class Slot implements Scheduler {
        final int slot;
        final int epoch;
        final SerialExecutor executor = new SerialExecutor(pool);
        final Map<String, ScheduledFuture<?>> pending = new ConcurrentHashMap<>();
        volatile S shard;

        Slot(int slot, int epoch) {
            this.slot = slot;
            this.epoch = epoch;
        }

        @Override
        public void schedule(String key, long delayMs, Runnable task) {
            cancel(key);
            ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
            self[0] = timers.schedule(() -> executor.execute(() -> {
                // Only the latest schedule of a key may fire.
                if (pending.remove(key, self[0]) && shard != null) {
                    task.run();
                }
            }), Math.max(0, delayMs), TimeUnit.MILLISECONDS);
            pending.put(key, self[0]);
        }

        @Override
        public void cancel(String key) {
            ScheduledFuture<?> f = pending.remove(key);
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    public CoordinatorSlots(String kind, Executor pool, ScheduledExecutorService timers, Lifecycle<S> lifecycle) {
        this.kind = kind;
        this.pool = pool;
        this.timers = timers;
        this.lifecycle = lifecycle;
    }

    /**
     * Follows the slots of an applied assignment; runs on the assignment thread. Returns the
     * releases still running (this assignment's and earlier ones'): a later version's report must
     * not tell the controller a slot is let go while an earlier release of it still runs.
     */
    public List<CompletableFuture<Void>> follow(List<SlotAssignment> assigned, int me) {
        Map<Integer, SlotAssignment> mine = new HashMap<>();
        for (SlotAssignment s : assigned) {
            if (s.broker() == me) {
                mine.put(s.slot(), s);
            }
        }
        for (Slot r : List.copyOf(slots.values())) {
            SlotAssignment s = mine.get(r.slot);
            if (s == null || s.epoch() != r.epoch) {
                slots.remove(r.slot, r);
                CompletableFuture<Void> done = releaseOnItsExecutor(r);
                releasing.add(done);
                done.whenComplete((v, e) -> releasing.remove(done));
            }
        }
        for (SlotAssignment s : mine.values()) {
            if (!slots.containsKey(s.slot())) {
                Slot r = new Slot(s.slot(), s.epoch());
                slots.put(s.slot(), r);
                r.executor.execute(() -> acquire(r, RETRY_MIN_MS));
            }
        }
        return List.copyOf(releasing);
    }

    /** Releases the slot on its shard's executor, after what is queued there; complete once released (or refused by a stopped executor). */
    private CompletableFuture<Void> releaseOnItsExecutor(Slot r) {
        var done = new CompletableFuture<Void>();
        try {
            r.executor.execute(() -> {
                try {
                    release(r);
                } finally {
                    done.complete(null);
                }
            });
        } catch (RuntimeException e) {
            done.complete(null);
        }
        return done;
    }

    static final long RETRY_MIN_MS = 1_000;
    static final long RETRY_MAX_MS = 30_000;

    /**
     * Takes the slot over. A newer owner's fence ends the attempt (the assignment will move on); any
     * other failure (the volume briefly unavailable, an unreadable file) is retried with back-off
     * while the slot is still assigned to us under this epoch: requests get NOT_COORDINATOR meanwhile,
     * as Apache's while a coordinator partition loads, and nothing the slot owes (markers of
     * prepared transactions) is forgotten for good.
     */
    private void acquire(Slot r, long backoffMs) {
        if (slots.get(r.slot) != r || r.shard != null) {
            return;
        }
        try {
            r.shard = lifecycle.open(r.slot, r.epoch, r, r.executor);
            LOG.debugf("%s slot acquired slot=%d epoch=%d", kind, r.slot, r.epoch);
        } catch (NotCoordinatorException e) {
            LOG.warnf("%s slot=%d epoch=%d is already held by a newer owner: %s", kind, r.slot, r.epoch, e.getMessage());
            slots.remove(r.slot, r);
        } catch (Exception e) {
            LOG.errorf(e, "could not take over %s slot=%d epoch=%d, retrying in %d ms", kind, r.slot, r.epoch, backoffMs);
            try {
                timers.schedule(() -> r.executor.execute(() -> acquire(r, Math.min(RETRY_MAX_MS, backoffMs * 2))),
                        backoffMs, TimeUnit.MILLISECONDS);
            } catch (RuntimeException stopped) {
                slots.remove(r.slot, r);
            }
        }
    }

    private void release(Slot r) {
        S shard = r.shard;
        r.shard = null;
        r.pending.values().forEach(f -> f.cancel(false));
        r.pending.clear();
        if (shard != null) {
            lifecycle.close(shard);
            LOG.debugf("%s slot released slot=%d epoch=%d", kind, r.slot, r.epoch);
        }
    }

    /** Runs {@code call} on the shard of {@code slot}; fails with NOT_COORDINATOR when this broker does not own it (loaded). */
    public <T> CompletableFuture<T> call(int slot, ShardCall<S, T> call) {
        Slot r = slots.get(slot);
        if (r == null) {
            return CompletableFuture.failedFuture(new NotCoordinatorException("this broker does not coordinate " + kind + " slot " + slot));
        }
        CompletableFuture<T> f = new CompletableFuture<>();
        // The request quota counts the shard's work for the request being handled, as Apache's counts its handler thread's.
        RequestContext.Throttle usage = RequestContext.Throttle.handling();
        r.executor.execute(() -> {
            S shard = r.shard;
            if (shard == null) {
                f.completeExceptionally(new NotCoordinatorException(kind + " slot " + slot + " is not loaded here"));
                return;
            }
            long started = System.nanoTime();
            T result;
            try {
                result = call.apply(shard);
            } catch (Throwable t) {
                charge(usage, started);
                f.completeExceptionally(t);
                return;
            }
            charge(usage, started);
            f.complete(result);
        });
        return f;
    }

    private static void charge(RequestContext.Throttle usage, long started) {
        if (usage != null) {
            usage.addThreadNanos(System.nanoTime() - started);
        }
    }

    /** As {@link #call}, for a call that completes later on its own (it must post back onto the slot's executor itself). */
    public <T> CompletableFuture<T> compose(int slot, Function<S, CompletableFuture<T>> call) {
        return call(slot, call::apply).thenCompose(Function.identity());
    }

    /** Runs {@code call} on every owned shard; a slot that moves away meanwhile contributes nothing. */
    public <T> CompletableFuture<List<T>> callAll(ShardCall<S, T> call) {
        List<CompletableFuture<T>> all = new ArrayList<>();
        for (int slot : slots.keySet()) {
            all.add(call(slot, call).exceptionally(e -> null));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .thenApply(v -> all.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList());
    }

    /**
     * {@link #callAll}, each slot given at most {@code timeoutMs}: a slot still loading its files, or
     * behind a busy executor, is left out of the answer instead of holding up everyone's.
     */
    public <T> CompletableFuture<List<T>> callAll(ShardCall<S, T> call, long timeoutMs) {
        List<CompletableFuture<T>> all = new ArrayList<>();
        for (int slot : slots.keySet()) {
            all.add(call(slot, call).completeOnTimeout(null, timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS).exceptionally(e -> null));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .thenApply(v -> all.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList());
    }

    /** Runs {@code task} on every loaded shard, each on its own executor. */
    public void forEachLoaded(Consumer<S> task) {
        for (Slot r : slots.values()) {
            r.executor.execute(() -> {
                S shard = r.shard;
                if (shard != null) {
                    task.accept(shard);
                }
            });
        }
    }

    public boolean owns(int slot) {
        Slot r = slots.get(slot);
        return r != null && r.shard != null;
    }

    /** Controlled shutdown: every slot let go, waiting at most {@code timeoutMs}. Returns how many. */
    public int releaseAll(long timeoutMs) {
        List<CompletableFuture<Void>> released = new ArrayList<>();
        for (Slot r : List.copyOf(slots.values())) {
            slots.remove(r.slot, r);
            released.add(releaseOnItsExecutor(r));
        }
        try {
            CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warnf("%s slots not all released at shutdown: %s", kind, e.toString());
        }
        return released.size();
    }
}
