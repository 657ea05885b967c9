package dev.kaas.broker.admin;

import com.google.protobuf.ByteString;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.AlterScramCredentialsCall;
import dev.kaas.proto.ScramDeletion;
import dev.kaas.proto.ScramUpsertion;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * AlterUserScramCredentials (key 51), forwarded to the controller as Apache's broker forwards it
 * ({@code kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[password=…]' --entity-type users};
 * the client salts the password, this broker makes the keys of it). The controller decides with Apache's rules and publishes the
 * credentials; the answer waits (bounded) until this broker applied them, so the user can log in
 * here right after.
 */
@ApplicationScoped
public class AlterUserScramCredentialsHandler implements ApiHandler {
    /** How long the answer waits for this broker to apply what the controller published. */
    static final long APPLY_WAIT_MS = 5_000;
    /** Far above any hash's output (a salted password is one hash long). */
    static final int MAX_SALTED_PASSWORD_BYTES = 1024;

    private final ControllerAdmin controller;
    private final ClusterView view;

    public AlterUserScramCredentialsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    /**
     * The upsertion as the controller takes it: the salted password, which would log in as the
     * user, turned here into the stored and server keys (Apache's ScramFormatter, as Apache's
     * controller does it) and never sent on. A salted password no key can be made of (empty, too
     * long, an unknown mechanism) goes without keys, and the controller refuses it with Apache's
     * error for it.
     */
    static ScramUpsertion upsertion(AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u) {
        ScramUpsertion.Builder out = ScramUpsertion.newBuilder().setName(u.name()).setMechanism(u.mechanism())
                .setIterations(u.iterations()).setSalt(ByteString.copyFrom(u.salt()));
        org.apache.kafka.clients.admin.ScramMechanism m = org.apache.kafka.clients.admin.ScramMechanism.fromType(u.mechanism());
        byte[] salted = u.saltedPassword();
        if (m != org.apache.kafka.clients.admin.ScramMechanism.UNKNOWN && salted.length > 0 && salted.length <= MAX_SALTED_PASSWORD_BYTES) {
            try {
                ScramFormatter f = new ScramFormatter(ScramMechanism.forMechanismName(m.mechanismName()));
                out.setStoredKey(ByteString.copyFrom(f.storedKey(f.clientKey(salted)))).setServerKey(ByteString.copyFrom(f.serverKey(salted)));
            } catch (java.security.GeneralSecurityException | RuntimeException e) {
                // No keys: the controller refuses the upsertion.
            }
        }
        return out.build();
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ALTER_USER_SCRAM_CREDENTIALS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        AlterUserScramCredentialsRequestData data = ((AlterUserScramCredentialsRequest) request).data();
        AlterScramCredentialsCall.Builder call = AlterScramCredentialsCall.newBuilder();
        data.deletions().forEach(d -> call.addDeletions(ScramDeletion.newBuilder().setName(d.name()).setMechanism(d.mechanism())));
        data.upsertions().forEach(u -> call.addUpsertions(upsertion(u)));
        return controller.alterScramCredentials(call.build()).thenCompose(reply -> {
            AlterUserScramCredentialsResponseData resp = new AlterUserScramCredentialsResponseData();
            reply.getResultsList().forEach(r -> resp.results().add(new AlterUserScramCredentialsResult().setUser(r.getUser())
                    .setErrorCode((short) r.getErrorCode()).setErrorMessage(r.getErrorMessage().isEmpty() ? null : r.getErrorMessage())));
            return view.awaitVersion(reply.getAssignmentVersion()).thenApply(v -> true)
                    .completeOnTimeout(false, APPLY_WAIT_MS, TimeUnit.MILLISECONDS).thenApply(v -> (ApiMessage) resp);
        });
    }
}
