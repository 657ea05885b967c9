package dev.kaas.common.cluster;

import java.io.IOException;

/**
 * Hands out blocks of producer IDs that are never reused, across restarts of any process:
 * the block is durable before it is returned.
 */
public interface ProducerIdStore {
    int BLOCK_SIZE = 1000;

    /**
     * @return the first ID of a fresh block of {@link #BLOCK_SIZE} IDs
     * @throws LeaseFencedException if {@code leaseEpoch} is no longer the lease's current epoch
     */
    long allocateBlock(long leaseEpoch) throws IOException;
}
