package dev.kaas.common.cluster;

/**
 * The controller lease as both bindings store it, mirroring a Kubernetes {@code Lease}:
 * {@code holder} is holderIdentity, {@code transitions} is leaseTransitions and serves as the
 * controller epoch (it only grows), {@code renewDeadlineMs} is renewTime + leaseDuration.
 */
public record LeaseRecord(String holder, long renewDeadlineMs, long transitions) {
    public boolean heldBy(String candidate, long nowMs) {
        return holder != null && holder.equals(candidate) && nowMs < renewDeadlineMs;
    }
}
