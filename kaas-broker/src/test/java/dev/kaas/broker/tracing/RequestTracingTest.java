package dev.kaas.broker.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.protocol.RequestTiming;
import dev.kaas.broker.protocol.RequestTrace;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

/** Sampling, and the spans a traced request becomes: names, parents, times and attributes. Exported on close, no waits. */
class RequestTracingTest {
    /** What the batch processor exported. */
    static final class Collected implements SpanExporter {
        final List<SpanData> spans = new CopyOnWriteArrayList<>();

        @Override
        public CompletableResultCode export(Collection<SpanData> batch) {
            spans.addAll(batch);
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }

        SpanData named(String name) {
            return spans.stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow(() -> new AssertionError(name + " in " + spans));
        }
    }

    static RequestTiming timing(ApiKeys key, short version, long queue, long local, long remote, long send) {
        RequestTiming t = new RequestTiming();
        t.key = key;
        t.version = version;
        t.nanos[RequestTiming.QUEUE] = queue;
        t.nanos[RequestTiming.LOCAL] = local;
        t.nanos[RequestTiming.REMOTE] = remote;
        t.nanos[RequestTiming.SEND] = send;
        t.nanos[RequestTiming.TOTAL] = queue + local + remote + send;
        t.requestBytes = 321;
        return t;
    }

