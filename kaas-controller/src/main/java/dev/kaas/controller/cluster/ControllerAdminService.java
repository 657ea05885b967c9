package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.ProducerIdStore;
import dev.kaas.proto.AllocateProducerIdsCall;
import dev.kaas.proto.AlterBrokerConfigsCall;
import dev.kaas.proto.AlterBrokerConfigsReply;
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
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.quarkus.grpc.GrpcService;
import jakarta.inject.Inject;
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/** The target of admin writes that brokers forward; every call runs on the controller loop. */
@GrpcService
public class ControllerAdminService extends ControllerAdminGrpc.ControllerAdminImplBase {
    private static final Logger LOG = Logger.getLogger(ControllerAdminService.class);

    @Inject
    ControllerRuntime runtime;

    @Override
    public void createTopics(CreateTopicsCall call, StreamObserver<CreateTopicsReply> out) {
        reply(runtime.submit(core -> core.createTopics(call)), out);
    }

    @Override
    public void createPartitions(CreatePartitionsCall call, StreamObserver<CreatePartitionsReply> out) {
        reply(runtime.submit(core -> core.createPartitions(call)), out);
    }

    @Override
    public void alterTopicConfigs(AlterTopicConfigsCall call, StreamObserver<AlterTopicConfigsReply> out) {
        reply(runtime.submit(core -> core.alterTopicConfigs(call)), out);
    }

    @Override
    public void alterBrokerConfigs(AlterBrokerConfigsCall call, StreamObserver<AlterBrokerConfigsReply> out) {
        reply(runtime.submit(core -> core.alterBrokerConfigs(call)), out);
    }

    @Override
    public void reassignPartitions(ReassignPartitionsCall call, StreamObserver<ReassignPartitionsReply> out) {
        reply(runtime.submit(core -> core.reassignPartitions(call)), out);
    }

    @Override
    public void deleteTopics(DeleteTopicsCall call, StreamObserver<DeleteTopicsReply> out) {
        reply(runtime.submit(core -> core.deleteTopics(call)), out);
    }

    @Override
    public void allocateProducerIds(AllocateProducerIdsCall call, StreamObserver<ProducerIdBlock> out) {
        reply(runtime.submit(core -> ProducerIdBlock.newBuilder()
                .setFirst(core.allocateProducerIds()).setSize(ProducerIdStore.BLOCK_SIZE).build()), out);
    }

    @Override
    public void alterScramCredentials(AlterScramCredentialsCall call, StreamObserver<AlterScramCredentialsReply> out) {
        reply(runtime.submit(core -> core.alterScramCredentials(call)), out);
    }

    @Override
    public void alterClientQuotas(AlterClientQuotasCall call, StreamObserver<AlterClientQuotasReply> out) {
        reply(runtime.submit(core -> core.alterClientQuotas(call)), out);
    }

    @Override
    public void createAcls(CreateAclsCall call, StreamObserver<CreateAclsReply> out) {
        reply(runtime.submit(core -> core.createAcls(call)), out);
    }

    @Override
    public void deleteAcls(DeleteAclsCall call, StreamObserver<DeleteAclsReply> out) {
        reply(runtime.submit(core -> core.deleteAcls(call)), out);
    }

    @Override
    public void assignmentVersion(AssignmentVersionCall call, StreamObserver<AssignmentVersionReply> out) {
        reply(runtime.submit(core -> AssignmentVersionReply.newBuilder().setVersion(core.current().version()).build()), out);
    }

    @Override
    public void nudge(NudgeCall call, StreamObserver<NudgeReply> out) {
        // Not through the controller loop: see ControllerCore#nudge.
        reply(CompletableFuture.completedFuture(NudgeReply.newBuilder()
                .setDelivered(runtime.nudge(call.getTargetBroker(), call.getFromBroker())).build()), out);
    }

    private static <T> void reply(CompletableFuture<T> result, StreamObserver<T> out) {
        result.whenComplete((value, error) -> {
            if (error != null) {
                LOG.warnf("admin call failed: %s", error.toString());
                out.onError(Status.UNAVAILABLE.withDescription(String.valueOf(error.getMessage())).asRuntimeException());
            } else {
                out.onNext(value);
                out.onCompleted();
            }
        });
    }
}
