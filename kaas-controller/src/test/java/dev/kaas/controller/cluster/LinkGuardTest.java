package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.kaas.common.cluster.LinkKey;
import dev.kaas.proto.AssignmentVersionCall;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The controller's gRPC port through the real transport: only a caller holding the cluster's link
 * key gets in, and what it sends is refused before it has any effect.
 */
@QuarkusTest
@TestProfile(LinkGuardTest.Profile.class)
class LinkGuardTest {
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                return Map.of(
                        "kaas.data-dir", Files.createTempDirectory("kaas-link-guard").toString(),
                        "kaas.controller.startup-grace", "0s",
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

    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void disconnect() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private byte[] clusterKey() {
        try {
            return LinkKey.read(LinkKey.defaultFile(Path.of(dataDir))).orElseThrow();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ManagedChannel channel(LinkSigning signing) {
        var builder = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext();
        ManagedChannel c = (signing == null ? builder : builder.intercept(signing)).build();
        channels.add(c);
        return c;
    }

    private static Status createTopic(ManagedChannel channel, String name) {
        return Status.fromThrowable(catchThrowable(() -> ControllerAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName(name).setNumPartitions(1)).build())));
    }

    private static int createTopicError(ManagedChannel channel, String name) {
        return ControllerAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName(name).setNumPartitions(1)).build())
                .getResults(0).getErrorCode();
    }

    @Test
    void theFirstControllerMadeAnOwnerOnlyKeyOnTheVolume() throws IOException {
        Path file = LinkKey.defaultFile(Path.of(dataDir));
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(clusterKey().length).isGreaterThanOrEqualTo(LinkKey.MIN_BYTES);
    }

    @Test
    void anAdminCallWithoutTheKeyIsRefusedAndChangesNothing() {
        byte[] wrong = "not-the-cluster-key-0123456789".getBytes(StandardCharsets.US_ASCII);
        for (ManagedChannel outsider : List.of(channel(null), channel(new LinkSigning(wrong)))) {
            Status refused = createTopic(outsider, "guarded");
            assertThat(refused.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        }
        // Had an outsider's call created it, this would be TOPIC_ALREADY_EXISTS (36).
        assertThat(createTopicError(channel(new LinkSigning(clusterKey())), "guarded")).isZero();
    }

    @Test
    void aCapturedHeaderOpensNeitherItsOwnMethodAgainNorAnother() {
        LinkSigning signing = new LinkSigning(clusterKey());
        ManagedChannel broker = channel(signing);
        assertThat(createTopicError(broker, "first")).isZero();
        String captured = signing.lastHeader;
        Status replayed = createTopic(channel(new LinkSigning(clusterKey(), h -> captured)), "second");
        assertThat(replayed.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(replayed.getDescription()).contains("used before");

        // A header of a method whose replay is harmless (and so not remembered) is good for that method only.
        ControllerAdminGrpc.newBlockingStub(broker).withDeadlineAfter(30, TimeUnit.SECONDS)
                .assignmentVersion(AssignmentVersionCall.getDefaultInstance());
        String versionHeader = signing.lastHeader;
        var reused = channel(new LinkSigning(clusterKey(), h -> versionHeader));
        ControllerAdminGrpc.newBlockingStub(reused).withDeadlineAfter(30, TimeUnit.SECONDS)
                .assignmentVersion(AssignmentVersionCall.getDefaultInstance());
        assertThat(createTopic(reused, "second").getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(createTopicError(broker, "second")).isZero();
    }

    @Test
    void aBrokerWithoutTheKeyCannotRegisterNorReadTheAssignment() {
        UnaryOperator<String> stale = h -> h.replaceFirst(" \\d+ ", " " + (System.currentTimeMillis() - 120_000) + " ");
        for (ManagedChannel outsider : List.of(channel(null), channel(new LinkSigning(clusterKey(), stale)))) {
            List<ControllerCommand> received = new ArrayList<>();
            Throwable[] failure = new Throwable[1];
            var out = BrokerLinkGrpc.newStub(outsider).session(new StreamObserver<>() {
                @Override
                public void onNext(ControllerCommand command) {
                    synchronized (received) {
                        received.add(command);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    failure[0] = t;
                }

                @Override
                public void onCompleted() {
                }
            });
            out.onNext(BrokerReport.newBuilder().setRegister(Register.newBuilder().setBrokerId(3).setIncarnation("outsider")
                    .addEndpoints(Endpoint.newBuilder().setListener("PLAINTEXT").setHost("localhost").setPort(9092)
                            .setSecurityProtocol("PLAINTEXT"))).build());
            await().atMost(Duration.ofSeconds(30)).until(() -> failure[0] != null);
            assertThat(Status.fromThrowable(failure[0]).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            synchronized (received) {
                assertThat(received).isEmpty();
            }
        }
    }
}
