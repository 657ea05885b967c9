package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.storage.FileSlice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;

/** Ordering, the in-flight limit and back-pressure, without sockets: a fake transport records what the pipeline does. */
class RequestPipelineTest {
    static final short V = 12;

    /** Records writes and the last readable signal. */
    static final class FakeTransport implements RequestPipeline.Transport {
        final List<Integer> answered = new ArrayList<>();
        /** Each response's body (after its header), by correlation id. */
        final Map<Integer, ByteBuffer> bodies = new HashMap<>();
        /** How many socket writes carried the answers. */
        int writes;
        final List<Boolean> readableSignals = new ArrayList<>();
        boolean writeQueueFull;
        boolean closed;

        @Override
        public void write(ByteBuffer bytes) {
            writes++;
            parse(bytes);
        }

        @Override
        public void write(List<ByteBuffer> buffers) {
            writes++;
            buffers.forEach(this::parse);
        }

        private void parse(ByteBuffer bytes) {
            ByteBuffer b = bytes.duplicate();
            b.getInt();
            int correlationId = ResponseHeader.parse(b, ApiKeys.METADATA.responseHeaderVersion(V)).correlationId();
            answered.add(correlationId);
            bodies.put(correlationId, b.slice());
        }

        /** The throttle time of a Metadata response. */
        int metadataThrottleMs(int correlationId) {
            return new MetadataResponseData(new ByteBufferAccessor(bodies.get(correlationId).duplicate()), V).throttleTimeMs();
        }

        @Override
        public void write(FileSlice slice) {
            throw new AssertionError("no records expected");
        }

        @Override
        public boolean writeQueueFull() {
            return writeQueueFull;
        }

        @Override
        public void readable(boolean readable) {
            readableSignals.add(readable);
        }

        @Override
        public void close() {
            closed = true;
        }

        @Override
        public String clientHost() {
            return "/127.0.0.1";
        }

        Boolean lastReadable() {
            return readableSignals.isEmpty() ? null : readableSignals.get(readableSignals.size() - 1);
        }
    }

    /** Metadata answered when the test completes the request's future, by correlation id. */
    static final class ControlledHandler implements ApiHandler {
        final Map<Integer, CompletableFuture<ApiMessage>> calls = new HashMap<>();
        final Map<Integer, RequestContext> contexts = new HashMap<>();

        @Override
        public ApiKeys key() {
            return ApiKeys.METADATA;
        }

        @Override
        public CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request) {
            CompletableFuture<ApiMessage> f = new CompletableFuture<>();
            calls.put(context.header().correlationId(), f);
            contexts.put(context.header().correlationId(), context);
            return f;
        }

