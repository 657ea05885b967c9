package dev.kaas.common.model;

/**
 * One SCRAM credential of a user, as Apache's controller keeps it (UserScramCredentialRecord):
 * never the password, only what a server needs to check a client's proof and prove itself.
 *
 * @param mechanism  {@code SCRAM-SHA-256} or {@code SCRAM-SHA-512}
 * @param salt       base64
 * @param storedKey  base64: H(HMAC(salted password, "Client Key"))
 * @param serverKey  base64: HMAC(salted password, "Server Key")
 * @param iterations of the salted password
 */
public record ScramUser(String mechanism, String salt, String storedKey, String serverKey, int iterations) {
    @Override
    public String toString() {
        // Keys stay out of logs.
        return "ScramUser[mechanism=" + mechanism + ", iterations=" + iterations + "]";
    }
}
