package dev.kaas.broker.auth;

import org.apache.kafka.common.security.scram.ScramCredential;

/** The SCRAM credentials a SASL listener checks clients against: those the controller published. */
@FunctionalInterface
public interface ScramCredentials {
    /** @return the user's credential for {@code mechanism} ({@code SCRAM-SHA-256}, {@code SCRAM-SHA-512}), or null */
    ScramCredential find(String user, String mechanism);
}
