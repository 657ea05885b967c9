package dev.kaas.controller.kube;

import dev.kaas.common.cluster.ControllerLease;
import dev.kaas.common.cluster.LeaseRecord;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;

/**
 * The controller lease as a {@code coordination.k8s.io/v1 Lease}, through fabric8's
 * leader-election {@link LeaseLock}: its {@code get} then {@code update} is a compare-and-set on
 * the Lease's resourceVersion, so of two contenders one wins and the other gets a conflict.
 * {@code leaseTransitions} is the controller epoch; it grows by one each time the holder changes
 * or a holder's own lease had expired (the first holder gets 1, so a leading controller's epoch is
 * never 0), and never to an epoch at or below one the volume's assignment files were written
 * under, even if the Lease itself was lost.
 *
 * <p>Why not fabric8's {@code LeaderElector} loop: the renew loop and the step-down rule are
 * {@code ControllerCore}'s, shared with the standalone binding and tested with a mock clock; the
 * lock is the part that must be Kubernetes'.
 *
 * <p>Expiry of another holder's lease is judged as client-go judges it, by this process's clock
 * from the moment it saw the record change, never by comparing the record's renewTime with the
 * local clock: clock skew between pods cannot make a live lease look expired.
 */
final class KubernetesLease implements ControllerLease {
    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final BoundedCalls calls;
    private final long callTimeoutMs;
    private final EpochFloor epochFloor;
    private LeaderElectionRecord lastSeen;
    private long lastSeenChangedAtMs;
    /** System.nanoTime() when the last successful acquisition or renewal began, and the step-down budget from then. */
    private volatile long renewedAtNanos;
    private volatile long stepDownAfterNanos = -1;
    /** The holder identity of the last successful acquisition or renewal: the one writes are fenced for. */
    private volatile String holder;

    /** The highest controller epoch anything on the volume was written under. */
    @FunctionalInterface
    interface EpochFloor {
        long highest() throws IOException;
    }

    KubernetesLease(KubernetesClient client, String namespace, String name, BoundedCalls calls, long callTimeoutMs,
                    EpochFloor epochFloor) {
        this.epochFloor = epochFloor;
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.calls = calls;
        this.callTimeoutMs = callTimeoutMs;
    }

    /**
     * Only the API calls run on {@link BoundedCalls}' threads; the decision and this object's state
     * stay on the caller's thread, so an abandoned call that answers late changes nothing. A fresh
     * lock per round: {@link LeaseLock} keeps the resource its {@code get} read for its
     * {@code update} (that is the compare-and-set), under its monitor, which an abandoned call holds.
     */
    @Override
    public synchronized LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException {
        long startedNanos = System.nanoTime();
        LeaseLock lock = new LeaseLock(namespace, name, holder);
        long timeout = Math.max(300, Math.min(callTimeoutMs, durationMs / 3));
        try {
            ZonedDateTime now = ZonedDateTime.ofInstant(Instant.ofEpochMilli(nowMs), ZoneOffset.UTC);
            Duration duration = Duration.ofMillis(Math.max(1_000, durationMs));
            LeaderElectionRecord seen = calls.within(timeout, "reading the lease", () -> lock.get(client));
            if (seen == null) {
                // A Lease that is gone (deleted, etcd restored, a new namespace on an old volume) starts
                // above every epoch the volume has seen: epochs never go back.
                int first = Math.toIntExact(Math.max(1, epochFloor.highest() + 1));
                LeaderElectionRecord created = new LeaderElectionRecord(holder, duration, now, now, first);
                calls.within(timeout, "creating the lease", () -> {
                    lock.create(client, created);
                    return null;
                });
                observe(created, nowMs);
                renewed(holder, startedNanos, durationMs);
                return new LeaseRecord(holder, nowMs + durationMs, first);
            }
            observe(seen, nowMs);
            String current = seen.getHolderIdentity();
            boolean vacant = current == null || current.isEmpty();
            boolean mine = holder.equals(current);
            long othersExpiry = lastSeenChangedAtMs + seen.getLeaseDuration().toMillis();
            if (!vacant && !mine && nowMs < othersExpiry) {
                return new LeaseRecord(current, othersExpiry, seen.getLeaderTransitions());
            }
            // Our own record's renewTime is our own clock's: a lapse in our renewals makes a new epoch.
            long floor = epochFloor.highest();
            // Ours and live, and not below what the volume has seen (a Lease lowered under us by a
            // restore or an edit is retaken above it, or this controller could never write).
            boolean mineAndLive = mine && nowMs < seen.getRenewTime().toInstant().toEpochMilli() + seen.getLeaseDuration().toMillis()
                    && seen.getLeaderTransitions() >= floor;
            int transitions = mineAndLive ? seen.getLeaderTransitions()
                    : Math.toIntExact(Math.max(seen.getLeaderTransitions() + 1L, floor + 1));
            LeaderElectionRecord next = new LeaderElectionRecord(holder, duration, mineAndLive ? seen.getAcquireTime() : now,
                    now, transitions);
            calls.within(timeout, "renewing the lease", () -> {
                lock.update(client, next);
                return null;
            });
            observe(next, nowMs);
            renewed(holder, startedNanos, durationMs);
            return new LeaseRecord(holder, nowMs + durationMs, transitions);
        } catch (KubernetesClientException e) {
            throw new IOException("lease " + namespace + "/" + name + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void release(String holder) throws IOException {
        LeaseLock lock = new LeaseLock(namespace, name, holder);
        try {
            LeaderElectionRecord seen = calls.within(callTimeoutMs, "reading the lease", () -> lock.get(client));
            if (seen == null || !holder.equals(seen.getHolderIdentity())) {
                return;
            }
            ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
            // An empty holder, not null: the lock writes a merge patch, in which a missing field keeps its value.
            calls.within(callTimeoutMs, "releasing the lease", () -> {
                lock.update(client, new LeaderElectionRecord("", Duration.ofSeconds(1), now, now, seen.getLeaderTransitions()));
                return null;
            });
        } catch (KubernetesClientException e) {
            throw new IOException("releasing lease " + namespace + "/" + name + ": " + e.getMessage(), e);
        }
    }

    private void renewed(String who, long startedNanos, long durationMs) {
        holder = who;
        renewedAtNanos = startedNanos;
        stepDownAfterNanos = durationMs * 2 / 3 * 1_000_000;
    }

    /**
     * Whether this process's last renewal is recent enough to write: the core's step-down rule
     * (two thirds of the lease after the renewal began), measured here too so that one long
     * operation (a CreateTopics of thousands of topics, each several API calls) stops writing on
     * time, not only at its next check in the core.
     */
    String holder() {
        return holder;
    }

    boolean writable() {
        return stepDownAfterNanos >= 0 && System.nanoTime() - renewedAtNanos < stepDownAfterNanos;
    }

    private void observe(LeaderElectionRecord record, long nowMs) {
        if (!Objects.equals(record, lastSeen)) {
            lastSeen = record;
            lastSeenChangedAtMs = nowMs;
        }
    }
}
