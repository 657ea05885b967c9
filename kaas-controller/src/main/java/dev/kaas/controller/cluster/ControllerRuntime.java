package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.cluster.StandaloneMetadata;
import dev.kaas.common.config.TopicDefaults;
import dev.kaas.controller.config.ControllerConfig;
import dev.kaas.controller.kube.KubernetesBinding;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The I/O edge around {@link ControllerCore}: owns the controller loop thread, renews the lease,
 * and runs every core call on that one thread. gRPC callbacks arrive on event loops and only
 * enqueue work here; the one exception is a doorbell ({@link #nudge}).
 */
@ApplicationScoped
public class ControllerRuntime {
    private static final Logger LOG = Logger.getLogger(ControllerRuntime.class);

    private final ControllerConfig config;
    private final KubernetesBinding kubernetes;
    private final AtomicBoolean reconcilePending = new AtomicBoolean();
    private ScheduledExecutorService loop;
    private ClusterMetadata metadata;
    /** Volatile for {@link #nudge}, the one call from outside the loop. */
    private volatile ControllerCore core;
    private String holder;
    private OrphanSweeper sweeper;
    private volatile boolean leader;
    private volatile long writableUntilMs;

    public ControllerRuntime(ControllerConfig config, KubernetesBinding kubernetes) {
        this.config = config;
        this.kubernetes = kubernetes;
    }

    void onStart(@Observes StartupEvent ev) throws IOException {
        Path data = Path.of(config.dataDir()).toAbsolutePath();
        metadata = openMetadata(data);
        // The holder names this process, not just the configured id: a controller restarted under the
        // same id (kill -9, a pod restarted under its name) is a new writer and must take the lease
        // under a new epoch, or a frozen predecessor and it would both write under one epoch.
        holder = config.controller().id().orElseGet(ControllerRuntime::defaultHolder)
                + "#" + java.util.UUID.randomUUID().toString().substring(0, 8);
        core = new ControllerCore(metadata, System::currentTimeMillis, new ControllerCore.Settings(holder,
                config.controller().leaseDuration().toMillis(),
                config.controller().brokerSessionTimeout().toMillis(),
                config.controller().startupGrace().toMillis(),
                config.controller().numPartitions(),
                config.controller().maxPartitions(),
                config.controller().maxMovesInFlight(),
                config.controller().quotaWindowNum(),
                config.controller().quotaWindowSizeSeconds(),
                // Apache's names, from server.properties, system properties or the environment (checked by ControllerMain).
                TopicDefaults.from(name -> ConfigProvider.getConfig().getOptionalValue(name, String.class))));
        loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kaas-controller-loop");
            t.setDaemon(true);
            return t;
        });
        long renewEvery = Math.max(100, config.controller().leaseDuration().toMillis() / 3);
        // Take the lease before start-up completes, so the first broker registration finds a leader.
        try {
            loop.submit(this::renewLease).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warnf("first lease attempt did not complete: %s", e.toString());
        }
        loop.scheduleWithFixedDelay(this::renewLease, renewEvery, renewEvery, TimeUnit.MILLISECONDS);
        loop.scheduleWithFixedDelay(() -> guarded("tick", core::tick), 500, 500, TimeUnit.MILLISECONDS);
        if (metadata.topics().declarative() || metadata.users().declarative()) {
            // Watch events come in bursts (our own status writes are events too): one reconcile
            // queued at a time covers every event before it started.
            metadata.topics().watch(this::requestReconcile);
            metadata.users().watch(this::requestReconcile);
            long resync = config.controller().kubernetes().resync().toMillis();
            loop.scheduleWithFixedDelay(this::requestReconcile, resync, resync, TimeUnit.MILLISECONDS);
        }
        long sweep = config.controller().orphanSweepInterval().toMillis();
        sweeper = new OrphanSweeper(data, this);
        sweeper.start(sweep);
        LOG.infof("controller starting holder=%s data=%s metadata=%s", holder, data, config.controller().metadata());
    }

    /** The metadata binding, chosen by {@code kaas.controller.metadata}; it owns the store's exclusivity. */
    private ClusterMetadata openMetadata(Path data) throws IOException {
        return switch (config.controller().metadata()) {
            case STANDALONE -> StandaloneMetadata.open(data);
            case KUBERNETES -> kubernetes.open(data);
        };
    }

    private void requestReconcile() {
        if (reconcilePending.compareAndSet(false, true)) {
            try {
                loop.execute(() -> {
                    reconcilePending.set(false);
                    guarded("reconcile", core::reconcileDeclarations);
                });
            } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                // A watch event during shutdown: nothing to reconcile any more.
            }
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
        if (loop == null) {
            return;
        }
        try {
            loop.submit(() -> {
                core.loseLeadership("shutting down");
                try {
                    metadata.lease().release(holder);
                } catch (IOException e) {
                    LOG.warnf("could not release the lease: %s", e.getMessage());
                }
            }).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warnf("controller shutdown incomplete: %s", e.toString());
        }
        loop.shutdownNow();
        core.close();
        if (sweeper != null) {
            sweeper.close();
        }
        try {
            metadata.close();
        } catch (IOException ignored) {
            // The process is ending; the OS drops the lock anyway.
        }
    }

    /** The lease epoch this process writes under (-1: none) and until when it may, for its log lines; any thread. */
    private static volatile long epochForLogs = -1;
    private static volatile long writableForLogsUntilMs;

    /** The epoch a log line names: none once the step-down point has passed, even while the loop is stuck. */
    public static long epochForLogs() {
        return System.currentTimeMillis() < writableForLogsUntilMs ? epochForLogs : -1;
    }

    /**
     * Leads and may still write: a renewal stuck in a call to an unreachable store (the Kubernetes
     * API server gone) holds the controller loop, so the step-down point is checked here too, and
     * readiness drops on time whatever the loop is doing.
     */
    public boolean isLeader() {
        return leader && System.currentTimeMillis() < writableUntilMs;
    }

    /** Passes a doorbell on, on the caller's thread (see {@link ControllerCore#nudge}); false when not leading or the target has no session here. */
    public boolean nudge(int targetBroker, int fromBroker) {
        ControllerCore c = core;
        return c != null && isLeader() && c.nudge(targetBroker, fromBroker);
    }

    /** Runs {@code work} on the controller loop; the future fails if this controller is not the leader. */
    public <T> CompletableFuture<T> submit(CoreCall<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                if (!core.isLeader()) {
                    throw new IllegalStateException("not the active controller");
                }
                result.complete(work.apply(core));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            } finally {
                publishLeadership();
            }
        });
        return result;
    }

    /** Runs {@code work} on the controller loop whatever the leadership: a read that a standby answers too. */
    public <T> CompletableFuture<T> inspect(CoreCall<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                result.complete(work.apply(core));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        return result;
    }

    /** This controller's lease identity (its id, and which process it is). */
    public String holder() {
        return holder;
    }

    /** Runs {@code work} on the controller loop whatever the leadership, for stream bookkeeping. */
    public void execute(CoreAction work) {
        loop.execute(() -> guarded("session", () -> work.accept(core)));
    }

    @FunctionalInterface
    public interface CoreCall<T> {
        T apply(ControllerCore core) throws Exception;
    }

    @FunctionalInterface
    public interface CoreAction {
        void accept(ControllerCore core) throws Exception;
    }

    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    private void renewLease() {
        guarded("lease", core::maintainLease);
    }

    private void guarded(String what, Step step) {
        try {
            step.run();
        } catch (Exception e) {
            LOG.errorf(e, "controller %s step failed", what);
        } finally {
            publishLeadership();
        }
    }

    private void publishLeadership() {
        writableUntilMs = core.writableUntilMs();
        leader = core.isLeader();
        epochForLogs = core.epoch();
        writableForLogsUntilMs = core.isLeader() ? writableUntilMs : 0;
        if (core.reconcileUnfinished()) {
            // Queued behind whatever is due (a lease renewal first).
            requestReconcile();
        }
    }

    /** A controller id for a process not given one: the host name and the process id. */
    public static String defaultHolder() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }

}
