package dev.kaas.controller.cluster;

/** The controller's end of one broker stream, as the core sees it: the gRPC edge implements it. */
public interface BrokerSession {
    /** Sends one assignment, however large: the edge cuts it into pieces under the message limit. */
    void sendAssignment(long version, long controllerEpoch, String json);

    /** Passes another broker's doorbell down this stream (see the Nudge RPC). */
    void nudge(int fromBroker);

    /** Ends the stream, e.g. a newer incarnation of the same broker id registered. */
    void close(String reason);

    /** Ends a stream whose registration is refused; the broker is expected to retry later. */
    void refuse(String reason);

    /** Ends a stream whose broker is not on this cluster's volume (its cluster id differs). */
    void refuseForeign(String reason);

    /** Whether the stream is still open: neither end has closed it. Any thread. */
    default boolean isOpen() {
        return true;
    }
}
