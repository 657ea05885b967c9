package dev.kaas.controller.health;

import dev.kaas.common.config.OtlpEndpoints;
import dev.kaas.controller.cluster.ClusterStats;
import dev.kaas.controller.cluster.ControllerRuntime;
import dev.kaas.controller.config.ControllerConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The controller's Prometheus scrape endpoint, {@code GET /q/metrics} on its HTTP port next to
 * health; a scrape reads on a worker thread. Names: src/docs/operations.md.
 */
@ApplicationScoped
public class MetricsEndpoint {
    private static final Logger LOG = Logger.getLogger(MetricsEndpoint.class);
    /** A scrape does not wait longer than this for the loop (busy renewing the lease, say): its own gauges are left out. */
    static final long LOOP_WAIT_MS = 2_000;

    @Produces
    @Singleton
    ControllerMetrics metrics(ClusterStats stats, ControllerRuntime runtime, ControllerConfig config) {
        return new ControllerMetrics(stats, runtime::isLeader, () -> {
            try {
                return runtime.submit(core -> new ControllerMetrics.Reading(core.epoch(),
                        core.current() == null ? -1 : core.current().version(), core.liveBrokers(), core.registrations()))
                        .get(LOOP_WAIT_MS, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                return null;
            }
        }, config.metrics().maxSeries(), config.controller().id().orElseGet(ControllerRuntime::defaultHolder),
                config.metrics().otlpEndpoint().map(e -> new ControllerMetrics.Otlp(checkedPath(e), config.metrics().otlpInterval())).orElse(null));
    }

    /** Used as given; warned about when it cannot be what the operator meant (see {@link OtlpEndpoints#warning}). */
    static String checkedPath(String endpoint) {
        String warning = OtlpEndpoints.warning(endpoint);
        if (warning != null) {
            LOG.warn(warning);
        }
        return endpoint;
    }

    void close(@Disposes ControllerMetrics metrics) {
        metrics.close();
    }

    void route(@Observes Router router, ControllerMetrics metrics) {
        router.get("/q/metrics").blockingHandler(ctx -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
            try {
                metrics.writePrometheus(out);
            } catch (Exception e) {
                LOG.warnf("metrics scrape failed: %s", e.toString());
                ctx.response().setStatusCode(500).end();
                return;
            }
            ctx.response().putHeader("Content-Type", ControllerMetrics.prometheusContentType()).end(Buffer.buffer(out.toByteArray()));
        }, false);
    }
}
