package dev.kaas.controller.cluster;

import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.proto.AssignmentPush;
import dev.kaas.proto.BrokerLinkGrpc;
import dev.kaas.proto.BrokerReport;
import dev.kaas.proto.ControllerCommand;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.quarkus.grpc.GrpcService;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/**
 * The gRPC edge of the broker stream. Callbacks arrive on gRPC/Vert.x threads and are handed to
 * the controller loop; outgoing messages are sent from the loop only, one at a time, as
 * grpc-java requires of a {@link StreamObserver}.
 */
@GrpcService
public class BrokerLinkService extends BrokerLinkGrpc.BrokerLinkImplBase {
    private static final Logger LOG = Logger.getLogger(BrokerLinkService.class);

    @Inject
    ControllerRuntime runtime;

    @Override
    public StreamObserver<BrokerReport> session(StreamObserver<ControllerCommand> out) {
        return new StreamObserver<>() {
            private final Session session = new Session(out);
            private int brokerId = -1;

            @Override
            public void onNext(BrokerReport report) {
                switch (report.getKindCase()) {
                    case REGISTER -> {
                        var reg = report.getRegister();
                        brokerId = reg.getBrokerId();
                        var info = new BrokerInfo(reg.getBrokerId(), reg.getEndpointsList().stream()
                                .map(e -> new EndpointInfo(e.getListener(), e.getHost(), e.getPort(), e.getSecurityProtocol()))
                                .toList());
                        runtime.execute(core -> {
                            if (!core.isLeader()) {
                                session.close("not the active controller");
                                return;
                            }
                            core.brokerRegistered(info, reg.getIncarnation(), session);
                        });
                    }
                    case STATUS -> {
                        int id = brokerId;
                        runtime.execute(core -> core.brokerStatus(id, session));
                    }
                    default -> LOG.warnf("ignoring an empty broker report broker=%d", brokerId);
                }
            }

            @Override
            public void onError(Throwable t) {
                ended();
            }

            @Override
            public void onCompleted() {
                ended();
            }

            private void ended() {
                int id = brokerId;
                runtime.execute(core -> {
                    session.closed = true;
                    core.brokerGone(id, session);
                });
            }
        };
    }

    /** Only touched on the controller loop. */
    private static final class Session implements BrokerSession {
        private final StreamObserver<ControllerCommand> out;
        boolean closed;

        Session(StreamObserver<ControllerCommand> out) {
            this.out = out;
        }

        @Override
        public void sendAssignment(long version, long controllerEpoch, String json) {
            if (closed) {
                return;
            }
            try {
                out.onNext(ControllerCommand.newBuilder().setAssignment(AssignmentPush.newBuilder()
                        .setVersion(version).setControllerEpoch(controllerEpoch).setJson(json)).build());
            } catch (RuntimeException e) {
                LOG.debugf(e, "push failed on a closing stream");
                closed = true;
            }
        }

        @Override
        public void close(String reason) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                out.onError(Status.UNAVAILABLE.withDescription(reason).asRuntimeException());
            } catch (RuntimeException e) {
                LOG.debugf(e, "close failed on a closed stream");
            }
        }
    }
}
