package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

/** Bounded wait for a load's acknowledgements, shared by the multi-process ITs. */
final class ClusterITAcks {
    private ClusterITAcks() {
    }

    static void await(ProduceLoad load, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (load.acked() < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(load.acked()).as("acknowledged records (failures: %s)", load.failures).isGreaterThanOrEqualTo(atLeast);
    }
}
