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

    /** listener.name.<listener>.max.connections: its own listener only; a refusal elsewhere gives its slot back. */
    @Test
    void aListenersOwnLimitCountsItsConnectionsOnly() {
        ConnectionLimits limits = new ConnectionLimits(2, java.util.Map.of(), Integer.MAX_VALUE, java.util.Map.of("client", 2));
        assertThat(limits.admit("CLIENT", "10.0.0.1")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("CLIENT", "10.0.0.2")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("CLIENT", "10.0.0.3")).isEqualTo(ConnectionLimits.Refusal.LISTENER);
        assertThat(limits.admit("INTERNAL", "10.0.0.3")).as("another listener").isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.total()).isEqualTo(3);
        limits.closed("client", "10.0.0.1");
        // The listener has room now, but the address is at its own limit: the listener's slot is given back.
        assertThat(limits.admit("INTERNAL", "10.0.0.3")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("client", "10.0.0.3")).isEqualTo(ConnectionLimits.Refusal.PER_IP);
        assertThat(limits.admit("client", "10.0.0.4")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("client", "10.0.0.5")).isEqualTo(ConnectionLimits.Refusal.LISTENER);
    }

    @Test
    void theBrokerWideLimitCountsEveryAddressAndAClosedConnectionFreesItsSlot() {
        ConnectionLimits limits = new ConnectionLimits(Integer.MAX_VALUE, java.util.Map.of(), 3);
        assertThat(limits.admit("10.0.0.1")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("10.0.0.2")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("10.0.0.3")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("10.0.0.4")).isEqualTo(ConnectionLimits.Refusal.TOTAL);
        assertThat(limits.open("10.0.0.4")).isZero();
        limits.closed("10.0.0.2");
        assertThat(limits.admit("10.0.0.4")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.total()).isEqualTo(3);
    }

    @Test
    void anOverrideReplacesTheDefaultForItsAddressAndARefusalPerAddressFreesTheTotal() {
        var overrides = ConnectionLimits.parseOverrides("127.0.0.1:1, localhost:1,10.0.0.9:3", 0);
        assertThat(overrides).containsEntry("127.0.0.1", 1).containsEntry("10.0.0.9", 3);
        ConnectionLimits limits = new ConnectionLimits(0, overrides, 10);
        assertThat(limits.admit("10.0.0.1")).as("a default of zero: only overridden addresses connect").isEqualTo(ConnectionLimits.Refusal.PER_IP);
        assertThat(limits.admit("127.0.0.1")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("127.0.0.1")).isEqualTo(ConnectionLimits.Refusal.PER_IP);
        for (int i = 0; i < 3; i++) {
            assertThat(limits.admit("10.0.0.9")).isEqualTo(ConnectionLimits.Refusal.NONE);
        }
        assertThat(limits.admit("10.0.0.9")).isEqualTo(ConnectionLimits.Refusal.PER_IP);
        assertThat(limits.total()).as("refused connections are not counted").isEqualTo(4);
    }

    @Test
    void overridesAreCheckedAsApacheChecksThem() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConnectionLimits.parseOverrides("", 0))
                .hasMessage("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConnectionLimits.parseOverrides("10.0.0.1", 5))
                .hasMessage("Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 8");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConnectionLimits.parseOverrides("bad_host!:3", 5))
                .hasMessage("max.connections.per.ip.overrides contains invalid addresses : bad_host!");
        assertThat(ConnectionLimits.parseOverrides("10.0.0.1:-1", 5)).as("Apache takes a negative count: nobody is below it")
                .containsEntry("10.0.0.1", -1);
        assertThat(ConnectionLimits.parseOverrides("", 5)).isEmpty();
        assertThat(ConnectionLimits.parseOverrides("  ", 5)).as("Apache's ConfigDef trims a string: blanks are none").isEmpty();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConnectionLimits.parseOverrides(",", 0)).as("no entry at all")
                .hasMessage("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
    }

    /**
     * Apache's dynamic connection limits: new connections meet the new limits, open ones are
     * kept, and a listener limit set later counts the connections opened before it (each
     * listener is counted whether or not it has a limit).
     */
    @Test
    void newLimitsApplyToNewConnectionsAndCountThoseAlreadyOpen() {
        ConnectionLimits limits = new ConnectionLimits(Integer.MAX_VALUE, java.util.Map.of(), Integer.MAX_VALUE);
        for (int i = 0; i < 3; i++) {
            assertThat(limits.admit("CLIENT", "10.0.0.1")).isEqualTo(ConnectionLimits.Refusal.NONE);
        }

        limits.update(new ConnectionLimits.Limits(2, java.util.Map.of("10.0.0.9", 1), Integer.MAX_VALUE, java.util.Map.of("client", 4)));

        assertThat(limits.open("10.0.0.1")).as("open connections are kept").isEqualTo(3);
        assertThat(limits.admit("CLIENT", "10.0.0.1")).isEqualTo(ConnectionLimits.Refusal.PER_IP);
        assertThat(limits.admit("CLIENT", "10.0.0.2")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("CLIENT", "10.0.0.3")).as("the listener's 5th: the 3 opened before count").isEqualTo(ConnectionLimits.Refusal.LISTENER);
        assertThat(limits.admit("OTHER", "10.0.0.9")).isEqualTo(ConnectionLimits.Refusal.NONE);
        assertThat(limits.admit("OTHER", "10.0.0.9")).as("an override").isEqualTo(ConnectionLimits.Refusal.PER_IP);

        limits.update(new ConnectionLimits.Limits(Integer.MAX_VALUE, java.util.Map.of(), 5, java.util.Map.of()));

        assertThat(limits.admit("CLIENT", "10.0.0.1")).as("lifted, but max.connections now 5 and 5 are open").isEqualTo(ConnectionLimits.Refusal.TOTAL);
        limits.closed("CLIENT", "10.0.0.1");
        assertThat(limits.admit("CLIENT", "10.0.0.1")).isEqualTo(ConnectionLimits.Refusal.NONE);
    }
}
