package dev.kaas.controller.cluster;

import com.google.protobuf.ByteString;
import dev.kaas.common.cluster.AssignmentChunks;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.proto.AssignmentPush;
import dev.kaas.proto.BrokerLinkGrpc;
import dev.kaas.proto.BrokerReport;
import dev.kaas.proto.ControllerCommand;
import dev.kaas.proto.Heartbeat;
import dev.kaas.proto.Nudge;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.quarkus.grpc.GrpcService;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The gRPC edge of the broker stream. Callbacks arrive on gRPC/Vert.x threads and are handed to
 * the controller loop; outgoing messages are sent from the loop only, one at a time, as
 * grpc-java requires of a {@link StreamObserver}. An assignment goes out as consecutive pieces
 * ({@link AssignmentChunks}), so its size is not bounded by gRPC's per-message limit.
 */
@GrpcService
public class BrokerLinkService extends BrokerLinkGrpc.BrokerLinkImplBase {
    private static final Logger LOG = Logger.getLogger(BrokerLinkService.class);

    @Inject
    ControllerRuntime runtime;

    @Inject
    ClusterStats stats;

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
                            try {
                                core.brokerRegistered(info, reg.getIncarnation(), reg.getClusterId(), session);
                            } catch (Exception e) {
                                // Neither registered nor refused would leave the broker waiting on an open stream.
                                session.close("registration failed: " + e.getMessage());
                                throw e;
                            }
                        });
                    }
                    case STATUS -> {
                        int id = brokerId;
                        long applied = report.getStatus().getAppliedAssignmentVersion();
                        runtime.execute(core -> {
                            // Answer first: a publication the report triggers may fail or take a while.
                            if (core.hasSession(id, session)) {
                                session.heartbeat();
                            }
                            core.brokerStatus(id, session, applied);
                        });
                    }
                    case STATS -> {
                        // A broker sends stats only on a stream this controller accepted; kept beside the loop, which never reads them.
                        if (brokerId >= 0 && session.isOpen() && runtime.isLeader()) {
                            stats.report(brokerId, session, report.getStats());
                        }
                    }
                    default -> LOG.warnf("ignoring an empty broker report broker=%d", brokerId);
                }
            }

            @Override
            public void onError(Throwable t) {
                ended(false);
            }

            @Override
            public void onCompleted() {
                // Only a broker that is shutting down completes its stream.
                ended(true);
            }

            private void ended(boolean clean) {
                int id = brokerId;
                stats.gone(id, session);
                runtime.execute(core -> {
                    session.closed = true;
                    core.brokerGone(id, session, clean);
                });
            }
        };
    }

    /**
     * Touched on the controller loop, except {@link #nudge}, which the Nudge RPC calls on its own
     * thread: a gRPC stream takes one writer at a time, so every write holds the session's lock.
     */
    private static final class Session implements BrokerSession {
        private final StreamObserver<ControllerCommand> out;
        volatile boolean closed;

        Session(StreamObserver<ControllerCommand> out) {
            this.out = out;
        }

        @Override
        public synchronized void sendAssignment(long version, long controllerEpoch, String json) {
            if (closed) {
                return;
            }
            try {
                List<byte[]> pieces = AssignmentChunks.split(json.getBytes(StandardCharsets.UTF_8), AssignmentChunks.CHUNK_BYTES);
                for (int i = 0; i < pieces.size(); i++) {
                    out.onNext(ControllerCommand.newBuilder().setAssignment(AssignmentPush.newBuilder()
                            .setVersion(version).setControllerEpoch(controllerEpoch)
                            .setChunk(ByteString.copyFrom(pieces.get(i))).setChunkIndex(i).setChunkCount(pieces.size())).build());
                }
            } catch (RuntimeException e) {
                LOG.debugf(e, "push failed on a closing stream");
                closed = true;
            }
        }

        @Override
        public synchronized void nudge(int fromBroker) {
            if (closed) {
                return;
            }
            try {
                out.onNext(ControllerCommand.newBuilder().setNudge(Nudge.newBuilder().setFromBroker(fromBroker)).build());
            } catch (RuntimeException e) {
                LOG.debugf(e, "nudge failed on a closing stream");
                closed = true;
            }
        }

        /** Answers a status report, so the broker knows this controller is not hung. */
        synchronized void heartbeat() {
            if (closed) {
                return;
            }
            try {
                out.onNext(ControllerCommand.newBuilder().setHeartbeat(Heartbeat.getDefaultInstance()).build());
            } catch (RuntimeException e) {
                LOG.debugf(e, "heartbeat failed on a closing stream");
                closed = true;
            }
        }

        @Override
        public boolean isOpen() {
            return !closed;
        }

        @Override
        public void close(String reason) {
            end(Status.UNAVAILABLE.withDescription(reason));
        }

        @Override
        public void refuse(String reason) {
            end(Status.ALREADY_EXISTS.withDescription(reason));
        }

        @Override
        public void refuseForeign(String reason) {
            end(Status.FAILED_PRECONDITION.withDescription(reason));
        }

        private synchronized void end(Status status) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                out.onError(status.asRuntimeException());
            } catch (RuntimeException e) {
                LOG.debugf(e, "close failed on a closed stream");
            }
        }
    }
}
