package dev.kaas.broker.storage;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps a share of the process's file descriptors for what must never fail for want of one:
 * accepting connections, group commits, metadata and offsets files. Partition opens take
 * descriptors (one per segment) and stop at {@link #PARTITION_SHARE} of the limit: past it a
 * partition is refused on its own (reported per partition by readiness), never the acceptor.
 *
 * <p>Counting open descriptors lists {@code /proc/self/fd}, which costs more the more partitions
 * are open: with 10,000 open it was a third of a takeover's time when every open read it. So a
 * reading becomes a budget (the share's limit minus what is in use) that opens draw from, and the
 * count is read again only when the budget runs out, when the reading is older than
 * {@link #READING_NANOS} (connections come and go), or after {@link #invalidate}. One thread
 * reads at a time; the others wait for its answer instead of listing the directory themselves.
 *
 * <p>Thread-safe.
 */
public final class DescriptorHeadroom {
    /** Share of the descriptor limit partition opens may use; the rest is headroom. */
    public static final double PARTITION_SHARE = 0.8;
    /** How long a reading stands while there is budget left. */
    static final long READING_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long a refusal stands before the count is read again. */
    static final long REFUSAL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final LongSupplier open;
    private final LongSupplier max;
    private final LongSupplier nanos;
    private boolean read;
    private long readAt;
    private long budget;
    private String refusal;

    public DescriptorHeadroom(LongSupplier open, LongSupplier max) {
        this(open, max, System::nanoTime);
    }

    DescriptorHeadroom(LongSupplier open, LongSupplier max, LongSupplier nanos) {
        this.open = open;
        this.max = max;
        this.nanos = nanos;
    }

    /** This process's descriptors, where the JVM can tell (Unix); elsewhere no limit is applied. */
    public static DescriptorHeadroom ofThisProcess() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return new DescriptorHeadroom(unix::getOpenFileDescriptorCount, unix::getMaxFileDescriptorCount);
        }
        return new DescriptorHeadroom(() -> 0, () -> -1);
    }

    /**
     * Takes one descriptor for a partition about to open, or says why it may not open now (null
     * when it may). A partition that ends up holding more than one calls {@link #consumed}.
     */
    public synchronized String reserve() {
        long now = nanos.getAsLong();
        long age = now - readAt;
        boolean stale = !read || age >= READING_NANOS;
        boolean usedUp = refusal == null && budget <= 0;
        // A refusal stands for REFUSAL_NANOS, so a refused takeover does not list the directory per partition.
        if (stale || usedUp || refusal != null && age >= REFUSAL_NANOS) {
            readNow(now);
        }
        if (refusal != null) {
            return refusal;
        }
        budget--;
        return null;
    }

    /** Descriptors an opened partition holds beyond the one {@link #reserve} took (its other segments). */
    public synchronized void consumed(int more) {
        budget -= Math.max(0, more);
    }

    /** The next {@link #reserve} reads the count afresh (a new assignment: closes may have freed some). */
    public synchronized void invalidate() {
        read = false;
    }

    private void readNow(long now) {
        read = true;
        readAt = now;
        long limit = max.getAsLong();
        if (limit <= 0) {
            budget = Long.MAX_VALUE;
            refusal = null;
            return;
        }
        long inUse = open.getAsLong();
        long share = (long) (limit * PARTITION_SHARE);
        budget = share - inUse;
        refusal = budget > 0 ? null : "file descriptors: " + inUse + " of " + limit + " in use; the last "
                + Math.round((1 - PARTITION_SHARE) * 100) + "% are kept for connections and metadata (raise the limit: ulimit -n)";
    }
}
