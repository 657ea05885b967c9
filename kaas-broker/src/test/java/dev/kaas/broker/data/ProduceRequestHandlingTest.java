package dev.kaas.broker.data;

import dev.kaas.broker.quota.ClientQuotas;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Produce request handling that needs no open partition (appends are covered by ProtocolLimitsIT). */
class ProduceRequestHandlingTest {
    @TempDir
    Path dir;

    ProduceResponseData produce(ProduceRequestData data) {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", dir.toString()));
        ClusterView view = new ClusterView(config);
        ProduceHandler handler = new ProduceHandler(new Partitions(config), view, new NoVerification(), new ClientQuotas(view, config));
        short v = 9;
        ProduceRequest req = new ProduceRequest(data, v);
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.PRODUCE, v, "t", 1), "PLAINTEXT", "/127.0.0.1");
        return (ProduceResponseData) handler.handle(ctx, req).toCompletableFuture().join();
    }

    static ProduceRequestData.TopicProduceData topic(String name, int... partitions) {
        var t = new ProduceRequestData.TopicProduceData().setName(name);
        for (int p : partitions) {
            t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(p)
                    .setRecords(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("v".getBytes()))));
        }
        return t;
    }

    @Test
    void internalTopicNamesAreRefusedAsApacheRefusesClientAppends() {
        var data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000);
        data.topicData().add(topic("__consumer_offsets", 0));
        data.topicData().add(topic("__transaction_state", 3));

        ProduceResponseData resp = produce(data);

        assertThat(resp.responses()).hasSize(2).allSatisfy(t -> assertThat(t.partitionResponses()).singleElement()
                .satisfies(p -> assertThat(p.errorCode()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION.code())));
    }

    @Test
    void aPartitionNamedTwiceIsAnsweredOnce() {
        var data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000);
        data.topicData().add(topic("nowhere", 0, 1, 0));
        data.topicData().add(topic("nowhere", 1));

        ProduceResponseData resp = produce(data);

        assertThat(resp.responses()).singleElement().satisfies(t -> {
            assertThat(t.partitionResponses()).extracting(ProduceResponseData.PartitionProduceResponse::index).containsExactly(0, 1);
            assertThat(t.partitionResponses()).allSatisfy(p -> assertThat(p.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
        });
    }
}