        void answer(int correlationId) {
            calls.get(correlationId).complete(new MetadataResponseData());
        }
    }

    final FakeTransport transport = new FakeTransport();
    final ControlledHandler handler = new ControlledHandler();
    final RequestMemory memory = new RequestMemory(1 << 20);

    RequestPipeline pipeline(int maxInFlight) {
        return new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(handler)), "PLAINTEXT", maxInFlight);
    }

    /** A Metadata request frame (without its size field) holding its bytes of {@link #memory}. */
    FrameDecoder.Frame metadata(int correlationId) {
        return frame(ApiKeys.METADATA, V, new MetadataRequestData().setTopics(null), correlationId);
    }

    FrameDecoder.Frame frame(ApiKeys key, short version, ApiMessage body, int correlationId) {
        RequestHeader header = new RequestHeader(key, version, "test", correlationId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int hs = header.data().size(cache, header.headerVersion());
        ByteBuffer buf = ByteBuffer.allocate(hs + body.size(cache, version));
        ByteBufferAccessor out = new ByteBufferAccessor(buf);
        header.data().write(out, cache, header.headerVersion());
        body.write(out, cache, version);
        assertThat(memory.tryReserve(buf.capacity(), () -> { })).isTrue();
        return new FrameDecoder.Frame(buf.flip(), memory);
    }

    @Test
    void responsesGoOutInRequestOrderWhateverOrderHandlersFinishIn() {
        RequestPipeline p = pipeline(16);
        p.onFrame(metadata(1));
        p.onFrame(metadata(2));
        p.onFrame(metadata(3));

        handler.answer(3);
        handler.answer(2);
        assertThat(transport.answered).as("nothing overtakes request 1").isEmpty();
        handler.answer(1);

        assertThat(transport.answered).containsExactly(1, 2, 3);
        assertThat(transport.writes).as("the three became ready together: one socket write").isEqualTo(1);
        assertThat(memory.reserved()).as("every frame's bytes released once answered").isZero();
    }

    /** What an observer was told of each request: remote, response-queue, sum of the parts, total (nanoseconds). */
    record Seen(int correlationOrder, long remote, long responseQueue, long partsSum, long total) {
    }

    @Test
    void theObserverSeesApachesTimePartsAddingUpToTheTotal() throws Exception {
        List<Seen> seen = new ArrayList<>();
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(handler)), "PLAINTEXT", 16, null, 0,
                dev.kaas.broker.auth.AccessControl.NONE, RequestQuota.NONE, t -> {
                    assertThat(t.key).isEqualTo(ApiKeys.METADATA);
                    long[] n = t.nanos;
                    seen.add(new Seen(seen.size(), n[RequestTiming.REMOTE], n[RequestTiming.RESPONSE_QUEUE],
                            n[RequestTiming.QUEUE] + n[RequestTiming.LOCAL] + n[RequestTiming.REMOTE] + n[RequestTiming.RESPONSE_QUEUE]
                                    + n[RequestTiming.SEND], n[RequestTiming.TOTAL]));
                });
        p.onFrame(metadata(1));
        p.onFrame(metadata(2));

        // Request 2's handler finishes after 20 ms; its response then waits 20 ms more behind request 1's
        Thread.sleep(20);
        handler.answer(2);
        Thread.sleep(20);
        handler.answer(1);

        assertThat(seen).hasSize(2);
        long ms = 1_000_000;
        assertThat(seen.get(0).remote()).as("request 1 waited 40 ms for its handler's answer").isGreaterThanOrEqualTo(40 * ms);
        assertThat(seen.get(0).responseQueue()).as("and went out at once").isLessThan(20 * ms);
        assertThat(seen.get(1).remote()).isBetween(20 * ms, 40 * ms);
        assertThat(seen.get(1).responseQueue()).as("request 2 waited behind request 1").isGreaterThanOrEqualTo(20 * ms);
        assertThat(seen).allSatisfy(s -> assertThat(s.partsSum()).isEqualTo(s.total()));
    }

    /**
     * An observer that writes into {@code told} each request done ("done") and each trace's end
     * ("end <correlation id> answered=<whether a response went out>"), tracing the requests
     * {@code sampled} picks.
     */
    static RequestObserver tracing(List<String> told, java.util.function.IntPredicate sampled) {
        return new RequestObserver() {
            @Override
            public void done(RequestTiming timing) {
                told.add("done");
            }

            @Override
            public RequestTrace trace(RequestHeader header, long arrivedNanos, String listenerName, String clientHost) {
                if (!sampled.test(header.correlationId())) {
                    return null;
                }
                assertThat(arrivedNanos).isLessThanOrEqualTo(System.nanoTime());
                assertThat(listenerName).isEqualTo("PLAINTEXT");
                return new RequestTrace() {
                    @Override
                    public void span(String name, long startNanos, long endNanos, org.apache.kafka.common.TopicPartition partition,
                                     String attribute, long value) {
                    }

                    @Override
                    public void end(RequestTiming timing, AbstractRequest request, ApiMessage response) {
                        assertThat(timing.nanos[RequestTiming.TOTAL]).isPositive();
                        told.add("end " + header.correlationId() + " answered=" + (response instanceof MetadataResponseData));
                    }
                };
            }
        };
    }

    @Test
    void aSampledRequestsTraceIsOnItsThrottleForTheHandlerAndEndsOnceWithItsResponse() {
        List<String> told = new ArrayList<>();
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(handler)), "PLAINTEXT", 16, null, 0,
                dev.kaas.broker.auth.AccessControl.NONE, RequestQuota.NONE, tracing(told, id -> id % 2 == 1));
        p.onFrame(metadata(1));
        p.onFrame(metadata(2));
        assertThat(handler.contexts.get(1).throttle().trace()).as("the handler finds it").isNotNull();
        assertThat(handler.contexts.get(2).throttle().trace()).isNull();

        handler.answer(2);
        handler.answer(1);
        assertThat(told).as("ended once, after the metrics heard of it").containsExactly("done", "end 1 answered=true", "done");
    }

    @Test
    void aRequestTheConnectionClosesOnEndsItsTraceUnanswered() {
        List<String> told = new ArrayList<>();
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(handler)), "PLAINTEXT", 16, null, 0,
                dev.kaas.broker.auth.AccessControl.NONE, RequestQuota.NONE, tracing(told, id -> true));
        p.onFrame(metadata(1));
        handler.calls.get(1).completeExceptionally(new CloseConnection("the handler gives up"));

        assertThat(transport.closed).isTrue();
        assertThat(told).as("not a finished request for the metrics, but its trace ends").containsExactly("end 1 answered=false");
    }

    @Test
    void aResponseReadyAloneIsWrittenAtOnce() {
        RequestPipeline p = pipeline(16);
        p.onFrame(metadata(1));
        p.onFrame(metadata(2));

        handler.answer(1);
        assertThat(transport.answered).containsExactly(1);
        handler.answer(2);

        assertThat(transport.answered).containsExactly(1, 2);
        assertThat(transport.writes).isEqualTo(2);
    }

    @Test
    void atMostTheLimitIsInFlightAndReadingResumesWhenOneIsAnswered() {
        RequestPipeline p = pipeline(2);
        p.onFrame(metadata(1));
        assertThat(p.accepting()).isTrue();
        p.onFrame(metadata(2));

        assertThat(p.accepting()).isFalse();
        assertThat(transport.lastReadable()).as("reading paused at the limit").isFalse();
        assertThat(p.inFlight()).isEqualTo(2);

        handler.answer(2);
        assertThat(p.accepting()).as("an answer stuck behind request 1 frees no slot").isFalse();
        handler.answer(1);

        assertThat(p.accepting()).isTrue();
        assertThat(transport.lastReadable()).as("reading resumed").isTrue();
        assertThat(transport.answered).containsExactly(1, 2);
    }

    @Test
    void aFullWriteQueuePausesReadingUntilItDrains() {
        RequestPipeline p = pipeline(16);
        p.onFrame(metadata(1));
        transport.writeQueueFull = true;
        handler.answer(1);

        assertThat(p.accepting()).isFalse();
        assertThat(transport.lastReadable()).isFalse();

        transport.writeQueueFull = false;
        p.onWritable();

        assertThat(transport.lastReadable()).isTrue();
    }

    @Test
    void anUnparsableFrameClosesTheConnectionAndReleasesItsMemory() {
        RequestPipeline p = pipeline(16);
        assertThat(memory.tryReserve(9, () -> { })).isTrue();
        FrameDecoder.Frame garbage = new FrameDecoder.Frame(ByteBuffer.wrap(new byte[] {0, 3, 0, 12, 0, 0, 0, 1, 0}), memory);

        p.onFrame(garbage);

        assertThat(transport.closed).isTrue();
        assertThat(transport.answered).isEmpty();
        assertThat(memory.reserved()).isZero();
    }

    @Test
    void closeConnectionAnswersEarlierRequestsThenCloses() {
        RequestPipeline p = pipeline(16);
        p.onFrame(metadata(1));
        p.onFrame(metadata(2));
        p.onFrame(metadata(3));

        handler.calls.get(2).completeExceptionally(new CloseConnection("acks=0 produce failed"));
        handler.answer(1);
        handler.answer(3);

        assertThat(transport.answered).containsExactly(1);
        assertThat(transport.closed).isTrue();
        assertThat(memory.reserved()).isZero();
    }

    /** Before the ACLs are known, a request of a principal who is not a super user is not served: the connection closes (a client retries). */
    @Test
    void aRequestBeforeTheAclsAreKnownClosesTheConnectionUnserved() {
        dev.kaas.broker.auth.AccessControl notReady = new dev.kaas.broker.auth.AccessControl() {
            @Override
            public dev.kaas.broker.auth.Access session(org.apache.kafka.common.security.auth.KafkaPrincipal principal, String host) {
                return new dev.kaas.broker.auth.Access() {
                    @Override
                    public boolean allowed(org.apache.kafka.common.acl.AclOperation op, org.apache.kafka.common.resource.ResourceType type,
                                           String name) {
                        return false;
                    }

                    @Override
                    public boolean allowedOnAny(org.apache.kafka.common.acl.AclOperation op, org.apache.kafka.common.resource.ResourceType type) {
                        return false;
                    }

                    @Override
                    public boolean enabled() {
                        return true;
                    }

                    @Override
                    public boolean ready() {
                        return false;
                    }
                };
            }

            @Override
            public List<org.apache.kafka.common.acl.AclBinding> acls(org.apache.kafka.common.acl.AclBindingFilter filter) {
                return List.of();
            }
        };
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(handler)), "PLAINTEXT", 16, null, 0, notReady);

        p.onFrame(metadata(1));

        assertThat(handler.calls).isEmpty();
        assertThat(transport.answered).isEmpty();
        assertThat(transport.closed).isTrue();
        assertThat(memory.reserved()).isZero();
    }

    /** KIP-219: a response carrying a quota delay goes out at once, and nothing more is read until the delay has passed. */
    @Test
    void aThrottledResponseIsWrittenAndReadingStopsForItsDelay() {
        RequestPipeline p = pipeline(16);
        FrameDecoder.Frame frame = metadata(1);
        int size = frame.buffer().limit();
        p.onFrame(frame);
        RequestContext ctx = handler.contexts.get(1);
        assertThat(ctx.throttle().requestBytes()).as("the request's size, as Apache's request.sizeInBytes").isEqualTo(size);

        ctx.throttle().throttle(400);
        long answered = System.nanoTime();
        handler.answer(1);

        assertThat(transport.answered).containsExactly(1);
        assertThat(p.accepting()).isFalse();
        assertThat(transport.lastReadable()).isFalse();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> Boolean.TRUE.equals(transport.lastReadable()));
        assertThat(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - answered)).isGreaterThanOrEqualTo(400);
        assertThat(p.accepting()).isTrue();
    }

    /** A handler of {@code key} that works {@code busyMs} on the calling thread, then answers or fails at once. */
    static ApiHandler busy(ApiKeys key, long busyMs, java.util.function.Function<RequestContext, ApiMessage> answer) {
        return new ApiHandler() {
            @Override
            public ApiKeys key() {
                return key;
            }

            @Override
            public CompletionStage<ApiMessage> handle(RequestContext context, AbstractRequest request) {
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(busyMs);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                try {
                    return CompletableFuture.completedFuture(answer.apply(context));
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
            }
        };
    }

    /**
     * KIP-124: the time a handler took on its thread is recorded against the client's request
     * quota as the response is made; the quota's delay is the response's throttle time (unless a
     * handler's own, a byte rate, is longer), error responses included, and reading stops for it.
     */
    @Test
    void theTimeAHandlerTookCountsAgainstTheRequestQuotaAndItsDelayIsAnswered() {
        List<Long> recorded = new ArrayList<>();
        List<Integer> delays = new ArrayList<>(List.of(300, 300, 300));
        RequestQuota quota = (principal, clientId, nanos, nowMs) -> {
            assertThat(clientId).isEqualTo("test");
            recorded.add(nanos);
            return delays.remove(0);
        };
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        ApiHandler metadata = busy(ApiKeys.METADATA, 30, ctx -> switch (calls.incrementAndGet()) {
            case 1 -> new MetadataResponseData();
            case 2 -> {
                // A byte-rate delay longer than the request quota's stays the answer.
                ctx.throttle().throttle(900);
                yield new MetadataResponseData().setThrottleTimeMs(900);
            }
            default -> throw new org.apache.kafka.common.errors.InvalidRequestException("refused");
        });
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(metadata)), "PLAINTEXT", 16, null, 0,
                dev.kaas.broker.auth.AccessControl.NONE, quota);

        p.onFrame(metadata(1));
        p.onFrame(metadata(2));
        p.onFrame(metadata(3));

        assertThat(recorded).hasSize(3).allSatisfy(nanos -> assertThat(nanos).isGreaterThanOrEqualTo(30_000_000L));
        assertThat(transport.answered).containsExactly(1, 2, 3);
        assertThat(transport.metadataThrottleMs(1)).isEqualTo(300);
        assertThat(transport.metadataThrottleMs(2)).isEqualTo(900);
        assertThat(transport.metadataThrottleMs(3)).as("the error response too").isEqualTo(300);
        assertThat(p.accepting()).isFalse();
    }

    /** As Apache: WriteTxnMarkers (a cluster action) and a request answered with nothing (acks=0) are not recorded. */
    @Test
    void exemptRequestsAreNotRecorded() {
        List<Long> recorded = new ArrayList<>();
        RequestQuota quota = (principal, clientId, nanos, nowMs) -> {
            recorded.add(nanos);
            return 300;
        };
        ApiHandler markers = busy(ApiKeys.WRITE_TXN_MARKERS, 0, ctx -> new org.apache.kafka.common.message.WriteTxnMarkersResponseData());
        ApiHandler silent = busy(ApiKeys.PRODUCE, 0, ctx -> null);
        RequestPipeline p = new RequestPipeline(transport, Runnable::run, ApiRegistry.of(List.of(markers, silent)), "PLAINTEXT", 16, null, 0,
                dev.kaas.broker.auth.AccessControl.NONE, quota);

        p.onFrame(frame(ApiKeys.WRITE_TXN_MARKERS, (short) 1, new org.apache.kafka.common.message.WriteTxnMarkersRequestData(), 1));
        p.onFrame(frame(ApiKeys.PRODUCE, (short) 9, new org.apache.kafka.common.message.ProduceRequestData().setAcks((short) 0), 2));

        assertThat(transport.answered).containsExactly(1);
        assertThat(recorded).isEmpty();
        assertThat(p.accepting()).isTrue();
    }
}
