package dev.kaas.broker.data;

import dev.kaas.broker.storage.PartitionLog;
import dev.kaas.broker.storage.SerialExecutor;

/** An open partition this broker leads: its log and the serial executor every append goes through. */
public record Replica(PartitionLog log, SerialExecutor writer) {
}
