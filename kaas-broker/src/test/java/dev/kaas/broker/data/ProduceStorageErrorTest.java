package dev.kaas.broker.data;

import dev.kaas.broker.quota.ClientQuotas;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Produce whose append fails on the disk gets Apache's retriable KAFKA_STORAGE_ERROR, not UNKNOWN_SERVER_ERROR. */
class ProduceStorageErrorTest {
    @TempDir
    Path data;
    PartitionLog log;

    @AfterEach
    void close() throws Exception {
        if (log != null) {
            log.abandon();
        }
    }

    @Test
    void appendThatFailsOnStorageIsAKafkaStorageError() throws Exception {
        // Given a partition whose segments roll after every batch, and whose next segment file cannot be created
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        ClusterView view = new ClusterView(config);
        Partitions partitions = new Partitions(config);
        String topicId = Uuid.randomUuid().toString();
        TopicPartition tp = new TopicPartition("t", 0);
        view.applied(new Assignment(1, 1, "c", List.of(), List.of(new TopicAssignment(new TopicSpec("t", topicId, 1, Map.of()),
                List.of(new PartitionAssignment(0, 1, 0)))), List.of(), List.of()));
        LogConfig d = LogConfig.defaults();
        LogConfig rollEveryBatch = new LogConfig(1, d.segmentMs(), d.indexIntervalBytes(), d.maxMessageBytes(), d.flushMessages(),
                d.flushMs(), d.logAppendTime(), d.timestampBeforeMaxMs(), d.timestampAfterMaxMs(), d.compacted(),
                d.retentionMs(), d.retentionBytes(), d.fileDeleteDelayMs(), d.deletePolicy(), d.deleteRetentionMs(),
                d.minCompactionLagMs(), d.maxCompactionLagMs(), d.minCleanableRatio());
        Path dir = PartitionLog.directory(partitions.dataDir(), "t", topicId, 0);
        log = PartitionLog.open(dir, tp, topicId, 0, 1, rollEveryBatch, System::currentTimeMillis, partitions.flush());
        partitions.put(tp, new Replica(log, new SerialExecutor(partitions.writers())));
        ProduceHandler handler = new ProduceHandler(partitions, view, new NoVerification(), new ClientQuotas(view, config));
        assertThat(produce(handler).errorCode()).isEqualTo(Errors.NONE.code());
        Files.createDirectories(dir.resolve(String.format("%08x-%020d.log", 0, 1)).resolve("in-the-way"));

        // When the next append has to roll onto that file
        ProduceResponseData.PartitionProduceResponse r = produce(handler);

        // Then
        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(r.baseOffset()).isEqualTo(-1);
    }

    private static ProduceResponseData.PartitionProduceResponse produce(ProduceHandler handler) throws Exception {
        ProduceRequestData req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName("t").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0)
                        .setRecords(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("v".getBytes()))))));
        short version = 9;
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.PRODUCE, version, "test", 1), "PLAINTEXT", "127.0.0.1");
        ProduceResponseData resp = (ProduceResponseData) handler.handle(ctx, new ProduceRequest(req, version))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        return resp.responses().iterator().next().partitionResponses().get(0);
    }
}
