package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Metadata v10/11 name topics only: Apache 3.7 answers a null name or a topic id with INVALID_REQUEST for every topic. */
class MetadataRequestValidationTest {
    final BrokerConfig config = TestBrokerConfig.defaults();
    final MetadataHandler handler = new MetadataHandler(new ClusterView(config), null, config);

    static MetadataRequest request(short version, MetadataRequestData.MetadataRequestTopic... topics) {
        return new MetadataRequest(new MetadataRequestData().setTopics(List.of(topics)).setAllowAutoTopicCreation(false), version);
    }

    /** What the connection does with a failed stage: Apache's error response, encoded at the request's version. */
    static MetadataResponseData answer(MetadataHandler h, MetadataRequest req) {
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.METADATA, req.version(), "t", 1), "PLAINTEXT", "/127.0.0.1");
        Throwable failure = catchThrowable(() -> h.handle(ctx, req).toCompletableFuture().join());
        assertThat(failure).isInstanceOf(CompletionException.class).hasCauseInstanceOf(InvalidRequestException.class);
        MetadataResponseData resp = (MetadataResponseData) req.getErrorResponse(0, failure.getCause()).data();
        ObjectSerializationCache cache = new ObjectSerializationCache();
        resp.write(new ByteBufferAccessor(ByteBuffer.allocate(resp.size(cache, req.version()))), cache, req.version());
        return resp;
    }

    @ParameterizedTest
    @ValueSource(shorts = {10, 11})
    void aNullNameWithAZeroTopicIdIsAnInvalidRequest(short version) {
        MetadataRequest req = request(version,
                new MetadataRequestData.MetadataRequestTopic().setName("known").setTopicId(Uuid.ZERO_UUID),
                new MetadataRequestData.MetadataRequestTopic().setName(null).setTopicId(Uuid.ZERO_UUID));

        MetadataResponseData resp = answer(handler, req);

        assertThat(resp.topics()).hasSize(2).allSatisfy(t -> assertThat(t.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code()));
        assertThat(resp.topics()).extracting(MetadataResponseData.MetadataResponseTopic::name).containsExactly("known", "");
    }

    @Test
    void aTopicIdAtVersion11IsAnInvalidRequest() {
        MetadataRequest req = request((short) 11, new MetadataRequestData.MetadataRequestTopic().setName(null).setTopicId(Uuid.randomUuid()));

        assertThat(answer(handler, req).topics()).singleElement()
                .satisfies(t -> assertThat(t.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code()));
    }

    @Test
    void version12MayNameTopicsById() {
        MetadataRequest req = request((short) 12, new MetadataRequestData.MetadataRequestTopic().setName(null).setTopicId(Uuid.randomUuid()));

        assertThat(MetadataHandler.unservable(req)).isNull();
    }
}
