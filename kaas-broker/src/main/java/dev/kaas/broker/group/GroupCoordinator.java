package dev.kaas.broker.group;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.Slots;
import dev.kaas.common.model.TopicAssignment;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.jboss.logging.Logger;

/**
 * The I/O edge of the group coordinator: one {@link GroupShard} per group slot this broker owns,
 * each on its own serial executor (on the storage pool: loading and saving do file I/O), with
 * timers that post back onto it. Follows the group slots of every applied assignment: a slot
 * gained is a coordinator failover (fence, then load the files); a slot lost is dropped from
 * memory and its waiting members are told NOT_COORDINATOR.
 */
@ApplicationScoped
public class GroupCoordinator {
    private static final Logger LOG = Logger.getLogger(GroupCoordinator.class);

    private final ClusterView view;
    private final Partitions partitions;
    private final GroupConfig config;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-group-timer");
        t.setDaemon(true);
        return t;
    });
    private final Map<Integer, SlotRuntime> slots = new ConcurrentHashMap<>();
    /** Slot releases not yet complete. */
    private final java.util.Set<CompletableFuture<Void>> releasing = ConcurrentHashMap.newKeySet();
    /** Topic ids of the previous assignment, to see which topics a new one deleted. Touched only by the applier thread. */
    private Map<String, String> knownTopics = Map.of();

    private final class SlotRuntime implements Scheduler {
        final int slot;
        final int epoch;
        final SerialExecutor executor = new SerialExecutor(partitions.storage());
        final Map<String, ScheduledFuture<?>> pending = new ConcurrentHashMap<>();
        volatile GroupShard shard;

        SlotRuntime(int slot, int epoch) {
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

    public GroupCoordinator(ClusterView view, Partitions partitions, BrokerConfig brokerConfig) {
        this.view = view;
        this.partitions = partitions;
        BrokerConfig.Group g = brokerConfig.group();
        this.config = new GroupConfig((int) g.minSessionTimeout().toMillis(), (int) g.maxSessionTimeout().toMillis(),
                (int) g.initialRebalanceDelay().toMillis(), g.maxSize(), g.offsetsRetention().toMillis(), g.offsetMetadataMaxBytes(),
                g.offsetsRetentionCheckInterval().toMillis());
    }

    void onApplied(@Observes AssignmentApplied event) {
        event.releases().addAll(onAssignment(event.assignment()));
    }

    /**
     * Follows the group slots of an applied assignment; runs on the assignment thread. Returns the
     * releases still running (this assignment's and earlier ones'), each complete once its shard
     * is closed.
     */
    public List<CompletableFuture<Void>> onAssignment(Assignment a) {
        int me = view.brokerId();
        Map<Integer, SlotAssignment> mine = new java.util.HashMap<>();
        for (SlotAssignment s : a.groupSlots()) {
            if (s.broker() == me) {
                mine.put(s.slot(), s);
            }
        }
        for (SlotRuntime r : List.copyOf(slots.values())) {
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
                SlotRuntime r = new SlotRuntime(s.slot(), s.epoch());
                slots.put(s.slot(), r);
                r.executor.execute(() -> acquire(r));
            }
        }
        Map<String, String> now = new java.util.HashMap<>();
        a.topics().forEach(t -> now.put(t.topic().topicId(), t.topic().name()));
        java.util.Set<String> deleted = new java.util.HashSet<>();
        knownTopics.forEach((id, name) -> {
            if (!now.containsKey(id) && !now.containsValue(name)) {
                deleted.add(name);
            }
        });
        knownTopics = now;
        if (!deleted.isEmpty()) {
            for (SlotRuntime r : slots.values()) {
                r.executor.execute(() -> {
                    GroupShard shard = r.shard;
                    if (shard == null) {
                        return;
                    }
                    try {
                        shard.removeOffsetsOfTopics(deleted);
                    } catch (Exception e) {
                        LOG.warnf("could not drop offsets of deleted topics %s slot=%d: %s", deleted, r.slot, e.getMessage());
                    }
                });
            }
        }
        // Every release still running, this assignment's and earlier ones': a later version's report
        // must not tell the controller a slot is let go while an earlier release of it still runs.
        return List.copyOf(releasing);
    }

    /** Releases the slot on its shard's executor, after what is queued there; complete once released (or refused by a stopped executor). */
    private CompletableFuture<Void> releaseOnItsExecutor(SlotRuntime r) {
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

    private void acquire(SlotRuntime r) {
        try {
            GroupFiles files = new GroupFiles(partitions.dataDir(), r.slot, r.epoch, view.brokerId());
            files.acquire();
            GroupShard shard = new GroupShard(r.slot, config, System::currentTimeMillis, r, files, this::partitionExists);
            shard.load();
            r.shard = shard;
            LOG.debugf("group slot acquired slot=%d epoch=%d", r.slot, r.epoch);
        } catch (Exception e) {
            LOG.errorf(e, "could not take over group slot=%d epoch=%d", r.slot, r.epoch);
            slots.remove(r.slot, r);
        }
    }

    private void release(SlotRuntime r) {
        GroupShard shard = r.shard;
        r.shard = null;
        r.pending.values().forEach(f -> f.cancel(false));
        r.pending.clear();
        if (shard != null) {
            shard.close();
            LOG.debugf("group slot released slot=%d epoch=%d", r.slot, r.epoch);
        }
    }

    private boolean partitionExists(TopicPartition tp) {
        TopicAssignment t = view.topic(tp.topic());
        return t != null && tp.partition() >= 0 && tp.partition() < t.partitions().size();
    }

    @FunctionalInterface
    public interface ShardCall<T> {
        T apply(GroupShard shard) throws Exception;
    }

    /** Runs {@code call} on the shard that owns {@code groupId}'s slot; fails with NOT_COORDINATOR when this broker does not. */
    public <T> CompletableFuture<T> call(String groupId, ShardCall<T> call) {
        return callSlot(Slots.slotFor(groupId == null ? "" : groupId), call);
    }

    private <T> CompletableFuture<T> callSlot(int slot, ShardCall<T> call) {
        SlotRuntime r = slots.get(slot);
        if (r == null) {
            return CompletableFuture.failedFuture(new NotCoordinatorException("this broker does not coordinate group slot " + slot));
        }
        CompletableFuture<T> f = new CompletableFuture<>();
        r.executor.execute(() -> {
            GroupShard shard = r.shard;
            if (shard == null) {
                f.completeExceptionally(new NotCoordinatorException("group slot " + slot + " is not loaded here"));
                return;
            }
            try {
                f.complete(call.apply(shard));
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /** Runs {@code call} on every owned shard (ListGroups); a slot that moves away meanwhile contributes nothing. */
    public <T> CompletableFuture<List<T>> callAll(ShardCall<T> call) {
        List<CompletableFuture<T>> all = new ArrayList<>();
        for (int slot : slots.keySet()) {
            all.add(callSlot(slot, call).exceptionally(e -> null));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .thenApply(v -> all.stream().map(CompletableFuture::join).filter(java.util.Objects::nonNull).toList());
    }

    public boolean owns(String groupId) {
        SlotRuntime r = slots.get(Slots.slotFor(groupId));
        return r != null && r.shard != null;
    }

    /**
     * Controlled shutdown, after the partitions closed (priority 100) and before the controller
     * stream ends (200): every group slot is let go, so its next owner loads the groups from their
     * files without any commit of ours still in flight.
     */
    void releaseSlots(@Observes @jakarta.annotation.Priority(150) ShutdownEvent ev) {
        List<CompletableFuture<Void>> released = new ArrayList<>();
        for (SlotRuntime r : List.copyOf(slots.values())) {
            slots.remove(r.slot, r);
            released.add(releaseOnItsExecutor(r));
        }
        try {
            CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warnf("group slots not all released at shutdown: %s", e.toString());
        }
        LOG.infof("controlled shutdown: released %d group slots", released.size());
    }

    void onStop(@Observes ShutdownEvent ev) {
        timers.shutdownNow();
    }
}
