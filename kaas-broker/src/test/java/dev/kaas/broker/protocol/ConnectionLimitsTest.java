package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {
    @Test
    void aConnectionAboveTheLimitOfItsAddressIsRefusedAndOthersAreNot() {
        ConnectionLimits limits = new ConnectionLimits(2);
        assertThat(limits.tryOpen("10.0.0.1")).isTrue();
        assertThat(limits.tryOpen("10.0.0.1")).isTrue();

        assertThat(limits.tryOpen("10.0.0.1")).isFalse();
        assertThat(limits.tryOpen("10.0.0.2")).as("another address has its own count").isTrue();
        assertThat(limits.open("10.0.0.1")).as("a refused connection is not counted").isEqualTo(2);
    }

    @Test
    void aClosedConnectionMakesRoomForANewOne() {
        ConnectionLimits limits = new ConnectionLimits(1);
        limits.tryOpen("10.0.0.1");
        assertThat(limits.tryOpen("10.0.0.1")).isFalse();

        limits.closed("10.0.0.1");

        assertThat(limits.tryOpen("10.0.0.1")).isTrue();
        limits.closed("10.0.0.1");
        assertThat(limits.open("10.0.0.1")).isZero();
    }
}
