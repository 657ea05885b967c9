package dev.kaas.broker.storage;

import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * Keeps a share of the process's file descriptors for what must never fail for want of one:
 * accepting connections, group commits, metadata and offsets files. Partition opens take
 * descriptors (one per segment) and stop at {@link #PARTITION_SHARE} of the limit: past it a
 * partition is refused on its own (reported per partition by readiness), never the acceptor.
 *
 * <p>Stateless apart from its two readings; safe from any thread.
 */
public final class DescriptorHeadroom {
    /** Share of the descriptor limit partition opens may use; the rest is headroom. */
    public static final double PARTITION_SHARE = 0.8;

    private final LongSupplier open;
    private final LongSupplier max;

    public DescriptorHeadroom(LongSupplier open, LongSupplier max) {
        this.open = open;
        this.max = max;
    }

    /** This process's descriptors, where the JVM can tell (Unix); elsewhere no limit is applied. */
    public static DescriptorHeadroom ofThisProcess() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return new DescriptorHeadroom(unix::getOpenFileDescriptorCount, unix::getMaxFileDescriptorCount);
        }
        return new DescriptorHeadroom(() -> 0, () -> -1);
    }

    /** Why a partition may not open now, or null when it may. */
    public String refusal() {
        long limit = max.getAsLong();
        if (limit <= 0) {
            return null;
        }
        long inUse = open.getAsLong();
        if (inUse >= (long) (limit * PARTITION_SHARE)) {
            return "file descriptors: " + inUse + " of " + limit + " in use; the last "
                    + Math.round((1 - PARTITION_SHARE) * 100) + "% are kept for connections and metadata (raise the limit: ulimit -n)";
        }
        return null;
    }
}
