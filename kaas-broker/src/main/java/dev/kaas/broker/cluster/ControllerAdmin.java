package dev.kaas.broker.cluster;

import dev.kaas.proto.AllocateProducerIdsCall;
import dev.kaas.proto.AlterClientQuotasCall;
import dev.kaas.proto.AlterClientQuotasReply;
import dev.kaas.proto.AlterScramCredentialsCall;
import dev.kaas.proto.AlterScramCredentialsReply;
import dev.kaas.proto.AlterTopicConfigsCall;
import dev.kaas.proto.AlterTopicConfigsReply;
import dev.kaas.proto.AssignmentVersionCall;
import dev.kaas.proto.AssignmentVersionReply;
import dev.kaas.proto.ControllerAdminGrpc;
import dev.kaas.proto.CreateAclsCall;
import dev.kaas.proto.CreateAclsReply;
import dev.kaas.proto.CreatePartitionsCall;
import dev.kaas.proto.CreatePartitionsReply;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.CreateTopicsReply;
import dev.kaas.proto.DeleteAclsCall;
import dev.kaas.proto.DeleteAclsReply;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.DeleteTopicsReply;
import dev.kaas.proto.NudgeCall;
import dev.kaas.proto.NudgeReply;
import dev.kaas.proto.ProducerIdBlock;
import dev.kaas.proto.ReassignPartitionsCall;
import dev.kaas.proto.ReassignPartitionsReply;
import io.grpc.stub.StreamObserver;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.kafka.common.errors.NotControllerException;

/**
 * Forwards admin writes to the controller as unary gRPC calls, without blocking: results come
 * back as futures. An unreachable controller is NOT_CONTROLLER to the client, which retries.
 */
@ApplicationScoped
public class ControllerAdmin {
    private final ControllerAdminGrpc.ControllerAdminStub stub;

    @Inject
    public ControllerAdmin(ControllerChannel channel) {
        this.stub = ControllerAdminGrpc.newStub(channel);
    }

    public CompletableFuture<CreateTopicsReply> createTopics(CreateTopicsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).createTopics(c, o));
    }

    public CompletableFuture<CreatePartitionsReply> createPartitions(CreatePartitionsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).createPartitions(c, o));
    }

    public CompletableFuture<AlterTopicConfigsReply> alterTopicConfigs(AlterTopicConfigsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).alterTopicConfigs(c, o));
    }

    public CompletableFuture<dev.kaas.proto.AlterBrokerConfigsReply> alterBrokerConfigs(dev.kaas.proto.AlterBrokerConfigsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).alterBrokerConfigs(c, o));
    }

    public CompletableFuture<ReassignPartitionsReply> reassignPartitions(ReassignPartitionsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).reassignPartitions(c, o));
    }

    public CompletableFuture<DeleteTopicsReply> deleteTopics(DeleteTopicsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).deleteTopics(c, o));
    }

    public CompletableFuture<ProducerIdBlock> allocateProducerIds(int brokerId) {
        return unary(AllocateProducerIdsCall.newBuilder().setBrokerId(brokerId).build(),
                (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).allocateProducerIds(c, o));
    }

    public CompletableFuture<AlterScramCredentialsReply> alterScramCredentials(AlterScramCredentialsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).alterScramCredentials(c, o));
    }

    public CompletableFuture<AlterClientQuotasReply> alterClientQuotas(AlterClientQuotasCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).alterClientQuotas(c, o));
    }

    public CompletableFuture<CreateAclsReply> createAcls(CreateAclsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).createAcls(c, o));
    }

    public CompletableFuture<DeleteAclsReply> deleteAcls(DeleteAclsCall call) {
        return unary(call, (c, o) -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).deleteAcls(c, o));
    }

    /** The version of the assignment the controller has published (see the AssignmentVersion RPC). */
    public CompletableFuture<Long> assignmentVersion() {
        return ControllerAdmin.<AssignmentVersionCall, AssignmentVersionReply>unary(AssignmentVersionCall.getDefaultInstance(),
                (c, o) -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).assignmentVersion(c, o)).thenApply(AssignmentVersionReply::getVersion);
    }

    /** Asks the controller to nudge {@code target} (see {@link Doorbell}); true when it had a session to pass it to. */
    public CompletableFuture<Boolean> nudge(int target, int from) {
        return ControllerAdmin.<NudgeCall, NudgeReply>unary(NudgeCall.newBuilder().setTargetBroker(target).setFromBroker(from).build(),
                (c, o) -> stub.withDeadlineAfter(5, TimeUnit.SECONDS).nudge(c, o)).thenApply(NudgeReply::getDelivered);
    }

    private static <Q, R> CompletableFuture<R> unary(Q call, BiConsumer<Q, StreamObserver<R>> invoke) {
        CompletableFuture<R> f = new CompletableFuture<>();
        invoke.accept(call, new StreamObserver<>() {
            @Override
            public void onNext(R value) {
                f.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                f.completeExceptionally(new NotControllerException("controller unavailable: " + t.getMessage()));
            }

            @Override
            public void onCompleted() {
                f.completeExceptionally(new NotControllerException("controller sent no reply"));
            }
        });
        return f;
    }
}
