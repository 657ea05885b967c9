package dev.kaas.broker.storage;

/**
 * What the metrics see of a partition log's acknowledgement path: each group commit (one fsync,
 * then one fence check, covering every acks=all append that waited for it) and each partition
 * taken over (opened under a new leader epoch: fenced, its tail recovered). Called on the flush
 * and assignment threads; must not block.
 */
public interface LogObserver {
    /**
     * @param fsyncNanos the fsync's time
     * @param fenceNanos the fence check's time after it
     * @param appends    the waiting appends it acknowledged (0 for a round only flush.ms asked for)
     */
    void groupCommit(long fsyncNanos, long fenceNanos, int appends);

    /** A partition opened under a new leader epoch, in {@code nanos}. */
    void takeover(long nanos);

    LogObserver NONE = new LogObserver() {
        @Override
        public void groupCommit(long fsyncNanos, long fenceNanos, int appends) {
        }

        @Override
        public void takeover(long nanos) {
        }
    };
}
