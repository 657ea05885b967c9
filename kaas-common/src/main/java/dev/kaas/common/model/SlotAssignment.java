package dev.kaas.common.model;

/** One coordinator slot (group or transaction) and the broker that owns it, under an epoch. */
public record SlotAssignment(int slot, int broker, int epoch) {
}
