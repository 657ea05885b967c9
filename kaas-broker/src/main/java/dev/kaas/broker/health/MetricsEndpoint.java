package dev.kaas.broker.health;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerSession;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.group.GroupCoordinator;
import dev.kaas.broker.group.GroupShard;
import dev.kaas.broker.metrics.BrokerMetrics;
import dev.kaas.broker.protocol.KafkaListeners;
import dev.kaas.broker.protocol.RequestObserver;
import dev.kaas.broker.protocol.RequestTiming;
import dev.kaas.broker.protocol.RequestTrace;
import dev.kaas.broker.storage.LogObserver;
import dev.kaas.broker.tracing.RequestTracing;
import dev.kaas.common.config.OtlpEndpoints;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.TopicAssignment;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.requests.RequestHeader;
import org.jboss.logging.Logger;

/**
 * The broker's metrics ({@link BrokerMetrics}) and their Prometheus scrape endpoint,
 * {@code GET /q/metrics} on the HTTP port next to health (never on a Kafka listener). A scrape
 * reads the counters and the partitions' offsets on a worker thread, not on an event loop.
 * Names and the Apache MBeans they stand for: src/docs/operations.md.
 */
@ApplicationScoped
public class MetricsEndpoint {
    private static final Logger LOG = Logger.getLogger(MetricsEndpoint.class);

    /** {@code kaas.metrics.*} ({@link BrokerConfig.Metrics}) bounds what is kept. */
    @Produces
    @Singleton
    BrokerMetrics metrics(Partitions partitions, ClusterView view, Instance<KafkaListeners> listeners, Instance<GroupCoordinator> coordinator,
                          Instance<ControllerSession> session, BrokerConfig config) {
        BrokerMetrics metrics = new BrokerMetrics(new BrokerMetrics.Source() {
            @Override
            public BrokerMetrics.ControllerLink controllerLink() {
                Assignment a = view.assignment();
                if (a == null) {
                    return null;
                }
                return new BrokerMetrics.ControllerLink(a.version(), a.controllerEpoch(), session.isResolvable() ? session.get().connects() : 0);
            }

            @Override
            public boolean topicExists(String topic) {
                return view.topic(topic) != null;
            }

            @Override
            public Collection<BrokerMetrics.PartitionStat> partitions() {
                List<BrokerMetrics.PartitionStat> out = new ArrayList<>();
                for (Map.Entry<org.apache.kafka.common.TopicPartition, Replica> e : partitions.view().entrySet()) {
                    var log = e.getValue().log();
                    out.add(new BrokerMetrics.PartitionStat(e.getKey().topic(), e.getKey().partition(), log.sizeInBytes(),
                            log.logStartOffset(), log.logEndOffset()));
                }
                return out;
            }

            @Override
            public int partitionCount() {
                return partitions.view().size();
            }

            @Override
            public Map<String, Integer> connections() {
                // Looked up when scraped: the listeners need the metrics to be made first.
                return listeners.isResolvable() ? listeners.get().openConnections() : Map.of();
            }

            @Override
            public BrokerMetrics.GroupsStat groups() {
                if (!coordinator.isResolvable()) {
                    return BrokerMetrics.GroupsStat.NONE;
                }
                GroupCoordinator c = coordinator.get();
                Map<String, Integer> byState = new HashMap<>();
                long offsets = 0;
                try {
                    for (GroupShard.Census slot : c.callAll(GroupShard::census, StatsReporter.SLOT_WAIT_MS)
                            .get(2 * StatsReporter.SLOT_WAIT_MS, TimeUnit.MILLISECONDS)) {
                        slot.byState().forEach((state, n) -> byState.merge(state.wireName(), n, Integer::sum));
                        offsets += slot.offsets();
                    }
                } catch (Exception e) {
                    // Not a false drop to zero: the group gauges are left out of this scrape.
                    LOG.debugf("group gauges not read: %s", e.toString());
                    return new BrokerMetrics.GroupsStat(null, 0, c.counters().completedRebalances(), c.counters().offsetCommits());
                }
                return new BrokerMetrics.GroupsStat(byState, offsets, c.counters().completedRebalances(), c.counters().offsetCommits());
            }

        }, config.metrics().partitionMetrics(), config.metrics().maxSeries(), "broker-" + config.broker().id(),
                config.metrics().otlpEndpoint().map(e -> new BrokerMetrics.Otlp(checkedPath(e), config.metrics().otlpInterval())).orElse(null));
        partitions.logObserver(new LogObserver() {
            @Override
            public void groupCommit(long fsyncNanos, long fenceNanos, int appends) {
                metrics.groupCommit(fsyncNanos, fenceNanos, appends);
            }

            @Override
            public void takeover(long nanos) {
                metrics.takeover(nanos);
            }
        });
        return metrics;
    }

    /** Made before the first assignment is applied, so that every partition's log reports to them. */
    void early(@Observes @Priority(100) StartupEvent ev, BrokerMetrics metrics) {
        LOG.debugf("metrics ready");
    }

    /** A deleted topic's meters go once the assignment without it is applied, as Apache removes them. */
    void onApplied(@Observes AssignmentApplied applied, BrokerMetrics metrics) {
        try {
            LogContext.controllerEpoch(applied.assignment().controllerEpoch());
            Set<String> names = new HashSet<>();
            for (TopicAssignment t : applied.assignment().topics()) {
                names.add(t.topic().name());
            }
            metrics.retainTopics(names);
        } catch (RuntimeException e) {
            // A synchronous observer that throws skips the others (the coordinators' releases): never.
            LOG.warnf("metrics of deleted topics not dropped: %s", e.toString());
        }
    }

    /** Used as given; warned about when it cannot be what the operator meant (see {@link OtlpEndpoints#warning}). */
    static String checkedPath(String endpoint) {
        String warning = OtlpEndpoints.warning(endpoint);
        if (warning != null) {
            LOG.warn(warning);
        }
        return endpoint;
    }

    void close(@Disposes BrokerMetrics metrics) {
        metrics.close();
    }

    /** The connections' view of the metrics and the tracing: every request finished, timed; a sampled one traced. */
    @Produces
    @Singleton
    RequestObserver requests(BrokerMetrics metrics, RequestTracing tracing) {
        return new RequestObserver() {
            @Override
            public void done(RequestTiming t) {
                // RequestTiming's parts are BrokerMetrics' in the same order (RequestTimingTest).
                metrics.requestDone(t.key, t.version, t.fromFollower, t.nanos, t.throttleMs, t.requestBytes, t.conversionNanos,
                        t.temporaryMemoryBytes);
            }

            @Override
            public RequestTrace trace(RequestHeader header, long arrivedNanos, String listenerName, String clientHost) {
                return tracing.start(header, arrivedNanos, listenerName, clientHost);
            }
        };
    }

    void route(@Observes Router router, BrokerMetrics metrics) {
        router.get("/q/metrics").blockingHandler(ctx -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
            try {
                metrics.writePrometheus(out);
            } catch (Exception e) {
                LOG.warnf("metrics scrape failed: %s", e.toString());
                ctx.response().setStatusCode(500).end();
                return;
            }
            ctx.response().putHeader("Content-Type", BrokerMetrics.prometheusContentType()).end(Buffer.buffer(out.toByteArray()));
        }, false);
    }
}
