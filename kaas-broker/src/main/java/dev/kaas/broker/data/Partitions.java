package dev.kaas.broker.data;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.storage.LogCleaner;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.LogObserver;
import dev.kaas.common.config.TopicDefaults;
import dev.kaas.common.fs.Disk;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * The partitions open on this broker and the threads that serve them: the writer pool (each
 * partition's serial executor: appends and the group-commit fsyncs that acknowledge them), the
 * storage pool (reads, scans, coordinator files) and the flush pool (the fsyncs no writer runs).
 * Reads have threads of their own, so fetches are not queued behind fsyncs.
 * Only the assignment applier adds or removes entries; everyone else reads.
 */
@ApplicationScoped
public class Partitions {
    private static final Logger LOG = Logger.getLogger(Partitions.class);
    private final Map<TopicPartition, Replica> open = new ConcurrentHashMap<>();
    private final ExecutorService writers;
    private final ExecutorService storage;
    private final ExecutorService flush;
    private final ScheduledExecutorService timers;
    /** Retention's file work: renaming retired segments aside and deleting them after file.delete.delay.ms. */
    private final ScheduledExecutorService reaper;
    /** Compaction: one thread per log.cleaner.threads, each with its own key map (allocated at its first pass). */
    private final ScheduledThreadPoolExecutor cleaners;
    private final Set<TopicPartition> cleaning = ConcurrentHashMap.newKeySet();
    /** Partitions whose last pass failed: left alone until then (Apache marks them uncleanable). */
    private final Map<TopicPartition, Long> cleanAfter = new ConcurrentHashMap<>();
    /** The cleaner settings of this broker's static configuration. */
    private final CleanerSettings staticCleaner;
    /** The cleaner settings the running cleaner threads have; replaced with them ({@link #startCleaners}). */
    private volatile CleanerSettings cleanerSettings;
    /** The running cleaner threads' rounds: cancelled when the settings change (guarded by this). */
    private final List<ScheduledFuture<?>> cleanerRounds = new ArrayList<>();
    /** The running cleaners: retired when the settings change (guarded by this). */
    private final List<LogCleaner> runningCleaners = new ArrayList<>();
    /** Whether the first assignment's dynamic configs were applied; the assignment thread only. */
    private boolean dynamicApplied;
    /** The last settings the cleaner could not take (logged once); the assignment thread only. */
    private CleanerSettings refusedCleaner;
    /** Bumped when the cleaner threads are replaced: a round of an older generation stops at its next pass. */
    private final AtomicInteger cleanerGeneration = new AtomicInteger();
    private final Path dataDir;
    private volatile Consumer<TopicPartition> highWatermarkListener = tp -> { };
    private volatile Consumer<TopicPartition> storageFailureListener = tp -> { };
    /** What partition logs are opened through: the volume, or a test's faulty one. */
    private volatile Disk disk = Disk.SYSTEM;
    /** The topic defaults of this broker's static settings (server.properties, system properties, the environment). */
    private final TopicDefaults staticDefaults;
    /** The defaults in force (the static ones under the dynamic ones) with the configurations resolved under them. */
    private volatile Resolved resolved;

    /** Resolved configurations by topic overrides: an assignment re-resolves every open partition's. */
    private record Resolved(TopicDefaults defaults, Map<Map<String, String>, LogConfig> byOverrides) {
    }

    /** Broker defaults and Apache's, for tests that set neither. */
    public Partitions(BrokerConfig config) {
        this(config, TopicDefaults.NONE);
    }

    @jakarta.inject.Inject
    public Partitions(BrokerConfig config, TopicDefaults topicDefaults) {
        this.staticDefaults = topicDefaults;
        this.resolved = new Resolved(topicDefaults, new ConcurrentHashMap<>());
        this.dataDir = Path.of(config.dataDir()).toAbsolutePath();
        this.writers = Executors.newFixedThreadPool(config.broker().writerThreads(), named("kaas-writer"));
        this.storage = Executors.newFixedThreadPool(config.broker().storageThreads(), named("kaas-storage"));
        this.flush = Executors.newFixedThreadPool(config.broker().flushThreads(), named("kaas-flush"));
        this.timers = Executors.newSingleThreadScheduledExecutor(named("kaas-log-timer"));
        timers.scheduleWithFixedDelay(() -> open.values().forEach(r -> r.log().maybeTimedFlush()), 100, 100, TimeUnit.MILLISECONDS);
        this.reaper = Executors.newSingleThreadScheduledExecutor(named("kaas-retention"));
        long check = Math.max(1, config.broker().logRetentionCheckInterval().toMillis());
        timers.scheduleWithFixedDelay(() -> open.values().forEach(this::enforceRetention), check, check, TimeUnit.MILLISECONDS);
        this.staticCleaner = CleanerSettings.of(config.broker());
        this.cleaners = new ScheduledThreadPoolExecutor(1, named("kaas-cleaner"));
        // Cancelled rounds leave the queue at once, with the key maps their cleaners hold.
        cleaners.setRemoveOnCancelPolicy(true);
        startCleaners(staticCleaner);
    }

    /**
     * (Re)starts the cleaner threads with {@code settings}, as Apache's {@code LogCleaner.reconfigure}
     * restarts its threads: the current rounds are cancelled and their cleaners retired (a pass in
     * progress stops at its next step; a swap it began completes), new ones start with fresh key
     * maps sized by the new settings. A no-op once the pool is shut down.
     */
    private synchronized void startCleaners(CleanerSettings settings) {
        if (cleaners.isShutdown()) {
            return;
        }
        cleanerRounds.forEach(f -> f.cancel(false));
        cleanerRounds.clear();
        // A pass in progress stops at its next step, so old and new key maps overlap only briefly.
        runningCleaners.forEach(LogCleaner::retire);
        runningCleaners.clear();
        int generation = cleanerGeneration.incrementAndGet();
        cleanerSettings = settings;
        int threads = settings.runningThreads();
        cleaners.setCorePoolSize(Math.max(1, threads));
        long backoff = Math.max(1, settings.backoffMs());
        for (int i = 0; i < threads; i++) {
            LogCleaner cleaner = new LogCleaner(settings.perThread(), System::currentTimeMillis);
            runningCleaners.add(cleaner);
            cleanerRounds.add(cleaners.scheduleWithFixedDelay(() -> cleanRound(cleaner, generation), backoff, backoff, TimeUnit.MILLISECONDS));
        }
    }

    /** One cleaner thread's round: the dirtiest compacted log first, until none is worth a pass (Apache's {@code cleanFilthiestLog}). */
    private void cleanRound(LogCleaner cleaner, int generation) {
        try {
            while (generation == cleanerGeneration.get()) {
                long now = System.currentTimeMillis();
                long retryMs = Math.max(1, cleanerSettings.backoffMs()) * 20;
                Replica dirtiest = null;
                double worst = -1;
                for (Map.Entry<TopicPartition, Replica> e : open.entrySet()) {
                    if (cleaning.contains(e.getKey()) || cleanAfter.getOrDefault(e.getKey(), 0L) > now) {
                        continue;
                    }
                    double ratio = LogCleaner.dirtiness(e.getValue().log(), now).orElse(-1.0);
                    if (ratio > worst) {
                        worst = ratio;
                        dirtiest = e.getValue();
                    }
                }
                if (dirtiest == null) {
                    return;
                }
                TopicPartition tp = dirtiest.log().topicPartition();
                if (!cleaning.add(tp)) {
                    continue;
                }
                boolean cleaned;
                try {
                    cleaned = cleaner.clean(dirtiest.log(), dirtiest.writer(), reaper).isPresent();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (LogCleaner.Uncleanable e) {
                    // As Apache: left alone until its next open, rather than read whole every few minutes to fail again.
                    LOG.errorf("compaction stopped for partition=%s until it is reopened: %s", tp, e.getMessage());
                    cleanAfter.put(tp, Long.MAX_VALUE);
                    cleaned = false;
                } catch (Exception e) {
                    LOG.warnf(e, "compaction failed partition=%s; retried in %d ms", tp, retryMs);
                    cleanAfter.put(tp, now + retryMs);
                    cleaned = false;
                } finally {
                    cleaning.remove(tp);
                }
                if (!cleaned) {
                    // Worth a pass but none ran (closing, or retention held it): next round.
                    return;
                }
            }
        } catch (Throwable e) {
            // Caught whole: a periodic task that throws is never run again, and compaction would stop unseen.
            LOG.errorf(e, "compaction round failed");
        }
    }

    /**
     * Queues a retention pass on the partition's writer (Apache's {@code log.retention.check.interval.ms}
     * runs it for every log; DeleteRecords runs it for its partitions at once).
     */
    public void enforceRetention(Replica r) {
        try {
            r.writer().execute(() -> {
                try {
                    r.log().enforceRetention(reaper);
                } catch (Exception e) {
                    LOG.warnf("retention failed partition=%s: %s", r.log().topicPartition(), e.toString());
                }
            });
        } catch (RuntimeException writerGone) {
            // Closed or moving: its next owner checks retention.
        }
    }

    static java.util.concurrent.ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** The configuration a partition of a topic with these overrides obeys on this broker. */
    public LogConfig logConfig(Map<String, String> overrides) {
        Resolved r = resolved;
        if (r.byOverrides().size() > 10_000) {
            r.byOverrides().clear();
        }
        return r.byOverrides().computeIfAbsent(Map.copyOf(overrides), o -> LogConfig.from(r.defaults(), o));
    }

    /** The topic defaults in force: the static ones under the dynamic ones. */
    public TopicDefaults topicDefaults() {
        return resolved.defaults();
    }

    /**
     * Lays the dynamic broker configs (the cluster's defaults, then this broker's own) over the
     * static topic defaults; {@link #logConfig} resolves under them from now on. The assignment
     * thread only. Never fails: a dynamic value that does not pass is left out ({@link TopicDefaults#withDynamic}).
     */
    public void applyDynamicConfigs(Map<String, String> clusterDefault, Map<String, String> broker) {
        TopicDefaults next = staticDefaults.withDynamic(clusterDefault, broker);
        if (!next.equals(resolved.defaults())) {
            LOG.infof("dynamic broker configs applied cluster-default=%s broker=%s", new java.util.TreeMap<>(next.dynamicDefault()),
                    new java.util.TreeMap<>(next.dynamicBroker()));
            resolved = new Resolved(next, new ConcurrentHashMap<>());
        }
        CleanerSettings current = cleanerSettings;
        CleanerSettings cleaner = staticCleaner.withDynamic(clusterDefault, broker);
        boolean first = !dynamicApplied;
        dynamicApplied = true;
        if (!cleaner.equals(current) && current.runningThreads() > 0) {
            // The stored dynamic settings at start-up are the broker's configuration, as Apache starts its cleaner with
            // them: only what no cleaner could run with is refused; a later change must also be one Apache's cleaner takes.
            String refused = first ? cleaner.startError() : current.reconfigurationError(cleaner);
            if (refused != null) {
                // As Apache's broker: an update its cleaner cannot take is logged (once) and the cleaner keeps its settings.
                if (!cleaner.equals(refusedCleaner)) {
                    LOG.errorf("log cleaner settings not changed to %s: %s", cleaner, refused);
                    refusedCleaner = cleaner;
                }
            } else {
                LOG.infof("log cleaner restarted with %s", cleaner);
                refusedCleaner = null;
                startCleaners(cleaner);
            }
        }
    }

    /**
     * Why this broker's cleaner could not take a change of the dynamic layers from
     * {@code before} to {@code after} (each: the cluster's defaults, then this broker's own),
     * Apache's {@code LogCleaner.validateReconfiguration} against the settings it runs with; null
     * when the change leaves the cleaner's settings as they were, the cleaner runs no threads, or
     * it passes.
     */
    public String cleanerChangeError(Map<String, String> clusterBefore, Map<String, String> brokerBefore,
                                     Map<String, String> clusterAfter, Map<String, String> brokerAfter) {
        CleanerSettings current = cleanerSettings;
        CleanerSettings next = staticCleaner.withDynamic(clusterAfter, brokerAfter);
        if (next.equals(staticCleaner.withDynamic(clusterBefore, brokerBefore)) || next.equals(current) || current.runningThreads() == 0) {
            return null;
        }
        return current.reconfigurationError(next);
    }

    /** The cleaner settings the cleaner threads run with. */
    CleanerSettings cleanerSettings() {
        return cleanerSettings;
    }

    /** For tests: the cleaner rounds scheduled now, one per running cleaner thread. */
    synchronized int runningCleanerRounds() {
        return (int) cleanerRounds.stream().filter(f -> !f.isDone()).count();
    }

    private volatile LogObserver logObserver = LogObserver.NONE;

    /** Who sees every open log's group commits and every takeover (the metrics, once they exist). */
    public LogObserver logObserver() {
        return logObserver;
    }

    public void logObserver(LogObserver observer) {
        this.logObserver = observer;
    }

    public Path dataDir() {
        return dataDir;
    }

    public Replica get(TopicPartition tp) {
        return open.get(tp);
    }

    public Collection<Replica> all() {
        return open.values();
    }

    public Map<TopicPartition, Replica> view() {
        return open;
    }

    public void put(TopicPartition tp, Replica r) {
        // A reopened partition is cleaned again, whatever stopped its last incarnation's passes.
        cleanAfter.remove(tp);
        r.log().onHighWatermark(() -> highWatermarkListener.accept(tp));
        r.log().onStorageFailure(() -> storageFailureListener.accept(tp));
        open.put(tp, r);
    }

    public Replica remove(TopicPartition tp) {
        return open.remove(tp);
    }

    /** The pool partition writers ({@link dev.kaas.broker.storage.SerialExecutor}) run on. */
    public ExecutorService writers() {
        return writers;
    }

    public ExecutorService storage() {
        return storage;
    }

    public ExecutorService flush() {
        return flush;
    }

    public void onHighWatermark(Consumer<TopicPartition> listener) {
        this.highWatermarkListener = listener;
    }

    /** Told when a partition's fsync failed and it must be reopened ({@link dev.kaas.broker.storage.PartitionLog#isFailed}). */
    public void onStorageFailure(Consumer<TopicPartition> listener) {
        this.storageFailureListener = listener;
    }

    public Disk disk() {
        return disk;
    }

    /** The seam durability tests inject faults at. */
    public void useDisk(Disk disk) {
        this.disk = disk;
    }

    /** Last (default priority): the controlled shutdown's closes and slot releases ran on these pools first. */
    public void onStop(@Observes ShutdownEvent ev) {
        timers.shutdownNow();
        // Files renamed aside and not yet deleted are removed by the next owner's recovery.
        reaper.shutdownNow();
        // Not interrupted: an interrupt during a read would close the live segment's shared channel. A
        // pass stops at its next step once its partition closes, which the controlled shutdown did.
        cleaners.shutdown();
        storage.shutdown();
        try {
            storage.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
