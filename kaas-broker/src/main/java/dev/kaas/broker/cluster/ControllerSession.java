package dev.kaas.broker.cluster;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.ListenerSpec;
import dev.kaas.common.cluster.AssignmentChunks;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.proto.AssignmentPush;
import dev.kaas.proto.BrokerLinkGrpc;
import dev.kaas.proto.BrokerReport;
import dev.kaas.proto.ControllerCommand;
import dev.kaas.proto.Endpoint;
import dev.kaas.proto.Register;
import dev.kaas.proto.Stats;
import dev.kaas.proto.Status;
import io.grpc.stub.StreamObserver;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import dev.kaas.common.cluster.StandaloneMetadata;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The broker's end of the controller stream: register with our endpoints, report every
 * interval, apply every assignment pushed down, reconnect with back-off when the stream ends.
 * Losing the controller changes nothing that is being served: only changes stop.
 *
 * <p>Assignments arrive in pieces ({@link AssignmentChunks}) and are applied whole. The broker
 * counts as connected from the first command the controller sends (it answers a registration
 * with the current assignment); a registration refused because our broker id is live under
 * another process (ALREADY_EXISTS) is retried on the same back-off.
 *
 * <p>Threading: every send on the stream happens on the session thread, one at a time.
 */
@ApplicationScoped
public class ControllerSession {
    private static final Logger LOG = Logger.getLogger(ControllerSession.class);

    @Inject
    ControllerChannel channel;

    @Inject
    BrokerConfig config;

    @Inject
    ClusterView view;

    @Inject
    AssignmentReceiver applier;

    @Inject
    Doorbell doorbell;

