package dev.kaas.broker.data;

import dev.kaas.broker.quota.ClientQuotas;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KIP-890 on the produce path, with a coordinator the test answers by hand: a producer's
 * requests that arrive while its first is being verified keep their order (Apache handles them
 * one at a time; kaas concurrently), share the one verification, and share its refusal.
 */
class ProduceVerificationTest {
    static final TopicPartition TP = new TopicPartition("t", 0);
    static final long PID = 7;

    @TempDir
    Path data;
    PartitionLog log;
    Replica replica;
    ProduceHandler handler;
    final List<Set<TopicPartition>> asked = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Map<TopicPartition, Errors>>> answers = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        ClusterView view = new ClusterView(config);
        Partitions partitions = new Partitions(config);
        String topicId = Uuid.randomUuid().toString();
        view.applied(new Assignment(1, 1, "c", List.of(), List.of(new TopicAssignment(new TopicSpec("t", topicId, 1, Map.of()),
                List.of(new PartitionAssignment(0, 1, 0)))), List.of(), List.of()));
        log = PartitionLog.open(PartitionLog.directory(partitions.dataDir(), "t", topicId, 0), TP, topicId, 0, 1,
                LogConfig.defaults(), System::currentTimeMillis, partitions.flush());
        replica = new Replica(log, new SerialExecutor(partitions.writers()));
        partitions.put(TP, replica);
        handler = new ProduceHandler(partitions, view, new TxnVerifier() {
            @Override
            public boolean enabled() {
                return true;
            }

            @Override
            public CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short producerEpoch,
                                                                        Set<TopicPartition> partitions) {
                asked.add(partitions);
                CompletableFuture<Map<TopicPartition, Errors>> answer = new CompletableFuture<>();
                answers.add(answer);
                return answer;
            }
        }, new ClientQuotas(view, config));
    }

    @AfterEach
    void close() throws Exception {
        log.abandon();
    }

    @Test
    void requestsBehindAVerificationShareItAndKeepTheirOrder() throws Exception {
        // A producer the partition knows (a committed transaction: sequence 0, then the marker), so sequences are checked.
        CompletableFuture<ProduceResponseData.PartitionProduceResponse> earlier = produce("tx", 0);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> answers.size() == 1);
        answers.get(0).complete(Map.of(TP, Errors.NONE));
        assertThat(earlier.get(10, TimeUnit.SECONDS).baseOffset()).isZero();
        CompletableFuture<Long> marker = new CompletableFuture<>();
        replica.writer().execute(() -> {
            try {
                marker.complete(log.appendMarker(PID, (short) 0, 0, true));
            } catch (Exception e) {
                marker.completeExceptionally(e);
            }
        });
        assertThat(marker.get(10, TimeUnit.SECONDS)).isEqualTo(1);

        List<CompletableFuture<ProduceResponseData.PartitionProduceResponse>> sent = new ArrayList<>();
        for (int seq = 1; seq <= 3; seq++) {
            sent.add(produce("tx", seq));
        }
        writerIdle();
        assertThat(asked).as("one verification for the three").hasSize(2);
        assertThat(log.logEndOffset()).as("nothing before the coordinator answered").isEqualTo(2);

        answers.get(1).complete(Map.of(TP, Errors.NONE));
        for (int i = 0; i < 3; i++) {
            var r = sent.get(i).get(10, TimeUnit.SECONDS);
            assertThat(Errors.forCode(r.errorCode())).as("request %d", i).isEqualTo(Errors.NONE);
            assertThat(r.baseOffset()).as("request %d, in order", i).isEqualTo(2 + i);
        }
        // Open now, and the verification closed: the next request goes straight through.
        assertThat(produce("tx", 4).get(10, TimeUnit.SECONDS).baseOffset()).isEqualTo(5);
        assertThat(asked).hasSize(2);
    }

    @Test
    void aRefusalIsEveryWaitingRequestsAnswerAndTheNextOneAsksAgain() throws Exception {
        List<CompletableFuture<ProduceResponseData.PartitionProduceResponse>> sent = new ArrayList<>();
        for (int seq = 0; seq < 3; seq++) {
            sent.add(produce("tx", seq));
        }
        writerIdle();
        answers.get(0).complete(Map.of(TP, Errors.INVALID_TXN_STATE));
        for (var f : sent) {
            assertThat(Errors.forCode(f.get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(Errors.INVALID_TXN_STATE);
        }
        assertThat(log.logEndOffset()).isZero();

        CompletableFuture<ProduceResponseData.PartitionProduceResponse> retry = produce("tx", 0);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> answers.size() == 2);
        answers.get(1).complete(Map.of(TP, Errors.NONE));
        assertThat(retry.get(10, TimeUnit.SECONDS).baseOffset()).isZero();
    }

    @Test
    void aCoordinatorThatCannotAnswerNowIsRetriableAndAFencedOneIsAnOldEpoch() throws Exception {
        CompletableFuture<ProduceResponseData.PartitionProduceResponse> moving = produce("tx", 0);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> answers.size() == 1);
        answers.get(0).complete(Map.of(TP, Errors.NOT_COORDINATOR));
        assertThat(Errors.forCode(moving.get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(Errors.NOT_ENOUGH_REPLICAS);

        CompletableFuture<ProduceResponseData.PartitionProduceResponse> fenced = produce("tx", 0);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> answers.size() == 2);
        answers.get(1).complete(Map.of(TP, Errors.PRODUCER_FENCED));
        assertThat(Errors.forCode(fenced.get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
    }

    @Test
    void transactionalRecordsWithoutATransactionalIdAreRefusedWhole() throws Exception {
        var r = produce(null, 0).get(10, TimeUnit.SECONDS);
        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        assertThat(asked).isEmpty();
        assertThat(log.logEndOffset()).isZero();
    }

    /** Every append queued so far has run its first attempt. */
    private void writerIdle() throws Exception {
        CompletableFuture<Void> idle = new CompletableFuture<>();
        replica.writer().execute(() -> idle.complete(null));
        idle.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aTracedProduceShowsTheCoordinatorsVerificationBeforeItsAppend() throws Exception {
        List<String> spans = new CopyOnWriteArrayList<>();
        long[] verification = new long[2];
        RequestContext.Throttle traced = new RequestContext.Throttle(0);
        traced.trace(new dev.kaas.broker.protocol.RequestTrace() {
            @Override
            public void span(String name, long start, long end, TopicPartition partition, String attribute, long value) {
                spans.add(name + (attribute == null ? "" : " " + attribute + "=" + value));
                if (name.equals("txn verification")) {
                    verification[0] = start;
                    verification[1] = end;
                }
            }

            @Override
            public void end(dev.kaas.broker.protocol.RequestTiming timing, org.apache.kafka.common.requests.AbstractRequest request,
                            org.apache.kafka.common.protocol.ApiMessage response) {
            }
        });
        CompletableFuture<ProduceResponseData.PartitionProduceResponse> sent = produce("tx", 0, traced);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> answers.size() == 1);
        Thread.sleep(20);
        long answeredAt = System.nanoTime();
        answers.get(0).complete(Map.of(TP, Errors.NONE));
        assertThat(Errors.forCode(sent.get(10, TimeUnit.SECONDS).errorCode())).isEqualTo(Errors.NONE);

        assertThat(spans).containsExactly("txn verification kaas.partitions=1", "append kaas.writer.wait_us=" + spans.get(1).split("=")[1],
                "fsync kaas.group_commit.appends=1", "fence check");
        assertThat(verification[1] - verification[0]).as("it waited for the coordinator's answer").isGreaterThanOrEqualTo(20_000_000L);
        assertThat(verification[1]).isGreaterThanOrEqualTo(answeredAt);
    }

    private CompletableFuture<ProduceResponseData.PartitionProduceResponse> produce(String transactionalId, int seq) {
        return produce(transactionalId, seq, new RequestContext.Throttle(0));
    }

    private CompletableFuture<ProduceResponseData.PartitionProduceResponse> produce(String transactionalId, int seq,
                                                                                    RequestContext.Throttle throttle) {
        ProduceRequestData req = new ProduceRequestData().setTransactionalId(transactionalId).setAcks((short) -1).setTimeoutMs(10_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName("t").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withTransactionalRecords(
                        CompressionType.NONE, PID, (short) 0, seq, new SimpleRecord(("v" + seq).getBytes()))))));
        short version = 9;
        RequestContext ctx = new RequestContext(new RequestHeader(ApiKeys.PRODUCE, version, "test", 1), "PLAINTEXT", "127.0.0.1",
                org.apache.kafka.common.security.auth.KafkaPrincipal.ANONYMOUS, org.apache.kafka.common.security.auth.SecurityProtocol.PLAINTEXT,
                throttle);
        return handler.handle(ctx, new ProduceRequest(req, version)).toCompletableFuture()
                .thenApply(resp -> ((ProduceResponseData) resp).responses().iterator().next().partitionResponses().get(0));
    }
}
