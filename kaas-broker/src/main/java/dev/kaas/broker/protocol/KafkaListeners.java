package dev.kaas.broker.protocol;

import dev.kaas.broker.auth.AccessControl;
import dev.kaas.broker.auth.ListenerProtocols;
import dev.kaas.broker.auth.SaslEndpoint;
import dev.kaas.broker.auth.ScramCredentials;
import dev.kaas.broker.auth.TlsEndpoint;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.DynamicConfigLayers;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServerOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * Binds every configured listener. Each is served by one verticle instance per event loop on
 * the same port, so Vert.x spreads connections across loops. A listener's protocol comes from
 * Apache's {@code listener.security.protocol.map}: PLAINTEXT; SSL with Apache's {@code ssl.*}
 * settings ({@link TlsEndpoint}); SASL_PLAINTEXT with Apache's {@code sasl.*} settings
 * ({@link SaslEndpoint}); SASL_SSL with both.
 */
@ApplicationScoped
public class KafkaListeners {
    private static final Logger LOG = Logger.getLogger(KafkaListeners.class);

    private final Vertx vertx;
    private final BrokerConfig config;
    private final ApiRegistry registry;
    private final List<String> deployments = new ArrayList<>();
    private final RequestMemory memory;
    private final ConnectionLimits limits;
    private final RequestObserver observer;
    private final ConnectionCreationRates creationRates;
    private final List<String> listenerNames = new ArrayList<>();
    /** The connection limits of this broker's static configuration, and those in force (the assignment thread's). */
    private final ConnectionSettings staticConnections;
    private volatile ConnectionSettings connections;
    /** The last settings that could not be applied, logged once. */
    private ConnectionSettings refusedConnections;
    private final ScramCredentials scram;
    private final AccessControl access;
    private final ConnectionRates rates;
    private final RequestQuota requestQuota;
    /** Connections past their address's creation rate, waiting out their delay before they are closed. */
    private final java.util.concurrent.atomic.AtomicInteger heldBack = new java.util.concurrent.atomic.AtomicInteger();
    static final int MAX_HELD_BACK = 10_000;
    private final List<SaslEndpoint> saslEndpoints = new ArrayList<>();
    /** Re-reads TLS store files off the event loops (TlsEndpoint.reload). */
    private final java.util.concurrent.ScheduledExecutorService reloads = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-tls-reload");
        t.setDaemon(true);
        return t;
    });

    /**
     * Reads segment bytes for Fetch responses that go through TLS ({@link SliceChunks}): blocking
     * file reads, kept off the event loops. Page-cache reads of a few chunks each, so two threads.
     */
    private final java.util.concurrent.ExecutorService sliceReader = java.util.concurrent.Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "kaas-tls-slice-read");
        t.setDaemon(true);
        return t;
    });

    /**
     * What all TLS connections together may hold read ahead of their channels beyond one chunk
     * each: 64 MiB, so stalled consumers cannot hold more between them; each connection borrows
     * at most a window less a chunk of it ({@link SliceChunks.Share}).
     */
    private final java.util.concurrent.Semaphore sliceReadAhead = new java.util.concurrent.Semaphore(SLICE_READ_AHEAD_BYTES / SliceChunks.CHUNK);
    static final int SLICE_READ_AHEAD_BYTES = 64 << 20;

    public KafkaListeners(Vertx vertx, BrokerConfig config, ApiRegistry registry, ScramCredentials scram, AccessControl access,
                          ConnectionRates rates, RequestQuota requestQuota, RequestObserver observer) {
        this.observer = observer;
        this.rates = rates;
        this.requestQuota = requestQuota;
        this.scram = scram;
        this.access = access;
        this.vertx = vertx;
        this.config = config;
        this.registry = registry;
        this.memory = new RequestMemory(config.broker().queuedMaxRequestBytes());
        Map<String, Integer> perListener = new HashMap<>();
        Map<String, Integer> ratePerListener = new HashMap<>();
        for (ListenerSpec spec : ListenerSpec.parseList(config.broker().listeners())) {
            listenerNames.add(spec.name());
            listenerInt(spec.name(), "max.connections").ifPresent(max -> perListener.put(spec.name(), max));
            listenerInt(spec.name(), "max.connection.creation.rate").ifPresent(rate -> ratePerListener.put(spec.name(), rate));
        }
        if (config.broker().maxConnectionCreationRate() < 0) {
            throw new IllegalArgumentException("Invalid value " + config.broker().maxConnectionCreationRate()
                    + " for configuration max.connection.creation.rate: Value must be at least 0");
        }
        this.staticConnections = new ConnectionSettings(config.broker().maxConnectionsPerIp(),
                config.broker().maxConnectionsPerIpOverrides().orElse(""), config.broker().maxConnections(),
                config.broker().maxConnectionCreationRate(), perListener, ratePerListener);
        this.connections = staticConnections;
        this.limits = new ConnectionLimits(staticConnections.limits());
        this.creationRates = new ConnectionCreationRates(config.broker().maxConnectionCreationRate(), ratePerListener,
                org.apache.kafka.common.utils.Time.SYSTEM, (ms, task) -> vertx.setTimer(ms, id -> task.run()),
                config.broker().quotaWindowNum(), config.broker().quotaWindowSizeSeconds());
    }

    /** Open connections by listener name, every listener named (the metrics' connection count). */
    public Map<String, Integer> openConnections() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        for (String name : listenerNames) {
            out.put(name, limits.openOn(name));
        }
        return out;
    }

    /**
     * The dynamic broker configs of an applied assignment: the connection limits follow them
     * (for connections accepted from now on; open ones are kept, as in Apache). Limits that cannot
     * be applied (an override host that does not resolve) are logged and the previous ones kept.
     */
    void onDynamicConfigs(@Observes DynamicConfigLayers layers) {
        ConnectionSettings next = staticConnections.withDynamic(layers, listenerNames);
        if (next.equals(connections) || next.equals(refusedConnections)) {
            // Unchanged, or refused already: not resolved again on every assignment.
            return;
        }
        ConnectionLimits.Limits nextLimits;
        try {
            nextLimits = next.limits();
        } catch (IllegalArgumentException e) {
            if (!next.equals(refusedConnections)) {
                LOG.errorf("connection limits not changed to %s: %s", next, e.getMessage());
                refusedConnections = next;
            }
            return;
        }
        refusedConnections = null;
        limits.update(nextLimits);
        creationRates.update(next.creationRate(), next.listenerRate());
        connections = next;
        LOG.infof("connection limits now %s", next);
    }

    /** A listener's own limit, {@code listener.name.<listener>.<name>} (Apache lower-cases the listener there), at least 0. */
    static Optional<Integer> listenerInt(String listener, String name) {
        String key = "listener.name." + listener.toLowerCase(java.util.Locale.ROOT) + "." + name;
        Optional<String> raw = ConfigProvider.getConfig().getOptionalValue(key, String.class);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        int value;
        try {
            value = Integer.parseInt(raw.get().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid value " + raw.get() + " for configuration " + key + ": Not a number of type INT");
        }
        if (value < 0) {
            throw new IllegalArgumentException("Invalid value " + value + " for configuration " + key + ": Value must be at least 0");
        }
        return Optional.of(value);
    }

    void onStart(@Observes StartupEvent ev) throws Exception {
        long queued = config.broker().queuedMaxRequestBytes();
        if (queued > 0 && queued < config.broker().socketRequestMaxBytes()) {
            // Reservations are strict (RequestMemory), so a maximum-size frame must fit the budget.
            throw new IllegalArgumentException("kaas.broker.queued-max-request-bytes (" + queued
                    + ") must be at least kaas.broker.socket-request-max-bytes (" + config.broker().socketRequestMaxBytes() + ") or -1");
        }
        ListenerProtocols protocols = ListenerProtocols.parse(config.broker().listenerSecurityProtocolMap());
        List<TlsEndpoint> tlsEndpoints = new ArrayList<>();
        for (ListenerSpec spec : ListenerSpec.parseList(config.broker().listeners())) {
            SecurityProtocol protocol = protocols.of(spec.name());
            // Raw values: Apache reads a password literally, while MicroProfile Config would expand a "${" in it.
            java.util.function.Function<String, Optional<String>> raw =
                    name -> Optional.ofNullable(ConfigProvider.getConfig().getConfigValue(name).getRawValue());
            TlsEndpoint tls = protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL
                    ? TlsEndpoint.create(spec.name(), raw) : null;
            SaslEndpoint sasl = protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL
                    ? SaslEndpoint.create(spec.name(), raw, scram) : null;
            if (sasl != null) {
                saslEndpoints.add(sasl);
            }
            if (tls != null) {
                tlsEndpoints.add(tls);
            }
            int instances = Math.max(1, Runtime.getRuntime().availableProcessors());
            String id = vertx.deployVerticle(() -> new ListenerVerticle(spec, tls, sasl), new DeploymentOptions().setInstances(instances))
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            deployments.add(id);
            LOG.infof("kafka listener bound listener=%s protocol=%s address=%s:%d%s", spec.name(), protocol, spec.host(), spec.port(),
                    sasl == null ? "" : " mechanisms=" + sasl.mechanisms());
        }
        if (!tlsEndpoints.isEmpty()) {
            // Kubernetes swaps a mounted Secret's files in place: new connections get the new certificates.
            long every = Math.max(1, config.broker().sslReloadInterval().toMillis());
            reloads.scheduleWithFixedDelay(() -> tlsEndpoints.forEach(tls -> {
                try {
                    tls.reload();
                } catch (Throwable e) {
                    // Caught whole: a periodic task that throws is never run again, and rotation would stop unseen.
                    LOG.errorf(e, "TLS reload of listener %s failed", tls.listener());
                }
            }), every, every, TimeUnit.MILLISECONDS);
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
        reloads.shutdownNow();
        // Not shutdownNow: an interrupted FileChannel.read closes the channel, and it is the segment's.
        sliceReader.shutdown();
        saslEndpoints.forEach(SaslEndpoint::close);
        for (String id : deployments) {
            try {
                vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.debugf(e, "undeploy failed");
            }
        }
    }

    private final class ListenerVerticle extends AbstractVerticle {
        private final ListenerSpec spec;
        private final TlsEndpoint tls;
        private final SaslEndpoint sasl;

        ListenerVerticle(ListenerSpec spec, TlsEndpoint tls, SaslEndpoint sasl) {
            this.spec = spec;
            this.tls = tls;
            this.sasl = sasl;
        }

        @Override
        public void start(Promise<Void> started) {
            var options = new NetServerOptions().setHost(spec.host()).setPort(spec.port())
                    .setTcpNoDelay(true).setReuseAddress(true).setReusePort(false);
            long idleMs = config.broker().connectionsMaxIdle().toMillis();
            if (idleMs > 0) {
                // Apache connections.max.idle.ms: neither read nor written for that long closes the socket.
                options.setIdleTimeout((int) Math.min(Integer.MAX_VALUE, idleMs)).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
            }
            vertx.createNetServer(options)
                    .connectHandler(socket -> {
                        if (!creationRates.limits(spec.name())) {
                            accept(socket);
                            return;
                        }
                        // max.connection.creation.rate: queued until Apache's paused acceptor would have taken it. The
                        // channel stops reading meanwhile: nothing is buffered, and a TLS handshake waits for its handler.
                        io.netty.channel.Channel channel = ((io.vertx.core.net.impl.NetSocketInternal) socket).channelHandlerContext().channel();
                        channel.config().setAutoRead(false);
                        boolean[] gone = {false};
                        socket.exceptionHandler(e -> { });
                        socket.closeHandler(v -> gone[0] = true);
                        boolean queued = creationRates.offer(spec.name(), () -> context.runOnContext(v -> {
                            if (gone[0]) {
                                return;
                            }
                            socket.closeHandler(null);
                            socket.exceptionHandler(null);
                            accept(socket);
                            channel.config().setAutoRead(true);
                        }));
                        if (!queued) {
                            LOG.debugf("closing connection: the backlog of listener=%s is full (max.connection.creation.rate)", spec.name());
                            socket.close();
                        }
                    })
                    .listen()
                    .<Void>mapEmpty()
                    .onComplete(started);
        }

        private void accept(io.vertx.core.net.NetSocket socket) {
            String ip = socket.remoteAddress().hostAddress();
            long throttle = rates.throttleMs(ip);
            if (throttle > 0) {
                // Apache's ConnectionThrottledException: not served, not counted, closed after the delay. What
                // arrives meanwhile is dropped (pausing would buffer it); past a bound, closed at once.
                LOG.debugf("closing connection in %d ms: connection_creation_rate reached client=/%s", throttle, ip);
                creationRates.unrecord(spec.name());
                socket.handler(bytes -> { });
                socket.exceptionHandler(e -> { });
                if (heldBack.incrementAndGet() > MAX_HELD_BACK) {
                    heldBack.decrementAndGet();
                    socket.close();
                    return;
                }
                long timer = vertx.setTimer(throttle, t -> socket.close());
                socket.closeHandler(v -> {
                    heldBack.decrementAndGet();
                    vertx.cancelTimer(timer);
                });
                return;
            }
            ConnectionLimits.Refusal refused = limits.admit(spec.name(), ip);
            if (refused != ConnectionLimits.Refusal.NONE) {
                LOG.debugf("closing connection: %s reached client=/%s", switch (refused) {
                    case TOTAL -> "max.connections (" + config.broker().maxConnections() + ")";
                    case LISTENER -> "listener.name." + spec.name().toLowerCase(java.util.Locale.ROOT) + ".max.connections";
                    default -> "max.connections.per.ip";
                }, ip);
                socket.close();
                return;
            }
            try {
                new Connection(socket, context, registry, spec.name(), config.broker().socketRequestMaxBytes(),
                        config.broker().maxInFlightPerConnection(), memory, () -> limits.closed(spec.name(), ip), tls, sasl, access,
                        requestQuota, sliceReader, sliceReadAhead, observer).start();
            } catch (RuntimeException e) {
                // Set-up failed before the connection could count its own close: count it here.
                LOG.warnf("closing connection: set-up failed client=/%s: %s", ip, e.toString());
                limits.closed(spec.name(), ip);
                socket.close();
            }
        }
    }
}
