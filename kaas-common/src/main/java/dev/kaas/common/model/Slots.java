package dev.kaas.common.model;

import org.apache.kafka.common.utils.Utils;

/**
 * Coordinator routing: an id's slot is Apache's partition-for-key rule over 50 slots
 * ({@code abs(hashCode) % 50}), so a kaas group lands on the slot number that Apache would give
 * its {@code __consumer_offsets} partition.
 */
public final class Slots {
    private Slots() {
    }

    public static int slotFor(String id) {
        return Utils.abs(id.hashCode()) % Assignment.SLOTS;
    }
}
