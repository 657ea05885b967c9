package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeClusterResponseData.DescribeClusterBroker;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DescribeCluster as an Apache 3.7 broker answers it, and the controller id it shares with
 * Metadata: the lowest id among the brokers listed on the request's listener. Requests and
 * responses pass through the wire encoding of their version.
 */
class DescribeClusterHandlerTest {
    final BrokerConfig config = TestBrokerConfig.of(Map.of("broker.id", 3));
    final ClusterView view = new ClusterView(config);
    final DescribeClusterHandler handler = new DescribeClusterHandler(view);

    /** Broker 3 on both listeners, 1 on the client listener only, 2 on the internal one only; listed out of id order. */
    void givenThreeBrokers() {
        view.applied(new Assignment(1, 1, "the-cluster", List.of(
                new BrokerInfo(3, List.of(new EndpointInfo("PLAINTEXT", "b3", 9093, "PLAINTEXT"),
                        new EndpointInfo("INTERNAL", "b3.internal", 19093, "PLAINTEXT"))),
                new BrokerInfo(1, List.of(new EndpointInfo("PLAINTEXT", "b1", 9091, "PLAINTEXT"))),
                new BrokerInfo(2, List.of(new EndpointInfo("INTERNAL", "b2.internal", 19092, "PLAINTEXT")))),
                List.of(), List.of(), List.of()));
    }

    DescribeClusterResponseData describe(short version, String listener, DescribeClusterRequestData req) {
        DescribeClusterRequest parsed = DescribeClusterRequest.parse(encode(req, version), version);
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.DESCRIBE_CLUSTER, version, "t", 1), listener, "/127.0.0.1");
        var resp = (DescribeClusterResponseData) handler.handle(ctx, parsed).toCompletableFuture().join();
        return new DescribeClusterResponseData(new ByteBufferAccessor(encode(resp, version)), version);
    }

    static ByteBuffer encode(Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, version));
        m.write(new ByteBufferAccessor(buf), cache, version);
        return buf.flip();
    }

    static List<String> brokers(DescribeClusterResponseData r) {
        List<String> out = new ArrayList<>();
        for (DescribeClusterBroker b : r.brokers()) {
            out.add(b.brokerId() + "@" + b.host() + ":" + b.port() + (b.rack() == null ? "" : "/" + b.rack()));
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(shorts = {0, 1})
    void listsTheBrokersOnTheRequestsListenerWithTheLowestAsController(short v) {
        givenThreeBrokers();

        DescribeClusterResponseData client = describe(v, "PLAINTEXT", new DescribeClusterRequestData());
        DescribeClusterResponseData internal = describe(v, "INTERNAL", new DescribeClusterRequestData());

        assertThat(Errors.forCode(client.errorCode())).isEqualTo(Errors.NONE);
        assertThat(client.clusterId()).isEqualTo("the-cluster");
        assertThat(brokers(client)).containsExactly("3@b3:9093", "1@b1:9091");
        assertThat(client.controllerId()).isEqualTo(1);
        assertThat(brokers(internal)).containsExactly("3@b3.internal:19093", "2@b2.internal:19092");
        assertThat(internal.controllerId()).isEqualTo(2);
        assertThat(client.clusterAuthorizedOperations()).isEqualTo(Integer.MIN_VALUE);
        assertThat(client.endpointType()).isEqualTo((byte) 1);
    }

    @Test
    void metadataNamesTheSameController() throws Exception {
        givenThreeBrokers();
        MetadataHandler metadata = new MetadataHandler(view, null, config);
        short v = 12;
        MetadataRequest req = new MetadataRequest(new MetadataRequestData().setTopics(List.of()).setAllowAutoTopicCreation(false), v);

        var resp = (MetadataResponseData) metadata.handle(new RequestContext(new RequestHeader(ApiKeys.METADATA, v, "t", 1),
                "PLAINTEXT", "/127.0.0.1"), req).toCompletableFuture().join();

        assertThat(resp.controllerId()).isEqualTo(1)
                .isEqualTo(describe((short) 1, "PLAINTEXT", new DescribeClusterRequestData()).controllerId());
        assertThat(resp.brokers()).extracting(MetadataResponseData.MetadataResponseBroker::nodeId).containsExactly(3, 1);
    }

    @Test
    void noBrokerListedMeansNoController() {
        // Before the first assignment (or on a listener nobody advertises), as Apache with no live broker.
        DescribeClusterResponseData r = describe((short) 1, "PLAINTEXT", new DescribeClusterRequestData());

        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.NONE);
        assertThat(r.brokers()).isEmpty();
        assertThat(r.controllerId()).isEqualTo(-1);
        assertThat(r.clusterId()).isEmpty();
    }

    @Test
    void aRequestForControllersIsAMismatchedEndpointType() {
        givenThreeBrokers();

        DescribeClusterResponseData r = describe((short) 1, "PLAINTEXT", new DescribeClusterRequestData().setEndpointType((byte) 2));

        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.MISMATCHED_ENDPOINT_TYPE);
        assertThat(r.errorMessage()).isEqualTo("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER");
        assertThat(r.brokers()).isEmpty();
        assertThat(r.controllerId()).isEqualTo(-1);
    }

    @ParameterizedTest
    @ValueSource(bytes = {0, 3})
    void anEndpointTypeApacheDoesNotKnowIsUnsupported(byte type) {
        givenThreeBrokers();

        DescribeClusterResponseData r = describe((short) 1, "PLAINTEXT", new DescribeClusterRequestData().setEndpointType(type));

        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.UNSUPPORTED_ENDPOINT_TYPE);
        assertThat(r.errorMessage()).isEqualTo("Unsupported endpoint type " + type);
        assertThat(r.brokers()).isEmpty();
    }

    @Test
    void requestedClusterOperationsAreAllOfThemAsApacheWithoutAnAuthorizer() {
        givenThreeBrokers();

        DescribeClusterResponseData r = describe((short) 0, "PLAINTEXT",
                new DescribeClusterRequestData().setIncludeClusterAuthorizedOperations(true));

        assertThat(Utils.from32BitField(r.clusterAuthorizedOperations())).extracting(AclOperation::fromCode).containsExactlyInAnyOrder(
                AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE);
    }
}
