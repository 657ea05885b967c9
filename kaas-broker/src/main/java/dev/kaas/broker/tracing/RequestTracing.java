package dev.kaas.broker.tracing;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.RequestTiming;
import dev.kaas.broker.protocol.RequestTrace;
import dev.kaas.common.config.OtlpEndpoints;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.jboss.logging.Logger;

/**
 * Sampled request tracing (src/docs/operations.md#tracing): a SERVER span per sampled Kafka
 * request, from its frame's arrival to its response's hand-off to the socket, and child spans for
 * where its time went. The spans are made after the fact from the times the request pipeline and
 * the handlers took anyway ({@link RequestTiming}, a partition writer's append, a group commit's
 * fsync and fence check), so nothing is timed twice and an unsampled request costs a random draw.
 *
 * <p>The OpenTelemetry SDK directly, as for the metrics: a batch processor queues finished spans
 * (never blocking an event loop; past its queue they are dropped) and exports them by OTLP/HTTP.
 * A record's own trace context ({@code traceparent} headers) is never read or changed: every
 * request span is a root.
 */
@Singleton
public class RequestTracing implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(RequestTracing.class);
    /** How long a finished span may wait to be exported with others. */
    static final Duration EXPORT_DELAY = Duration.ofSeconds(1);
    static final Duration OTLP_TIMEOUT = Duration.ofSeconds(5);

    static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<Long> API_KEY = AttributeKey.longKey("kafka.api.key");
    static final AttributeKey<Long> API_VERSION = AttributeKey.longKey("kafka.api.version");
    static final AttributeKey<String> CLIENT_ID = AttributeKey.stringKey("messaging.client.id");
    static final AttributeKey<Long> CORRELATION_ID = AttributeKey.longKey("kafka.correlation.id");
    static final AttributeKey<String> LISTENER = AttributeKey.stringKey("kafka.listener");
    static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
    static final AttributeKey<Long> TOPIC_COUNT = AttributeKey.longKey("kafka.topic.count");
    static final AttributeKey<Long> PARTITION_COUNT = AttributeKey.longKey("kafka.partition.count");
    static final AttributeKey<Long> ERROR_CODE = AttributeKey.longKey("kafka.error.code");
    static final AttributeKey<String> ERROR_NAME = AttributeKey.stringKey("kafka.error.name");
    static final AttributeKey<String> ERRORS = AttributeKey.stringKey("kafka.errors");
    static final AttributeKey<Boolean> ANSWERED = AttributeKey.booleanKey("kafka.response.sent");
    static final AttributeKey<Long> THROTTLE_MS = AttributeKey.longKey("kafka.throttle_time_ms");
    static final AttributeKey<Long> REQUEST_BYTES = AttributeKey.longKey("kafka.request.bytes");
    static final AttributeKey<String> TOPIC = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> PARTITION = AttributeKey.stringKey("messaging.destination.partition.id");

    private final double ratio;
    private final DoubleSupplier random;
    /** Null when tracing is off. */
    private final SdkTracerProvider provider;
    private final Tracer tracer;

    @Inject
    public RequestTracing(BrokerConfig config) {
        this(config.tracing().sampleRatio(), exporter(config), "broker-" + config.broker().id(), () -> ThreadLocalRandom.current().nextDouble());
    }

    /**
     * @param ratio    the share of requests traced, 0 to 1
     * @param exporter where spans go; null: tracing off
     * @param instance {@code service.instance.id} of every span (the broker)
     * @param random   draws in [0, 1): a request is traced when its draw is below {@code ratio}
     */
    RequestTracing(double ratio, SpanExporter exporter, String instance, DoubleSupplier random) {
        if (!(ratio >= 0 && ratio <= 1)) {
            throw new IllegalArgumentException("Invalid value " + ratio + " for configuration kaas.tracing.sample-ratio: "
                    + "Value must be between 0 and 1");
        }
        this.ratio = ratio;
        this.random = random;
        if (exporter == null || ratio == 0) {
            if (exporter != null) {
                exporter.shutdown();
            }
            provider = null;
            tracer = null;
            return;
        }
        provider = SdkTracerProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "kaas-broker",
                        AttributeKey.stringKey("service.instance.id"), instance))))
                .setSampler(Sampler.alwaysOn())
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).setScheduleDelay(EXPORT_DELAY).build())
                .build();
        tracer = provider.get("dev.kaas.broker");
        LOG.infof("request tracing on: %s of requests sampled", ratio);
    }

    /** Null unless tracing will be on: an exporter holds an HTTP client nobody would close. */
    private static SpanExporter exporter(BrokerConfig config) {
        double ratio = config.tracing().sampleRatio();
        if (!(ratio > 0 && ratio <= 1)) {
            // Off, or refused by the constructor.
            return null;
        }
        String endpoint = config.tracing().otlpEndpoint().orElse(null);
        if (endpoint == null) {
            if (config.tracing().sampleRatio() > 0) {
                LOG.warnf("kaas.tracing.sample-ratio is %s but kaas.tracing.otlp-endpoint is not set: no request is traced",
                        config.tracing().sampleRatio());
            }
            return null;
        }
        String warning = OtlpEndpoints.warning("kaas.tracing.otlp-endpoint", endpoint, "traces");
        if (warning != null) {
            LOG.warn(warning);
        }
        return OtlpHttpSpanExporter.builder().setEndpoint(endpoint).setTimeout(OTLP_TIMEOUT).setRetryPolicy(null).build();
    }

    public boolean enabled() {
        return tracer != null;
    }

    /** A trace for the request whose frame arrived at {@code arrivedNanos}, or null: not sampled. */
    public RequestTrace start(RequestHeader header, long arrivedNanos, String listenerName, String clientHost) {
        if (tracer == null || random.getAsDouble() >= ratio) {
            return null;
        }
        // Spans take wall-clock times; the pipeline's are System.nanoTime, anchored once per trace as the SDK anchors a trace's spans.
        long offset = Clock.getDefault().now() - System.nanoTime();
        Span root = tracer.spanBuilder(header.apiKey().name).setNoParent().setSpanKind(SpanKind.SERVER)
                .setStartTimestamp(arrivedNanos + offset, TimeUnit.NANOSECONDS)
                .setAttribute(SYSTEM, "kafka")
                .setAttribute(API_KEY, (long) header.apiKey().id)
                .setAttribute(API_VERSION, (long) header.apiVersion())
                .setAttribute(CLIENT_ID, header.clientId() == null ? "" : header.clientId())
                .setAttribute(CORRELATION_ID, (long) header.correlationId())
                .setAttribute(LISTENER, listenerName)
                .setAttribute(CLIENT_ADDRESS, clientHost.startsWith("/") ? clientHost.substring(1) : clientHost)
                .startSpan();
        return new Trace(root, Context.root().with(root), arrivedNanos, offset);
    }

    private final class Trace implements RequestTrace {
        private final Span root;
        private final Context parent;
        private final long arrived;
        /** Epoch nanoseconds minus System.nanoTime. */
        private final long offset;

        Trace(Span root, Context parent, long arrived, long offset) {
            this.root = root;
            this.parent = parent;
            this.arrived = arrived;
            this.offset = offset;
        }

        @Override
        public void span(String name, long startNanos, long endNanos, TopicPartition partition, String attribute, long value) {
            try {
                SpanBuilder b = tracer.spanBuilder(name).setParent(parent).setSpanKind(SpanKind.INTERNAL)
                        .setStartTimestamp(startNanos + offset, TimeUnit.NANOSECONDS);
                if (partition != null) {
                    b.setAttribute(TOPIC, partition.topic()).setAttribute(PARTITION, Integer.toString(partition.partition()));
                }
                if (attribute != null) {
                    b.setAttribute(AttributeKey.longKey(attribute), value);
                }
                b.startSpan().end(Math.max(startNanos, endNanos) + offset, TimeUnit.NANOSECONDS);
            } catch (RuntimeException e) {
                // Called from inside an append (RequestTrace's contract): a span is never worth its outcome.
                LOG.debugf("span %s not recorded: %s", name, e.toString());
            }
        }

        @Override
        public void end(RequestTiming timing, AbstractRequest request, ApiMessage response) {
            long[] n = timing.nanos;
            long handlerStart = arrived + n[RequestTiming.QUEUE];
            long ended = arrived + n[RequestTiming.TOTAL];
            span("queue", arrived, handlerStart, null);
            span("local", handlerStart, handlerStart + n[RequestTiming.LOCAL], null);
            if (response != null) {
                span("send", ended - n[RequestTiming.SEND], ended, null);
            }
            RequestShapes.Counts counts = RequestShapes.counts(request);
            if (counts.topics() >= 0) {
                root.setAttribute(TOPIC_COUNT, (long) counts.topics());
            }
            if (counts.partitions() >= 0) {
                root.setAttribute(PARTITION_COUNT, (long) counts.partitions());
            }
            root.setAttribute(REQUEST_BYTES, (long) timing.requestBytes);
            root.setAttribute(ANSWERED, response != null);
            if (timing.throttleMs > 0) {
                root.setAttribute(THROTTLE_MS, (long) timing.throttleMs);
            }
            if (response != null) {
                Map<Errors, Integer> errors = RequestShapes.errors(timing.key, timing.version, response);
                if (errors != null) {
                    Errors main = RequestShapes.main(errors);
                    root.setAttribute(ERROR_CODE, (long) main.code());
                    root.setAttribute(ERROR_NAME, main.name());
                    if (!errors.isEmpty()) {
                        // Most frequent first, as the main error is chosen.
                        root.setAttribute(ERRORS, errors.entrySet().stream()
                                .sorted(Map.Entry.<Errors, Integer>comparingByValue().reversed()
                                        .thenComparing(e -> e.getKey().code()))
                                .map(e -> e.getKey().name() + "=" + e.getValue())
                                .collect(Collectors.joining(",")));
                    }
                }
            }
            root.end(ended + offset, TimeUnit.NANOSECONDS);
        }
    }

    /** Exports what is queued (bounded), then stops. */
    @PreDestroy
    @Override
    public void close() {
        if (provider != null) {
            provider.shutdown().join(OTLP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
