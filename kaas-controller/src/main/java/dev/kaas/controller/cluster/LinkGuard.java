package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.LinkAuth;
import dev.kaas.common.cluster.LinkKey;
import dev.kaas.common.cluster.LinkKeySource;
import dev.kaas.controller.config.ControllerConfig;
import dev.kaas.proto.ControllerAdminGrpc;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.quarkus.grpc.GlobalInterceptor;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Admits a gRPC call only from a process that holds the cluster's link key ({@link LinkAuth}):
 * without it, anyone who can reach the controller's port could register as a broker and read the
 * assignment (SCRAM stored keys included), or create and delete topics. Runs before every
 * service of this process; a refused call is closed UNAUTHENTICATED before its first message is read.
 */
@ApplicationScoped
@GlobalInterceptor
@Startup
public class LinkGuard implements ServerInterceptor {
    private static final Logger LOG = Logger.getLogger(LinkGuard.class);
    static final Metadata.Key<String> HEADER = Metadata.Key.of(LinkAuth.HEADER, Metadata.ASCII_STRING_MARSHALLER);
    /** Replaying these does nothing a broker could not cause anyway: a doorbell, a version number. */
    private static final Set<String> REPLAY_SAFE = Set.of(
            ControllerAdminGrpc.getNudgeMethod().getFullMethodName(),
            ControllerAdminGrpc.getAssignmentVersionMethod().getFullMethodName());
    private static final long REPORT_EVERY_MS = 10_000;

    @Inject
    ControllerConfig config;

    private final LinkAuth.Verifier verifier = new LinkAuth.Verifier(System::currentTimeMillis);
    private LinkKeySource keys;
    private volatile long lastReportMs;

    @PostConstruct
    void open() throws IOException {
        Path file;
        byte[] key;
        if (config.linkKeyFile().isPresent()) {
            // The operator's key: never made here, so a typo cannot start a cluster with a key of its own.
            file = Path.of(config.linkKeyFile().get());
            key = LinkKey.read(file).orElseThrow(() -> new IOException(
                    "kaas.link-key-file names " + file + ", which holds no key"));
        } else {
            file = LinkKey.defaultFile(Path.of(config.dataDir()).toAbsolutePath());
            key = LinkKey.createIfAbsent(file, new SecureRandom());
        }
        keys = LinkKeySource.follow(file, key);
        LOG.infof("controller link: calls must prove the key in %s", file);
    }

    @PreDestroy
    void close() {
        if (keys != null) {
            keys.close();
        }
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        LinkAuth.Verdict verdict = verifier.verify(headers.get(HEADER), method, keys.current().orElseThrow(),
                REPLAY_SAFE.contains(method));
        if (verdict == LinkAuth.Verdict.ACCEPTED) {
            return next.startCall(call, headers);
        }
        long now = System.currentTimeMillis();
        if (now - lastReportMs >= REPORT_EVERY_MS) {
            lastReportMs = now;
            LOG.warnf("refused a call to %s from %s: %s", method,
                    call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR), verdict.describe());
        }
        Status status = verdict == LinkAuth.Verdict.BUSY ? Status.UNAVAILABLE : Status.UNAUTHENTICATED;
        call.close(status.withDescription(verdict.describe()), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }
}
