package dev.kaas.broker.protocol;

/**
 * Completing a handler's stage with this closes the connection instead of answering, as Apache
 * does where the protocol has no way to report an error (a failed acks=0 produce: the producer
 * notices the closed socket and refreshes its metadata).
 */
public final class CloseConnection extends RuntimeException {
    public CloseConnection(String reason) {
        super(reason, null, false, false);
    }
}
