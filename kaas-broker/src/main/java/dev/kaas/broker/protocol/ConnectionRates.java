package dev.kaas.broker.protocol;

/**
 * The connection creation rate quota of client addresses ({@code connection_creation_rate} of an
 * {@code ip} entity, KIP-612): asked once per accepted connection, before the connection caps.
 */
@FunctionalInterface
public interface ConnectionRates {
    /** No quota anywhere. */
    ConnectionRates NONE = ip -> 0;

    /**
     * Counts a new connection from {@code ip} and answers 0, or, when it would take the address
     * past its quota, counts nothing and answers how long the connection is held before it is
     * closed (Apache delays the close rather than refusing at once, so a client retrying in a
     * loop is slowed down too).
     */
    long throttleMs(String ip);
}
