package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.Doorbell;
import dev.kaas.common.fs.Disk;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.TxnVerifier;
import dev.kaas.broker.group.CoordinatorSlots;
import dev.kaas.broker.group.GroupCoordinator;
import dev.kaas.broker.group.Scheduler;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.Slots;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The I/O edge of the transaction coordinator: one {@link TxnSlot} per transaction slot this
 * broker owns (routing {@code abs(hash(transactional.id)) % 50}), following the transaction
 * slots of every applied assignment. Taking a slot over fences it, loads the newest slot file
 * at or below the new epoch and finishes its Prepare transactions (see {@link TxnSlot#open}).
 * The slot epoch is the coordinator epoch every marker carries.
 *
 * <p>It also answers KIP-890 verifications for the partitions' leaders: from the slot itself
 * when it is here, else through the {@link MarkerQueue} to the broker that holds the slot.
 */
@ApplicationScoped
public class TxnCoordinator implements TxnVerifier {
    private static final Logger LOG = Logger.getLogger(TxnCoordinator.class);

    private final ClusterView view;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-txn-timer");
        t.setDaemon(true);
        return t;
    });
    private final CoordinatorSlots<TxnSlot> slots;

    private final ScheduledExecutorService markerIo = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-markers");
        t.setDaemon(true);
        return t;
    });
    private final MarkerQueue queue;
    private final boolean verification;

    public TxnCoordinator(ClusterView view, Partitions partitions, GroupCoordinator groups, ProducerIdAllocator ids, BrokerConfig config,
                          Doorbell doorbell) {
        this.view = view;
        BrokerConfig.Transaction cfg = config.transaction();
        this.verification = cfg.partitionVerificationEnable();
        this.queue = new MarkerQueue(partitions.dataDir(), view.brokerId(), view::assignment, doorbell::ring, markerIo,
                System::currentTimeMillis, Disk.SYSTEM);
        PartitionMarkers markers = new PartitionMarkers(partitions, groups, view, queue);
        queue.start(markers::writeLocal, this::verifyHere);
        doorbell.onRing(queue::rung);
        this.slots = new CoordinatorSlots<>("transaction", partitions.storage(), timers, new CoordinatorSlots.Lifecycle<>() {
            @Override
            public TxnSlot open(int slot, int epoch, Scheduler scheduler, Executor executor) throws Exception {
                TxnFiles files = new TxnFiles(partitions.dataDir(), slot, epoch, view.brokerId());
                files.acquire();
                TxnSlot s = new TxnSlot(slot, epoch, new TxnStateMachine((int) cfg.maxTimeout().toMillis(), cfg.idExpiration().toMillis()),
                        files, markers, ids::nextId, scheduler, System::currentTimeMillis, executor,
                        cfg.abortTimedOutInterval().toMillis(), cfg.removeExpiredInterval().toMillis());
                try {
                    s.open();
                } catch (Exception e) {
                    // A takeover that failed is retried: it must not leave its journal open each time.
                    s.close();
                    throw e;
                }
                return s;
            }

            @Override
            public void close(TxnSlot slot) {
                slot.close();
            }
        });
    }

    void onApplied(@Observes AssignmentApplied event) {
        event.releases().addAll(slots.follow(event.assignment().txnSlots(), view.brokerId()));
        // Partitions may have opened here with markers already queued for them.
        queue.poke();
    }

    /** Runs {@code call} on the slot that owns {@code transactionalId}; fails with NOT_COORDINATOR when this broker does not. */
    public <T> CompletableFuture<T> call(String transactionalId, Function<TxnSlot, CompletableFuture<T>> call) {
        return slots.compose(Slots.slotFor(transactionalId), call);
    }

    @Override
    public boolean enabled() {
        return verification;
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short producerEpoch,
                                                                Set<TopicPartition> partitions) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(every(partitions, Errors.INVALID_REQUEST));
        }
        int slot = Slots.slotFor(transactionalId);
        int owner = view.assignment().txnSlots().stream().filter(s -> s.slot() == slot).mapToInt(SlotAssignment::broker)
                .findFirst().orElse(-1);
        if (owner == view.brokerId()) {
            // Bounded as the remote question is: a slot stuck in a takeover must not hold the producer's writes forever.
            return verifyHere(transactionalId, producerId, producerEpoch, partitions)
                    .completeOnTimeout(every(partitions, Errors.NETWORK_EXCEPTION), MarkerQueue.TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        if (owner < 0) {
            return CompletableFuture.completedFuture(every(partitions, Errors.COORDINATOR_NOT_AVAILABLE));
        }
        return queue.verify(owner, transactionalId, producerId, producerEpoch, partitions);
    }

    /** A verification for a slot this broker should hold: asked of the slot on its executor. */
    private CompletableFuture<Map<TopicPartition, Errors>> verifyHere(String transactionalId, long producerId, short producerEpoch,
                                                                     Set<TopicPartition> partitions) {
        return call(transactionalId, s -> CompletableFuture.completedFuture(s.verify(transactionalId, producerId, producerEpoch, partitions)))
                .exceptionally(e -> every(partitions, TxnRequests.coordinatorError(e, transactionalId)));
    }

    private static Map<TopicPartition, Errors> every(Set<TopicPartition> partitions, Errors error) {
        Map<TopicPartition, Errors> out = new LinkedHashMap<>();
        partitions.forEach(tp -> out.put(tp, error));
        return out;
    }

    /** Runs {@code call} on every owned slot (ListTransactions). */
    public <T> CompletableFuture<List<T>> callAll(CoordinatorSlots.ShardCall<TxnSlot, T> call) {
        return slots.callAll(call);
    }

    /** Controlled shutdown, with the group slots: the state is always durable, so letting go is only forgetting. */
    void releaseSlots(@Observes @jakarta.annotation.Priority(150) ShutdownEvent ev) {
        LOG.infof("controlled shutdown: released %d transaction slots", slots.releaseAll(5_000));
    }

    void onStop(@Observes ShutdownEvent ev) {
        timers.shutdownNow();
        markerIo.shutdownNow();
    }
}