    private final String incarnation = UUID.randomUUID().toString();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-controller-session");
        t.setDaemon(true);
        return t;
    });
    private StreamObserver<BrokerReport> out;
    private volatile int generation;
    private int endedGeneration;
    /** Status reports sent since the controller last said anything: silence is counted in these, not in wall time. */
    private volatile int unanswered;
    /** Reconnect back-off: short at first (the controller may just be starting), doubling to a second. */
    private volatile long backoffMs = INITIAL_BACKOFF_MS;
    private static final long INITIAL_BACKOFF_MS = 50;
    private static final long MAX_BACKOFF_MS = 1000;
    private volatile boolean stopping;
    /** Streams opened since the broker started (the metrics' reconnect count). */
    private final java.util.concurrent.atomic.AtomicLong connects = new java.util.concurrent.atomic.AtomicLong();
    private volatile int refusals;
    private volatile int unauthenticated;
    /** When the controller last sent anything on the current stream (its start, before that). */
    private volatile long lastHeardNanos;
    /** The current stream was answered by a leader: if it ends, the same controller is tried again first. */
    private volatile boolean accepted;
    /** The current stream is being ended because the controller went silent: try the next one. */
    private volatile boolean silent;
    /** When this broker first found no cluster id on the volume (0: not yet); session thread only. */
    private long firstEmptyIdNanos;
    static final long EMPTY_CLUSTER_ID_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    void onStart(@Observes StartupEvent ev) {
        // The controller completes handoffs on our report that we applied (closed) an assignment: send it at once.
        applier.onApplied(() -> thread.execute(this::report));
        thread.execute(this::connect);
        long every = config.broker().reportInterval().toMillis();
        thread.scheduleWithFixedDelay(this::report, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * After the applier closed every partition (controlled shutdown, see its priority): ending the
     * stream cleanly tells the controller to place them elsewhere now.
     */
    void onStop(@Observes @Priority(200) ShutdownEvent ev) {
        stopping = true;
        try {
            thread.submit(() -> {
                if (out != null) {
                    out.onCompleted();
                    out = null;
                }
            }).get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.debugf(e, "closing the controller stream");
        }
        thread.shutdownNow();
    }

    private void connect() {
        if (stopping) {
            return;
        }
        String clusterId;
        try {
            clusterId = StandaloneMetadata.readClusterId(Path.of(config.dataDir()));
        } catch (Exception e) {
            clusterId = "";
        }
        if (!clusterId.isEmpty()) {
            // A later empty read (a volume remounted) gets its own grace period.
            firstEmptyIdNanos = 0;
        } else {
            // A fresh volume: the controller writes the cluster id when it formats it, which may be
            // after this broker started. Registering without it would be refused, loudly on both
            // sides; a while later it is, so that a directory that is not the volume is still named.
            long now = System.nanoTime();
            if (firstEmptyIdNanos == 0) {
                firstEmptyIdNanos = now;
            }
            if (now - firstEmptyIdNanos < EMPTY_CLUSTER_ID_WAIT_NANOS) {
                LOG.debugf("no cluster id in %s yet, waiting for the controller to format the volume", config.dataDir());
                thread.schedule(this::connect, 200, TimeUnit.MILLISECONDS);
                return;
            }
        }
        int gen = ++generation;
        connects.incrementAndGet();
        lastHeardNanos = System.nanoTime();
        accepted = false;
        silent = false;
        unanswered = 0;
        // The channel keeps its own reconnect back-off (1 s growing to 2 min) and fails calls fast
        // meanwhile; ours is the one that should count, so that a broker that started before its
        // controller, or outlived one, registers as soon as a controller answers.
        channel.resetConnectBackoff();
        try {
            AssignmentChunks.Assembler assembler = new AssignmentChunks.Assembler();
            out = BrokerLinkGrpc.newStub(channel).session(new StreamObserver<>() {
                @Override
                public void onNext(ControllerCommand command) {
                    if (gen != generation) {
                        return;
                    }
                    // The controller answers a registration with the current assignment: only now
                    // are we registered (a refused registration gets no command, only an error).
                    backoffMs = INITIAL_BACKOFF_MS;
                    refusals = 0;
                    unauthenticated = 0;
                    lastHeardNanos = System.nanoTime();
                    unanswered = 0;
                    accepted = true;
                    view.connected(true);
                    if (command.hasNudge()) {
                        doorbell.rung(command.getNudge().getFromBroker());
                    }
                    if (command.hasAssignment()) {
                        AssignmentPush push = command.getAssignment();
                        try {
                            var whole = assembler.accept(push.getVersion(), push.getChunkIndex(), push.getChunkCount(),
                                    push.getChunk().toByteArray());
                            if (whole.isPresent()) {
                                applier.submit(Json.read(whole.get(), Assignment.class));
                            }
                        } catch (Exception e) {
                            LOG.errorf(e, "unreadable assignment version=%d piece=%d/%d", push.getVersion(),
                                    push.getChunkIndex(), push.getChunkCount());
                        }
                    }
                }

                @Override
                public void onError(Throwable t) {
                    io.grpc.Status.Code code = io.grpc.Status.fromThrowable(t).getCode();
                    if (code == io.grpc.Status.Code.FAILED_PRECONDITION) {
                        LOG.errorf("registration refused by the controller, retrying: %s", t.getMessage());
                    }
                    if (code == io.grpc.Status.Code.UNAUTHENTICATED && unauthenticated++ == 0) {
                        // The broker and the controller know different link keys (or none yet): say so once.
                        LOG.warnf("the controller refused this broker's link key, retrying: %s", t.getMessage());
                    }
                    if (code == io.grpc.Status.Code.ALREADY_EXISTS) {
                        // Another live process registered under our id: keep retrying until its
                        // session ends, telling the operator once loudly and then quietly.
                        if (refusals++ == 0) {
                            LOG.errorf("registration refused by the controller, retrying: %s", t.getMessage());
                        } else {
                            LOG.debugf("registration refused again: %s", t.getMessage());
                        }
                    }
                    // A standby refuses at once, an unreachable or hung controller never answers:
                    // either way the next address; a leader that dropped an accepted stream is
                    // tried again first (it most likely still leads).
                    ended(gen, t.getMessage(), code != io.grpc.Status.Code.ALREADY_EXISTS
                            && code != io.grpc.Status.Code.FAILED_PRECONDITION && (!accepted || silent));
                }

                @Override
                public void onCompleted() {
                    ended(gen, "completed by the controller", !accepted);
                }
            });
            Register.Builder reg = Register.newBuilder().setBrokerId(view.brokerId()).setIncarnation(incarnation)
                    .setClusterId(clusterId);
            for (ListenerSpec l : ListenerSpec.parseList(config.broker().advertisedListeners())) {
                reg.addEndpoints(Endpoint.newBuilder().setListener(l.name()).setHost(l.host()).setPort(l.port())
                        .setSecurityProtocol("PLAINTEXT"));
            }
            out.onNext(BrokerReport.newBuilder().setRegister(reg).build());
            LOG.infof("registering with the controller broker=%d incarnation=%s controller=%s", view.brokerId(), incarnation,
                    channel.address());
        } catch (RuntimeException e) {
            ended(gen, e.getMessage(), true);
        }
    }

    private void ended(int gen, String why, boolean tryNextController) {
        if (stopping) {
            // The stream's end at shutdown reaches us after the session thread is gone.
            return;
        }
        try {
            endedOnSessionThread(gen, why, tryNextController);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            // stopping was set between the check and the hand-off: nothing to reconnect.
        }
    }

    private void endedOnSessionThread(int gen, String why, boolean tryNextController) {
        thread.execute(() -> {
            // Several paths may report one stream's end (our cancel and its error callback): act once.
            if (gen != generation || gen == endedGeneration || stopping) {
                return;
            }
            endedGeneration = gen;
            if (tryNextController) {
                channel.next();
            }
            if (view.connected()) {
                LOG.warnf("controller stream ended, reconnecting: %s", why);
            }
            view.connected(false);
            out = null;
            long delay = backoffMs;
            backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
            thread.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
        });
    }

    /**
     * A controller answers every status report. One that answered none of the last few, for
     * longer than a lease lasts, is hung (SIGSTOP, a stuck JVM) even if its connection is open:
     * a controller merely slow for that long would have stepped down (it stops leading two thirds
     * of a lease after its last renewal began), and a standby may lead by now. Counting unanswered
     * reports, not wall time, keeps this broker's own pauses (GC, SIGSTOP) from looking like the
     * controller's. With one controller there is nowhere else to go: the stream is kept.
     */
    static final int SILENT_REPORTS = 6;
    static final long SILENT_NANOS = TimeUnit.SECONDS.toNanos(6);

    /** Streams to a controller this broker opened since it started. */
    public long connects() {
        return connects.get();
    }

    /**
     * Sends what this broker leads and coordinates (see {@code Stats} in cluster.proto) on the
     * current stream, from the session thread; dropped when no controller has accepted the stream
     * (the next interval's stats go to the next one). Any thread.
     */
    public void sendStats(Stats stats) {
        try {
            thread.execute(() -> {
                if (out == null || !accepted || stopping) {
                    return;
                }
                try {
                    out.onNext(BrokerReport.newBuilder().setStats(stats).build());
                } catch (RuntimeException e) {
                    ended(generation, e.getMessage(), !accepted);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // Shutting down: the stream is ending.
        }
    }

    private void report() {
        if (out == null) {
            return;
        }
        long quietNanos = System.nanoTime() - lastHeardNanos;
        if (channel.count() > 1 && unanswered >= SILENT_REPORTS && quietNanos > SILENT_NANOS) {
            LOG.warnf("controller %s answered none of %d reports in %d ms, trying the next controller", channel.address(),
                    unanswered, TimeUnit.NANOSECONDS.toMillis(quietNanos));
            silent = true;
            StreamObserver<BrokerReport> stream = out;
            out = null;
            try {
                stream.onError(io.grpc.Status.CANCELLED.withDescription("controller silent").asRuntimeException());
            } catch (RuntimeException ignored) {
                // already ended
            }
            ended(generation, "controller silent", true);
            return;
        }
        unanswered++;
        try {
            out.onNext(BrokerReport.newBuilder().setStatus(Status.newBuilder()
                    .setHealthy(applier.allAssignedOpen())
                    .setAppliedAssignmentVersion(applier.appliedVersion())).build());
        } catch (RuntimeException e) {
            ended(generation, e.getMessage(), !accepted);
        }
    }
}
