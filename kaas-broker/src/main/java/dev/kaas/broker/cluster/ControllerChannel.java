package dev.kaas.broker.cluster;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.common.cluster.LinkAuth;
import dev.kaas.common.cluster.LinkKey;
import dev.kaas.common.cluster.LinkKeySource;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The channel to whichever controller leads. With {@code kaas.broker.controllers} the broker knows
 * every controller and rotates through them ({@link #next}) until the leader accepts it: a
 * standby ends the stream at once ("not the active controller"), so the rotation finds the
 * leader within one pass, and finds a new one after a failover without any configuration change.
 *
 * <p>Every call carries proof of the cluster's link key ({@link LinkAuth}); until this broker
 * can read the key (a controller makes it at its first start), calls go without and are refused.
 */
@ApplicationScoped
public class ControllerChannel extends Channel {
    private static final Logger LOG = Logger.getLogger(ControllerChannel.class);

    private final List<Channel> channels = new ArrayList<>();
    /** Channels this class built (and closes); the Quarkus-configured one is Quarkus's. */
    private final List<ManagedChannel> owned = new ArrayList<>();
    private final List<String> addresses = new ArrayList<>();
    private volatile int current;
    private static final Metadata.Key<String> LINK_HEADER = Metadata.Key.of(LinkAuth.HEADER, Metadata.ASCII_STRING_MARSHALLER);
    private final LinkKeySource keys;
    /** DRBG: a call may start on an event loop, where no file (such as /dev/urandom) is read. */
    private final SecureRandom random;

    @Inject
    public ControllerChannel(BrokerConfig config, @GrpcClient("controller") Channel configured) throws NoSuchAlgorithmException {
        random = SecureRandom.getInstance("DRBG");
        random.nextBytes(new byte[1]); // seeds it here, not on the event loop of the first call
        keys = LinkKeySource.follow(config.linkKeyFile().map(Path::of)
                .orElseGet(() -> LinkKey.defaultFile(Path.of(config.dataDir()).toAbsolutePath())));
        var list = config.broker().controllers().map(String::trim).filter(s -> !s.isEmpty());
        if (list.isEmpty()) {
            channels.add(configured);
            addresses.add("quarkus.grpc.clients.controller");
            return;
        }
        for (String address : list.get().split(",")) {
            String a = address.trim();
            int colon = a.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("kaas.broker.controllers: '" + a + "' is not host:port");
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)))
                    .usePlaintext().build();
            channels.add(channel);
            owned.add(channel);
            addresses.add(a);
        }
    }

    /** Moves on to the next controller, after the current one refused or dropped us. */
    public void next() {
        if (channels.size() > 1) {
            current = (current + 1) % channels.size();
            LOG.debugf("trying controller %s", addresses.get(current));
        }
    }

    /** How many controllers this broker knows. */
    public int count() {
        return channels.size();
    }

    public String address() {
        return addresses.get(current);
    }

    /** Makes the next call on the current channel try to connect now, not after gRPC's own back-off. */
    public void resetConnectBackoff() {
        if (channels.get(current) instanceof ManagedChannel managed) {
            managed.resetConnectBackoff();
        }
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(channels.get(current).newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                keys.current().ifPresent(key -> headers.put(LINK_HEADER,
                        LinkAuth.sign(key, method.getFullMethodName(), System.currentTimeMillis(), random)));
                super.start(listener, headers);
            }
        };
    }

    @Override
    public String authority() {
        return channels.get(current).authority();
    }

    void onStop(@Observes @Priority(3000) ShutdownEvent ev) {
        keys.close();
        for (ManagedChannel c : owned) {
            c.shutdown();
            try {
                c.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
