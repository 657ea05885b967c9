package dev.kaas.common.cluster;

import java.io.IOException;

/**
 * A metadata write refused because the writer's lease epoch is no longer the current one: another
 * controller took the lease (or this one released it) after the writer last held it. The writer
 * must step down; it is not a retriable I/O failure.
 */
public final class LeaseFencedException extends IOException {
    public LeaseFencedException(String message) {
        super(message);
    }
}
