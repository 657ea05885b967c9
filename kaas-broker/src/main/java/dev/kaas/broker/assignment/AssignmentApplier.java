package dev.kaas.broker.assignment;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.config.DynamicConfigLayers;
import dev.kaas.broker.cluster.AssignmentReceiver;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.storage.DescriptorHeadroom;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.LogObserver;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.jboss.logging.Logger;

/**
 * Makes the open partitions match an assignment: relinquish what moved away, abandon and
 * delete what was deleted, take over what is newly ours (fence, recover), then publish the
 * assignment to {@link ClusterView} and fire {@link AssignmentApplied} for the coordinators.
 * Runs on its own thread: opening a log scans files.
 *
 * <p>It sits in its own package, above {@code cluster}, {@code data} and {@code group}: it opens
 * their state, so none of them may depend on it. Coordinators learn of an assignment by observing
 * the event, and the controller session hands assignments in through {@link AssignmentReceiver}.
 */
@ApplicationScoped
public class AssignmentApplier implements AssignmentReceiver {
    private static final Logger LOG = Logger.getLogger(AssignmentApplier.class);

    private final ClusterView view;
    private final Partitions partitions;
    private final Event<AssignmentApplied> applied;
    private final Event<DynamicConfigLayers> layers;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kaas-assignment");
        t.setDaemon(true);
        return t;
    });
    /**
     * Opens mostly wait on fsyncs (fence, new segment, directory); many at once let the
     * file system commit them together, so the pool is wider than the machine has cores.
     */
    static final int TAKEOVER_THREADS = 32;

    /** The newest assignment applied here: what stale pushes are compared with. */
    private volatile long acceptedVersion = -1;
    /** The newest assignment whose losses (partitions, slots) are all let go: what the controller is told. */
    private final java.util.concurrent.atomic.AtomicLong appliedVersion = new java.util.concurrent.atomic.AtomicLong(-1);
    private volatile Runnable appliedListener = () -> { };
    /**
     * Takeovers: each fences and scans its own directory, in parallel, so a broker taking over
     * thousands of partitions from a dead one does not do them one after another; a pool of their
     * own, so reads and coordinator files on the storage pool do not queue behind them.
     */
    private final ExecutorService opens = Executors.newFixedThreadPool(TAKEOVER_THREADS, r -> {
        Thread t = new Thread(r, "kaas-takeover");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean stopping;
    private volatile long appliedEpoch = -1;
    private volatile Map<TopicPartition, String> unopened = Map.of();
    private volatile DescriptorHeadroom descriptors = DescriptorHeadroom.ofThisProcess();
    /** Closes queued on partitions' writers, by partition: a new incarnation opens only after the old one closed. */
    private final Map<TopicPartition, java.util.concurrent.CompletableFuture<Void>> closing = new java.util.concurrent.ConcurrentHashMap<>();

    private record Wanted(TopicAssignment topic, PartitionAssignment partition) {
    }

    /** The assignment applied last: what a partition whose fsync failed is reopened under. */
    private volatile Assignment lastApplied;
    /** Partitions whose fsync failed and that are not open again yet: the current assignment is applied again until they are. */
    private final Set<TopicPartition> reopening = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Their failed incarnations' closes (which cut the file back): a reopen must not start before one ends. */
    private final Map<TopicPartition, java.util.concurrent.CompletableFuture<Void>> failedCloses = new java.util.concurrent.ConcurrentHashMap<>();
    /** One retry chain at a time, however many partitions failed. */
    private final java.util.concurrent.atomic.AtomicBoolean retryScheduled = new java.util.concurrent.atomic.AtomicBoolean();
    static final long STORAGE_RETRY_MS = 1_000;
    private final java.util.concurrent.ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-assignment-retry");
        t.setDaemon(true);
        return t;
    });

    public AssignmentApplier(ClusterView view, Partitions partitions, Event<AssignmentApplied> applied, Event<DynamicConfigLayers> layers) {
        this.view = view;
        this.partitions = partitions;
        this.applied = applied;
        this.layers = layers;
        partitions.onStorageFailure(tp -> {
            reopening.add(tp);
            scheduleReapply(0);
        });
    }

    private void scheduleReapply(long delayMs) {
        if (retryScheduled.compareAndSet(false, true)) {
            retries.schedule(() -> thread.execute(() -> {
                retryScheduled.set(false);
                reapply();
            }), delayMs, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * After a failed fsync: the failed incarnation is closed (cut back to what was durable) and the
     * partition opened again under the same assignment; while it cannot open (the volume still
     * full), this is tried again every {@link #STORAGE_RETRY_MS}.
     */
    private void reapply() {
        Assignment a = lastApplied;
        if (stopping || a == null) {
            return;
        }
        apply(a);
        reopening.removeIf(tp -> {
            var r = partitions.get(tp);
            return (r != null && !r.log().isFailed()) || !unopened.containsKey(tp) && r == null;
        });
        if (!reopening.isEmpty()) {
            scheduleReapply(STORAGE_RETRY_MS);
        }
    }

    /** Accepts a pushed assignment unless it comes from a deposed controller or is older than the applied one. */
    @Override
    public void submit(Assignment a) {
        thread.execute(() -> {
            if (stopping || a.controllerEpoch() < appliedEpoch
                    || (a.controllerEpoch() == appliedEpoch && a.version() <= acceptedVersion)) {
                return;
            }
            apply(a);
        });
    }

    @Override
    public void onApplied(Runnable listener) {
        this.appliedListener = listener;
    }

    @Override
    public long appliedVersion() {
        return appliedVersion.get();
    }

    /** For tests: the descriptor readings partition opens are checked against. */
    void descriptors(DescriptorHeadroom headroom) {
        this.descriptors = headroom;
    }

    @Override
    public Map<TopicPartition, String> unopened() {
        return unopened;
    }

    private void apply(Assignment a) {
        lastApplied = a;
        int me = view.brokerId();
        // Dynamic broker configs (the cluster's defaults, then this broker's): every open partition below re-resolves.
        partitions.applyDynamicConfigs(a.brokerConfig(Assignment.CLUSTER_DEFAULT), a.brokerConfig(Integer.toString(me)));
        try {
            layers.fire(new DynamicConfigLayers(a.brokerConfig(Assignment.CLUSTER_DEFAULT), a.brokerConfig(Integer.toString(me))));
        } catch (RuntimeException e) {
            // What follows the dynamic configs must not keep this broker's partitions from being applied.
            LOG.errorf(e, "dynamic broker configs not applied by every observer");
        }
        // Every assignment starts from a fresh reading.
        descriptors.invalidate();
        Map<TopicPartition, Wanted> wanted = new HashMap<>();
        Set<String> liveTopicIds = new HashSet<>();
        for (TopicAssignment t : a.topics()) {
            liveTopicIds.add(t.topic().topicId());
            for (PartitionAssignment p : t.partitions()) {
                if (p.leader() == me) {
                    wanted.put(new TopicPartition(t.topic().name(), p.partition()), new Wanted(t, p));
                }
            }
        }
        for (var e : Map.copyOf(partitions.view()).entrySet()) {
            TopicPartition tp = e.getKey();
            PartitionLog log = e.getValue().log();
            Wanted w = wanted.get(tp);
            boolean same = w != null && w.topic().topic().topicId().equals(log.topicId()) && w.partition().leaderEpoch() == log.leaderEpoch()
                    && !log.isFenced() && !log.isFailed();
            if (same) {
                // A config change (AlterConfigs, a KafkaTopic edit) applies to the open log.
                try {
                    log.updateConfig(partitions.logConfig(w.topic().topic().configs()));
                } catch (RuntimeException ex) {
                    // The controller validated them; whatever went wrong here must not stop the rest of the assignment.
                    LOG.errorf(ex, "could not apply the topic config of partition=%s", tp);
                }
                continue;
            }
            partitions.remove(tp);
            // Close on the partition's writer so the close follows every append already queued.
            var closed = new java.util.concurrent.CompletableFuture<Void>();
            closing.put(tp, closed);
            if (log.isFailed()) {
                failedCloses.put(tp, closed);
                closed.whenComplete((v, ex) -> failedCloses.remove(tp, closed));
            }
            e.getValue().writer().execute(() -> {
                try {
                    relinquish(tp, log, liveTopicIds.contains(log.topicId()));
                } finally {
                    closed.complete(null);
                    closing.remove(tp, closed);
                }
            });
        }
        List<java.util.concurrent.CompletableFuture<Void>> closesNow = new java.util.ArrayList<>(closing.values());
        Map<TopicPartition, String> failed = new java.util.concurrent.ConcurrentHashMap<>();
        List<java.util.concurrent.CompletableFuture<Void>> openings = new java.util.ArrayList<>();
        for (var e : wanted.entrySet()) {
            if (partitions.get(e.getKey()) != null) {
                continue;
            }
            openings.add(java.util.concurrent.CompletableFuture.runAsync(() -> open(e.getKey(), e.getValue(), me, failed),
                    opens));
        }
        try {
            java.util.concurrent.CompletableFuture.allOf(openings.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(10, TimeUnit.MINUTES);
        } catch (Exception ex) {
            LOG.errorf(ex, "opening partitions of assignment version=%d did not complete", a.version());
        }
        unopened = Map.copyOf(failed);
        acceptedVersion = a.version();
        appliedEpoch = a.controllerEpoch();
        view.applied(a);
        AssignmentApplied event = new AssignmentApplied(a);
        try {
            applied.fire(event);
        } finally {
            // Reporting this version tells the controller that what we lost is let go: only then
            // may it give those partitions and slots to their next owner (a handoff). So the report
            // waits for every close and release, however long they take (the controller places
            // them anyway after the broker session timeout, under the fence), and never goes out
            // before them; a failing observer does not cancel the report of what did complete.
            List<java.util.concurrent.CompletableFuture<Void>> letGo = new java.util.ArrayList<>(closesNow);
            letGo.addAll(event.releases());
            long version = a.version();
            java.util.concurrent.CompletableFuture.allOf(letGo.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .whenComplete((ok, failure) -> {
                        if (appliedVersion.accumulateAndGet(version, Math::max) == version) {
                            appliedListener.run();
                        }
                    });
        }
    }

    private void open(TopicPartition tp, Wanted w, int me, Map<TopicPartition, String> failed) {
        TopicAssignment t = w.topic();
        awaitClosed(tp);
        var cutting = failedCloses.get(tp);
        if (cutting != null && !cutting.isDone()) {
            // The same epoch's previous incarnation is still cutting its file back after a failed
            // fsync: opening now could have it cut what this one writes. Tried again shortly.
            failed.put(tp, "still closing after a failed fsync");
            return;
        }
        String refusal = descriptors.reserve();
        if (refusal != null) {
            failed.put(tp, refusal);
            if (!refusal.equals(unopened.get(tp))) {
                LOG.errorf("not opening partition=%s: %s", tp, refusal);
            }
            return;
        }
        try {
            long start = System.nanoTime();
            PartitionLog log = PartitionLog.open(
                    PartitionLog.directory(partitions.dataDir(), t.topic().name(), t.topic().topicId(), tp.partition()),
                    tp, t.topic().topicId(), w.partition().leaderEpoch(), me,
                    partitions.logConfig(t.topic().configs()), System::currentTimeMillis, partitions.flush(), partitions.disk());
            LogObserver observer = partitions.logObserver();
            log.observe(observer);
            observer.takeover(System.nanoTime() - start);
            descriptors.consumed(log.segmentCount() - 1);
            partitions.put(tp, new Replica(log, new SerialExecutor(partitions.writers())));
        } catch (Exception ex) {
            String why = ex.toString();
            failed.put(tp, why);
            if (why.equals(unopened.get(tp))) {
                LOG.debugf("still cannot open partition=%s epoch=%d: %s", tp, w.partition().leaderEpoch(), why);
            } else {
                LOG.errorf(ex, "could not open partition=%s epoch=%d", tp, w.partition().leaderEpoch());
            }
        }
    }

    /**
     * Waits for the previous incarnation of {@code tp} on this broker to finish closing: its queued
     * appends land before the new one recovers, and its close cannot write state after the new
     * fence. Bounded; past the bound the leader-epoch rule still keeps late bytes out of the log.
     */
    private void awaitClosed(TopicPartition tp) {
        var closed = closing.get(tp);
        if (closed == null) {
            return;
        }
        try {
            closed.get(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warnf("opening partition=%s before its previous incarnation finished closing: %s", tp, e.toString());
        }
    }

    private void relinquish(TopicPartition tp, PartitionLog log, boolean topicLives) {
        try {
            if (topicLives) {
                log.close();
            } else {
                log.abandon();
                AtomicFiles.deleteTree(log.directory());
                try {
                    java.nio.file.Files.deleteIfExists(log.directory().getParent());
                } catch (java.nio.file.DirectoryNotEmptyException othersRemain) {
                    // Another partition of the topic is still being removed; the last one takes the directory.
                }
                LOG.infof("partition deleted partition=%s topicId=%s", tp, log.topicId());
            }
        } catch (Exception e) {
            LOG.errorf(e, "could not close partition=%s", tp);
        }
    }

    void onStart(@Observes StartupEvent ev) {
        thread.execute(this::warmUp);
    }

    /**
     * Runs the cold paths of taking a partition over once, before the first assignment arrives:
     * the assignment JSON model, and a log opened, appended to (with its fsync), read and closed
     * in a scratch directory, {@code <data>/__warmup-broker-<id>}, deleted afterwards. On a cold
     * JVM these take a few hundred milliseconds; done here, they overlap the controller's start-up
     * instead of delaying the first produce to a new topic. Best effort: a failure only logs.
     */
    private void warmUp() {
        int me = view.brokerId();
        Path dir = partitions.dataDir().resolve("__warmup-broker-" + me);
        try {
            AtomicFiles.deleteTree(dir);
            String topicId = Uuid.randomUuid().toString();
            TopicSpec spec = new TopicSpec("__warmup", topicId, 1, Map.of());
            Assignment sample = new Assignment(0, 0, "warmup",
                    List.of(new BrokerInfo(me, List.of(new EndpointInfo("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT")))),
                    List.of(new TopicAssignment(spec, List.of(new PartitionAssignment(0, me, 0)))), List.of(), List.of());
            Json.read(Json.string(sample), Assignment.class);
            PartitionLog log = PartitionLog.open(dir.resolve("0"), new TopicPartition(spec.name(), 0), topicId, 0, me,
                    LogConfig.from(spec.configs()), System::currentTimeMillis, partitions.flush());
            try {
                PartitionLog.AppendResult r = log.append(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(new byte[64])));
                log.awaitDurable(r.lastOffset() + 1).get(5, TimeUnit.SECONDS);
                log.read(0, 1 << 20, true, Long.MAX_VALUE);
            } finally {
                log.close();
            }
            AtomicFiles.deleteTree(dir);
        } catch (Exception e) {
            LOG.infof("start-up warm-up skipped: %s", e.toString());
        }
    }

    /**
     * Controlled shutdown, first of the shutdown observers (priority): close every partition (its
     * queued appends land, manifest and producer state persisted) before the controller session
     * ends its stream, which is what makes the controller give them to other brokers.
     */
    void onStop(@Observes @Priority(100) ShutdownEvent ev) {
        long started = System.nanoTime();
        int[] count = {0};
        try {
            thread.submit(() -> {
                stopping = true;
                for (var e : Map.copyOf(partitions.view()).entrySet()) {
                    count[0]++;
                    partitions.remove(e.getKey());
                    try {
                        e.getValue().writer().execute(() -> relinquish(e.getKey(), e.getValue().log(), true));
                    } catch (Exception ex) {
                        LOG.errorf(ex, "close failed partition=%s", e.getKey());
                    }
                }
            }).get(10, TimeUnit.SECONDS);
            // Every partition's close was queued on its writer above: wait for them to finish.
            partitions.writers().shutdown();
            boolean closed = partitions.writers().awaitTermination(20, TimeUnit.SECONDS);
            LOG.infof("controlled shutdown: closed %d partitions in %d ms%s", count[0],
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), closed ? "" : " (some closes still running)");
        } catch (Exception e) {
            LOG.warnf("shutdown of partitions incomplete: %s", e.toString());
        }
        thread.shutdownNow();
        opens.shutdownNow();
        retries.shutdownNow();
    }
}
