package dev.kaas.controller.cluster;

/** The controller's end of one broker stream, as the core sees it: the gRPC edge implements it. */
public interface BrokerSession {
    void sendAssignment(long version, long controllerEpoch, String json);

    /** Ends the stream, e.g. a newer incarnation of the same broker id registered. */
    void close(String reason);
}