    static ProduceRequest produce() {
        MemoryRecords one = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("v".getBytes()));
        var data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000).setTopicData(new ProduceRequestData.TopicProduceDataCollection(
                List.of(new ProduceRequestData.TopicProduceData().setName("a").setPartitionData(List.of(
                                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(one),
                                new ProduceRequestData.PartitionProduceData().setIndex(1).setRecords(one))),
                        new ProduceRequestData.TopicProduceData().setName("b").setPartitionData(List.of(
                                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(one)))).iterator()));
        return new ProduceRequest(data, (short) 9);
    }

    static ProduceResponseData produceAnswer() {
        ProduceResponseData r = new ProduceResponseData();
        r.responses().add(new ProduceResponseData.TopicProduceResponse().setName("a").setPartitionResponses(List.of(
                new ProduceResponseData.PartitionProduceResponse().setIndex(0),
                new ProduceResponseData.PartitionProduceResponse().setIndex(1).setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()))));
        r.responses().add(new ProduceResponseData.TopicProduceResponse().setName("b").setPartitionResponses(List.of(
                new ProduceResponseData.PartitionProduceResponse().setIndex(0))));
        return r;
    }

    @Test
    void aRequestIsTracedWhenItsDrawIsBelowTheRatio() {
        ArrayDeque<Double> draws = new ArrayDeque<>(List.of(0.1, 0.3, 0.2499, 0.25));
        Collected out = new Collected();
        RequestTracing tracing = new RequestTracing(0.25, out, "broker-1", draws::poll);
        RequestHeader h = new RequestHeader(ApiKeys.METADATA, (short) 12, "c", 1);
        List<Boolean> traced = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            traced.add(tracing.start(h, System.nanoTime(), "PLAINTEXT", "/127.0.0.1") != null);
        }
        assertThat(traced).containsExactly(true, false, true, false);
        tracing.close();
    }

    @Test
    void offWithoutAnExporterOrAtRatioZero() {
        RequestHeader h = new RequestHeader(ApiKeys.METADATA, (short) 12, "c", 1);
        RequestTracing noExporter = new RequestTracing(1.0, null, "broker-1", () -> 0.0);
        RequestTracing zero = new RequestTracing(0.0, new Collected(), "broker-1", () -> 0.0);
        assertThat(noExporter.enabled()).isFalse();
        assertThat(zero.enabled()).isFalse();
        assertThat(noExporter.start(h, System.nanoTime(), "PLAINTEXT", "/127.0.0.1")).isNull();
        assertThat(zero.start(h, System.nanoTime(), "PLAINTEXT", "/127.0.0.1")).isNull();
        noExporter.close();
        zero.close();
    }

    @Test
    void aRatioOutsideZeroToOneIsRefused() {
        for (double bad : new double[] {-0.1, 1.5, Double.NaN}) {
            assertThatThrownBy(() -> new RequestTracing(bad, new Collected(), "broker-1", () -> 0.0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Invalid value " + bad + " for configuration kaas.tracing.sample-ratio: Value must be between 0 and 1");
        }
    }

    @Test
    void aProduceSpanCarriesTheRequestAndItsPartsAsChildren() {
        Collected out = new Collected();
        RequestTracing tracing = new RequestTracing(1.0, out, "broker-7", () -> 0.0);
        long arrived = System.nanoTime();
        RequestTrace trace = tracing.start(new RequestHeader(ApiKeys.PRODUCE, (short) 9, "producer-1", 42), arrived, "PLAINTEXT",
                "/127.0.0.1");
        TopicPartition a1 = new TopicPartition("a", 1);
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        trace.span("append", arrived + 2 * ms, arrived + 3 * ms, a1, "kaas.writer.wait_us", 250);
        trace.span("fsync", arrived + 4 * ms, arrived + 8 * ms, a1, "kaas.group_commit.appends", 3);
        trace.span("fence check", arrived + 8 * ms, arrived + 9 * ms, a1);
        trace.end(timing(ApiKeys.PRODUCE, (short) 9, ms, ms, 8 * ms, ms), produce(), produceAnswer());
        tracing.close();

        SpanData root = out.named("Produce");
        assertThat(root.getKind()).isEqualTo(SpanKind.SERVER);
        assertThat(root.getParentSpanContext().isValid()).as("a root: a record's traceparent is not the request's").isFalse();
        assertThat(root.getResource().getAttribute(AttributeKey.stringKey("service.instance.id"))).isEqualTo("broker-7");
        assertThat(root.getEndEpochNanos() - root.getStartEpochNanos()).isEqualTo(11 * ms);
        var attrs = root.getAttributes();
        assertThat(attrs.get(RequestTracing.API_KEY)).isEqualTo(0L);
        assertThat(attrs.get(RequestTracing.API_VERSION)).isEqualTo(9L);
        assertThat(attrs.get(RequestTracing.CLIENT_ID)).isEqualTo("producer-1");
        assertThat(attrs.get(RequestTracing.CORRELATION_ID)).isEqualTo(42L);
        assertThat(attrs.get(RequestTracing.CLIENT_ADDRESS)).isEqualTo("127.0.0.1");
        assertThat(attrs.get(RequestTracing.TOPIC_COUNT)).isEqualTo(2L);
        assertThat(attrs.get(RequestTracing.PARTITION_COUNT)).isEqualTo(3L);
        assertThat(attrs.get(RequestTracing.ERROR_CODE)).isEqualTo((long) Errors.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(attrs.get(RequestTracing.ERROR_NAME)).isEqualTo("NOT_LEADER_OR_FOLLOWER");
        assertThat(attrs.get(RequestTracing.ERRORS)).isEqualTo("NOT_LEADER_OR_FOLLOWER=1");
        assertThat(attrs.get(RequestTracing.REQUEST_BYTES)).isEqualTo(321L);
        assertThat(attrs.get(RequestTracing.ANSWERED)).isTrue();

        Map<String, SpanData> children = out.spans.stream().filter(s -> s != root).collect(Collectors.toMap(SpanData::getName, Function.identity()));
        assertThat(children).containsOnlyKeys("queue", "local", "send", "append", "fsync", "fence check");
        assertThat(children.values()).allSatisfy(c -> {
            assertThat(c.getTraceId()).isEqualTo(root.getTraceId());
            assertThat(c.getParentSpanId()).isEqualTo(root.getSpanId());
            assertThat(c.getStartEpochNanos()).isGreaterThanOrEqualTo(root.getStartEpochNanos());
            assertThat(c.getEndEpochNanos()).isLessThanOrEqualTo(root.getEndEpochNanos());
        });
        SpanData fsync = children.get("fsync");
        assertThat(fsync.getStartEpochNanos() - root.getStartEpochNanos()).isEqualTo(4 * ms);
        assertThat(fsync.getEndEpochNanos() - fsync.getStartEpochNanos()).isEqualTo(4 * ms);
        assertThat(fsync.getAttributes().get(RequestTracing.TOPIC)).isEqualTo("a");
        assertThat(fsync.getAttributes().get(RequestTracing.PARTITION)).isEqualTo("1");
        assertThat(fsync.getAttributes().get(AttributeKey.longKey("kaas.group_commit.appends"))).isEqualTo(3L);
        assertThat(children.get("queue").getEndEpochNanos() - root.getStartEpochNanos()).isEqualTo(ms);
        assertThat(root.getEndEpochNanos() - children.get("send").getStartEpochNanos()).isEqualTo(ms);
    }

    @Test
    void aFetchsErrorsAreReadFromItsPartitionsAndUnreadableOnesAreLeftOut() {
        Collected out = new Collected();
        RequestTracing tracing = new RequestTracing(1.0, out, "broker-1", () -> 0.0);
        short v = 12;
        RequestTrace fetch = tracing.start(new RequestHeader(ApiKeys.FETCH, v, "consumer", 1), System.nanoTime(), "PLAINTEXT", "/::1");
        FetchResponseData answer = new FetchResponseData();
        answer.responses().add(new FetchResponseData.FetchableTopicResponse().setTopic("t").setPartitions(List.of(
                new FetchResponseData.PartitionData().setPartitionIndex(0).setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code()),
                new FetchResponseData.PartitionData().setPartitionIndex(1).setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()),
                new FetchResponseData.PartitionData().setPartitionIndex(2).setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()),
                // Records no encoder could write: a Fetch's errors are read without encoding it.
                new FetchResponseData.PartitionData().setPartitionIndex(3).setRecords(new org.apache.kafka.common.record.BaseRecords() {
                    @Override
                    public int sizeInBytes() {
                        throw new IllegalStateException("not encodable");
                    }

                    @Override
                    public org.apache.kafka.common.record.RecordsSend<? extends org.apache.kafka.common.record.BaseRecords> toSend() {
                        throw new IllegalStateException("not encodable");
                    }
                }))));
        fetch.end(timing(ApiKeys.FETCH, v, 1, 1, 0, 1), null, answer);

        // A response its own version cannot carry (a topic without a name before v12): its errors cannot be read.
        RequestTrace v0 = tracing.start(new RequestHeader(ApiKeys.METADATA, (short) 0, "old", 2), System.nanoTime(), "PLAINTEXT", "/::1");
        MetadataResponseData unencodable = new MetadataResponseData();
        unencodable.topics().add(new MetadataResponseData.MetadataResponseTopic().setName(null));
        v0.end(timing(ApiKeys.METADATA, (short) 0, 1, 1, 0, 1), new MetadataRequest(new MetadataRequestData().setTopics(List.of()), (short) 0),
                unencodable);
        tracing.close();

        var f = out.named("Fetch").getAttributes();
        assertThat(f.get(RequestTracing.ERROR_NAME)).isEqualTo("NOT_LEADER_OR_FOLLOWER");
        assertThat(f.get(RequestTracing.ERRORS)).isEqualTo("NOT_LEADER_OR_FOLLOWER=2,OFFSET_OUT_OF_RANGE=1");
        var m = out.named("Metadata").getAttributes();
        assertThat(m.get(RequestTracing.ERROR_CODE)).isNull();
        assertThat(m.get(RequestTracing.ANSWERED)).isTrue();
        assertThat(m.get(RequestTracing.TOPIC_COUNT)).as("Metadata v0 with no topics asks for all").isNull();
    }

    @Test
    void anyResponsesErrorsAreReadAndAnUnansweredRequestSaysSo() {
        Collected out = new Collected();
        RequestTracing tracing = new RequestTracing(1.0, out, "broker-1", () -> 0.0);
        short v = 12;
        RequestTrace metadata = tracing.start(new RequestHeader(ApiKeys.METADATA, v, "admin", 5), System.nanoTime(), "PLAINTEXT", "/::1");
        MetadataResponseData answer = new MetadataResponseData();
        answer.topics().add(new MetadataResponseData.MetadataResponseTopic().setName("missing")
                .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
        metadata.end(timing(ApiKeys.METADATA, v, 1, 1, 0, 1), new MetadataRequest(new MetadataRequestData().setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName("missing"))), v), answer);

        RequestTrace acksZero = tracing.start(new RequestHeader(ApiKeys.PRODUCE, (short) 9, "p", 6), System.nanoTime(), "PLAINTEXT", "/::1");
        acksZero.end(timing(ApiKeys.PRODUCE, (short) 9, 1, 1, 0, 0), produce(), null);
        tracing.close();

        var m = out.named("Metadata").getAttributes();
        assertThat(m.get(RequestTracing.ERROR_CODE)).isEqualTo((long) Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(m.get(RequestTracing.TOPIC_COUNT)).isEqualTo(1L);
        assertThat(m.get(RequestTracing.PARTITION_COUNT)).as("Metadata names no partitions").isNull();
        var p = out.named("Produce").getAttributes();
        assertThat(p.get(RequestTracing.ANSWERED)).isFalse();
        assertThat(p.get(RequestTracing.ERROR_CODE)).isNull();
        assertThat(out.spans).extracting(SpanData::getName).as("no send without a response").containsOnlyOnce("send");
    }
}
