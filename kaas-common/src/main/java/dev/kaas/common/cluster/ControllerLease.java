package dev.kaas.common.cluster;

import java.io.IOException;

/**
 * The election port. The standalone binding keeps the lease in a file; the Kubernetes binding
 * implements it with a {@code coordination.k8s.io/v1 Lease}. Nothing above this interface
 * knows which one is bound.
 */
public interface ControllerLease {
    /**
     * Acquires the lease if it is free or expired, renews it if {@code holder} already has it.
     * Taking it from another holder (or from nobody) increments {@code transitions}.
     *
     * @return the lease as stored after the attempt; check {@link LeaseRecord#heldBy}
     */
    LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException;

    /** Gives the lease up at once if {@code holder} has it, so a successor need not wait for expiry. */
    void release(String holder) throws IOException;
}
