package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kaas.common.cluster.AssignmentChunks;
import dev.kaas.common.cluster.LinkKey;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.proto.BrokerLinkGrpc;
import dev.kaas.proto.BrokerReport;
import dev.kaas.proto.ControllerAdminGrpc;
import dev.kaas.proto.ControllerCommand;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.Endpoint;
import dev.kaas.proto.Register;
import dev.kaas.proto.TopicToCreate;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The broker stream through the real gRPC transport, with a client that keeps grpc-java's default
 * 4 MiB inbound message limit, as the broker does.
 */
@QuarkusTest
@TestProfile(AssignmentStreamTest.LargeCluster.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AssignmentStreamTest {
    private static final int TOPICS = 11;
    private static final int PARTITIONS_PER_TOPIC = 10_000;

    public static class LargeCluster implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                return Map.of(
                        "kaas.data-dir", Files.createTempDirectory("kaas-assignment-stream").toString(),
                        "kaas.controller.max-partitions", "200000",
                        "kaas.controller.startup-grace", "0s",
                        // 110,000 partitions keep the controller's loop busy for seconds on a 2-core machine under
                        // load (a re-registration's assignment); this test is about streaming them, not about the
                        // lease, so a slow run must not step the controller down (5 s: after 3.3 s).
                        "kaas.controller.lease-duration", "30s",
                        // gRPC on the HTTP server, so the test learns the port Quarkus picked (test-port 0).
                        "quarkus.grpc.server.use-separate-server", "false");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @TestHTTPResource("/")
    URL base;

    @org.eclipse.microprofile.config.inject.ConfigProperty(name = "kaas.data-dir")
    String dataDir;

    /** What a broker on the cluster's volume reads: the controller created it when it took the lease. */
    String clusterId() {
        try {
            return dev.kaas.common.cluster.StandaloneMetadata.readClusterId(java.nio.file.Path.of(dataDir));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ManagedChannel channel;

    @BeforeEach
    void connect() {
        byte[] key;
        try {
            key = LinkKey.read(LinkKey.defaultFile(Path.of(dataDir))).orElseThrow();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext().intercept(new LinkSigning(key)).build();
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    /** A broker's end of the stream: registers, reassembles pieces, keeps the latest whole assignment. */
    final class Broker {
        final StreamObserver<BrokerReport> out;
        volatile Assignment latest;
        volatile int largestJsonBytes;
        volatile Throwable failure;

        Broker(ManagedChannel channel, int id, String incarnation) {
            AssignmentChunks.Assembler assembler = new AssignmentChunks.Assembler();
            out = BrokerLinkGrpc.newStub(channel).session(new StreamObserver<>() {
                @Override
                public void onNext(ControllerCommand command) {
                    var push = command.getAssignment();
                    try {
                        var whole = assembler.accept(push.getVersion(), push.getChunkIndex(), push.getChunkCount(),
                                push.getChunk().toByteArray());
                        if (whole.isPresent()) {
                            largestJsonBytes = Math.max(largestJsonBytes, whole.get().length);
                            latest = Json.read(whole.get(), Assignment.class);
                        }
                    } catch (Exception e) {
                        failure = e;
                    }
                }

                @Override
                public void onError(Throwable t) {
                    failure = t;
                }

                @Override
                public void onCompleted() {
                }
            });
            out.onNext(BrokerReport.newBuilder().setRegister(Register.newBuilder().setBrokerId(id).setIncarnation(incarnation)
                    .setClusterId(clusterId())
                    .addEndpoints(Endpoint.newBuilder().setListener("PLAINTEXT").setHost("localhost").setPort(9092)
                            .setSecurityProtocol("PLAINTEXT"))).build());
        }

        boolean leadsEverything(int id) {
            Assignment a = latest;
            return a != null && a.topics().size() == TOPICS && a.topics().stream()
                    .allMatch(t -> t.partitions().size() == PARTITIONS_PER_TOPIC
                            && t.partitions().stream().allMatch(p -> p.leader() == id));
        }
    }

    private static Map<String, Integer> epochs(Assignment a) {
        Map<String, Integer> out = new HashMap<>();
        for (TopicAssignment t : a.topics()) {
            for (PartitionAssignment p : t.partitions()) {
                out.put(t.topic().topicId() + "/" + p.partition(), p.leaderEpoch());
            }
        }
        return out;
    }

    @Test
    @Order(1)
    void anAssignmentLargerThanOneGrpcMessageReachesTheBrokerAndAReconnectGetsEveryPartitionBack() throws Exception {
        var admin = ControllerAdminGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
        for (int i = 0; i < TOPICS; i++) {
            var reply = admin.createTopics(CreateTopicsCall.newBuilder()
                    .addTopics(TopicToCreate.newBuilder().setName("big-" + i).setNumPartitions(PARTITIONS_PER_TOPIC)).build());
            assertThat(reply.getResults(0).getErrorCode()).as(reply.getResults(0).getErrorMessage()).isZero();
        }

        Broker broker = new Broker(channel, 1, "inc-1");
        await().atMost(Duration.ofSeconds(90)).until(() -> broker.failure != null || broker.leadsEverything(1));
        assertThat(broker.failure).isNull();
        assertThat(broker.largestJsonBytes).as("the assignment is larger than one gRPC message may be")
                .isGreaterThan(4 * 1024 * 1024);
        Map<String, Integer> before = epochs(broker.latest);
        long version = broker.latest.version();

        // The stream breaks (as when it failed on an oversized message) and the same process
        // reconnects: its partitions were orphaned at the break (or not, if it was quicker than the
        // controller noticed), and it gets every one back, never under an older epoch.
        broker.out.onError(Status.UNAVAILABLE.withDescription("network blip").asRuntimeException());
        Broker again = new Broker(channel, 1, "inc-1");
        await().atMost(Duration.ofSeconds(90)).until(() -> again.failure != null
                || again.leadsEverything(1) && again.latest.version() >= version);
        assertThat(again.failure).isNull();
        Map<String, Integer> after = epochs(again.latest);
        assertThat(after.keySet()).isEqualTo(before.keySet());
        before.forEach((key, epoch) -> assertThat(after.get(key)).as(key).isGreaterThanOrEqualTo(epoch));
    }

    @Test
    @Order(2)
    void aSecondProcessRegisteringALiveBrokersIdIsRefusedAndTheFirstKeepsItsSession() throws Exception {
        Broker first = new Broker(channel, 7, "first-process");
        await().atMost(Duration.ofSeconds(30)).until(() -> first.failure != null || first.latest != null
                && first.latest.broker(7).isPresent());
        assertThat(first.failure).isNull();

        Broker second = new Broker(channel, 7, "second-process");
        await().atMost(Duration.ofSeconds(30)).until(() -> second.failure != null);
        Status refused = Status.fromThrowable(second.failure);
        assertThat(refused.getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
        assertThat(refused.getDescription()).contains("broker id 7 is already registered by a live broker");
        assertThat(second.latest).isNull();

        // The first one's stream is untouched: it still receives what the controller publishes.
        long version = first.latest.version();
        ControllerAdminGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.MINUTES).createTopics(CreateTopicsCall.newBuilder()
                .addTopics(TopicToCreate.newBuilder().setName("after-refusal").setNumPartitions(1)).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> first.latest.version() > version);
        assertThat(first.failure).isNull();
        assertThat(first.latest.topicByName("after-refusal")).isPresent();
    }
}
