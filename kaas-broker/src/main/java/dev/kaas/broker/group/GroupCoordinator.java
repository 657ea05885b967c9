package dev.kaas.broker.group;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.Slots;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.kafka.common.TopicPartition;
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
    private final CoordinatorSlots<GroupShard> slots;
    private final GroupCounters counters = new GroupCounters();
    /** Topic ids of the previous assignment, to see which topics a new one deleted. Touched only by the applier thread. */
    private Map<String, String> knownTopics = Map.of();

    public GroupCoordinator(ClusterView view, Partitions partitions, BrokerConfig brokerConfig) {
        this.view = view;
        this.partitions = partitions;
        BrokerConfig.Group g = brokerConfig.group();
        this.config = new GroupConfig((int) g.minSessionTimeout().toMillis(), (int) g.maxSessionTimeout().toMillis(),
                (int) g.initialRebalanceDelay().toMillis(), g.maxSize(), g.offsetsRetention().toMillis(), g.offsetMetadataMaxBytes(),
                g.offsetsRetentionCheckInterval().toMillis());
        this.slots = new CoordinatorSlots<>("group", partitions.storage(), timers, new CoordinatorSlots.Lifecycle<>() {
            @Override
            public GroupShard open(int slot, int epoch, Scheduler scheduler, java.util.concurrent.Executor executor) throws Exception {
                GroupFiles files = new GroupFiles(partitions.dataDir(), slot, epoch, view.brokerId());
                files.acquire();
                GroupShard shard = new GroupShard(slot, config, System::currentTimeMillis, scheduler, files, GroupCoordinator.this::partitionExists,
                        counters);
                shard.load();
                return shard;
            }

            @Override
            public void close(GroupShard shard) {
                shard.close();
            }
        });
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
        List<CompletableFuture<Void>> releases = slots.follow(a.groupSlots(), view.brokerId());
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
            slots.forEachLoaded(shard -> {
                try {
                    shard.removeOffsetsOfTopics(deleted);
                } catch (Exception e) {
                    LOG.warnf("could not drop offsets of deleted topics %s slot=%d: %s", deleted, shard.slot(), e.getMessage());
                }
            });
        }
        return releases;
    }

    private boolean partitionExists(TopicPartition tp) {
        return view.exists(tp);
    }

    @FunctionalInterface
    public interface ShardCall<T> extends CoordinatorSlots.ShardCall<GroupShard, T> {
    }

    /** Runs {@code call} on the shard that owns {@code groupId}'s slot; fails with NOT_COORDINATOR when this broker does not. */
    public <T> CompletableFuture<T> call(String groupId, ShardCall<T> call) {
        return slots.call(Slots.slotFor(groupId == null ? "" : groupId), call);
    }

    /** Runs {@code call} on the shard of group slot {@code slot} (transaction markers for {@code __consumer_offsets-slot}). */
    public <T> CompletableFuture<T> callSlot(int slot, ShardCall<T> call) {
        return slots.call(slot, call);
    }

    /** Runs {@code call} on every owned shard (ListGroups); a slot that moves away meanwhile contributes nothing. */
    public <T> CompletableFuture<List<T>> callAll(ShardCall<T> call) {
        return slots.callAll(call);
    }

    /** What the coordinator counted since this broker started, over every slot it held. */
    public GroupCounters counters() {
        return counters;
    }

    /** {@link #callAll}, a slot that takes longer than {@code timeoutMs} left out of the answer. */
    public <T> CompletableFuture<List<T>> callAll(ShardCall<T> call, long timeoutMs) {
        return slots.callAll(call, timeoutMs);
    }

    public boolean owns(String groupId) {
        return slots.owns(Slots.slotFor(groupId));
    }

    /**
     * Controlled shutdown, after the partitions closed (priority 100) and before the controller
     * stream ends (200): every group slot is let go, so its next owner loads the groups from their
     * files without any commit of ours still in flight.
     */
    void releaseSlots(@Observes @jakarta.annotation.Priority(150) ShutdownEvent ev) {
        LOG.infof("controlled shutdown: released %d group slots", slots.releaseAll(5_000));
    }

    void onStop(@Observes ShutdownEvent ev) {
        timers.shutdownNow();
    }
}
