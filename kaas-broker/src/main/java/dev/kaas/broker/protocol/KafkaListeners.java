package dev.kaas.broker.protocol;

import dev.kaas.broker.config.BrokerConfig;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Binds every configured listener. Each is served by one verticle instance per event loop on
 * the same port, so Vert.x spreads connections across loops.
 */
@ApplicationScoped
public class KafkaListeners {
    private static final Logger LOG = Logger.getLogger(KafkaListeners.class);

    private final Vertx vertx;
    private final BrokerConfig config;
    private final ApiRegistry registry;
    private final List<String> deployments = new ArrayList<>();

    public KafkaListeners(Vertx vertx, BrokerConfig config, ApiRegistry registry) {
        this.vertx = vertx;
        this.config = config;
        this.registry = registry;
    }

    void onStart(@Observes StartupEvent ev) throws Exception {
        for (ListenerSpec spec : ListenerSpec.parseList(config.broker().listeners())) {
            int instances = Math.max(1, Runtime.getRuntime().availableProcessors());
            String id = vertx.deployVerticle(() -> new ListenerVerticle(spec), new DeploymentOptions().setInstances(instances))
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            deployments.add(id);
            LOG.infof("kafka listener bound listener=%s address=%s:%d", spec.name(), spec.host(), spec.port());
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
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

        ListenerVerticle(ListenerSpec spec) {
            this.spec = spec;
        }

        @Override
        public void start(Promise<Void> started) {
            var options = new NetServerOptions().setHost(spec.host()).setPort(spec.port())
                    .setTcpNoDelay(true).setReuseAddress(true).setReusePort(false);
            vertx.createNetServer(options)
                    .connectHandler(socket -> new Connection(socket, context, registry, spec.name(),
                            config.broker().socketRequestMaxBytes(), config.broker().maxInFlightPerConnection()).start())
                    .listen()
                    .<Void>mapEmpty()
                    .onComplete(started);
        }
    }
}
