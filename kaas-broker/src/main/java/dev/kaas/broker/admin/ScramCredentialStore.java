package dev.kaas.broker.admin;

import dev.kaas.broker.auth.ScramCredentials;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.common.model.ScramUser;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Base64;
import org.apache.kafka.common.security.scram.ScramCredential;

/**
 * The SCRAM credentials of the assignment this broker applied last: a credential altered
 * through any broker authenticates here once the controller's push arrives (milliseconds), as
 * Apache's brokers authenticate from their metadata image.
 */
@ApplicationScoped
public class ScramCredentialStore implements ScramCredentials {
    private final ClusterView view;

    public ScramCredentialStore(ClusterView view) {
        this.view = view;
    }

    @Override
    public ScramCredential find(String user, String mechanism) {
        for (ScramUser c : view.assignment().scramUsers().getOrDefault(user, java.util.List.of())) {
            if (c.mechanism().equals(mechanism)) {
                try {
                    Base64.Decoder b64 = Base64.getDecoder();
                    return new ScramCredential(b64.decode(c.salt()), b64.decode(c.storedKey()), b64.decode(c.serverKey()), c.iterations());
                } catch (IllegalArgumentException e) {
                    // The assignment is the controller's; a credential it cannot have written authenticates nobody.
                    return null;
                }
            }
        }
        return null;
    }
}
