package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.quota.FakeTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * max.connection.creation.rate, broker-wide and per listener, as Apache's ConnectionQuotas pauses
 * a listener's acceptor, on a fake clock and timer.
 */
class ConnectionCreationRatesTest {
    final FakeTime time = new FakeTime(1_800_000_000_000L);
    final AtomicLong now = time.now;

    record Due(long atMs, long order, Runnable task) {
    }

    final PriorityQueue<Due> timers = new PriorityQueue<>((a, b) -> a.atMs() != b.atMs() ? Long.compare(a.atMs(), b.atMs())
            : Long.compare(a.order(), b.order()));
    long order;
    /** When each connection was served, by its number. */
    final List<Long> served = new ArrayList<>();

    ConnectionCreationRates rates(int broker, Map<String, Integer> listeners, int samples) {
        return new ConnectionCreationRates(broker, listeners, time, (ms, task) -> timers.add(new Due(now.get() + ms, order++, task)),
                samples, 1);
    }

    boolean connect(ConnectionCreationRates rates, String listener) {
        int n = served.size();
        served.add(null);
        return rates.offer(listener, () -> served.set(n, now.get()));
    }

    /** Runs the timers due until {@code untilMs}, moving the clock to each. */
    void advanceTo(long untilMs) {
        while (!timers.isEmpty() && timers.peek().atMs() <= untilMs) {
            Due d = timers.poll();
            now.set(d.atMs());
            d.task().run();
        }
        now.set(untilMs);
    }

    /** 11 samples of 1 s: a fresh rate is measured over 10 s, so 20 connections at 2/s pass before one waits. */
    @Test
    void pastTheListenersRateTheAcceptorPausesAndTakesTheNextOnlyThen() {
        ConnectionCreationRates rates = rates(Integer.MAX_VALUE, Map.of("client", 2), 11);
        long t = now.get();
        for (int i = 0; i < 23; i++) {
            assertThat(connect(rates, "CLIENT")).isTrue();
        }
        assertThat(served.subList(0, 20)).allSatisfy(at -> assertThat(at).isEqualTo(t));
        assertThat(served.subList(20, 23)).as("the 21st is past the rate: it and those behind it wait").containsOnlyNulls();

        advanceTo(t + 499);
        assertThat(served.get(20)).isNull();
        advanceTo(t + 500);
        assertThat(served.get(20)).as("(2.1 - 2) / 2 × 10 s").isEqualTo(t + 500);
        assertThat(served.get(21)).as("recorded only once the acceptor resumed, and past the rate in turn").isNull();
        advanceTo(t + 10_000);
        assertThat(served.get(22)).isNotNull();
        assertThat(served.get(22) - served.get(21)).isBetween(0L, 1_000L);
        assertThat(served.get(21) - served.get(20)).isBetween(1L, 1_000L);

        assertThat(connect(rates, "other")).as("another listener has no rate").isTrue();
        assertThat(served.get(23)).isEqualTo(now.get());
        assertThat(rates.limits("other")).isFalse();
    }

    @Test
    void aFullBacklogRefusesAConnectionWithoutRecordingIt() {
        ConnectionCreationRates rates = rates(Integer.MAX_VALUE, Map.of("client", 1), 2);
        connect(rates, "client");
        for (int i = 0; i < ConnectionCreationRates.BACKLOG; i++) {
            assertThat(connect(rates, "client")).isTrue();
        }
        assertThat(connect(rates, "client")).as("the backlog is full").isFalse();
        assertThat(timers).as("one paused acceptor, whatever the flood").hasSize(1);
    }

    @Test
    void theBrokersRateCountsEveryListenerAndTheLongerDelayWins() {
        ConnectionCreationRates rates = rates(2, Map.of("internal", 100), 2);
        long t = now.get();
        // Two samples: a fresh rate is measured over one second.
        connect(rates, "client");
        connect(rates, "internal");
        connect(rates, "client");
        assertThat(served).containsExactly(t, t, null);
        advanceTo(t + 500);
        assertThat(served.get(2)).as("3 over 1 s against 2: (3 - 2) / 2 × 1 s").isEqualTo(t + 500);
        connect(rates, "internal");
        assertThat(served.get(3)).as("the broker's rate holds the other listener too").isNull();
        assertThat(rates.limits("anything")).isTrue();
    }

    @Test
    void aConnectionItsAddressRefusedIsTakenBack() {
        ConnectionCreationRates rates = rates(Integer.MAX_VALUE, Map.of("client", 2), 2);
        connect(rates, "client");
        rates.unrecord("client");
        connect(rates, "client");
        connect(rates, "client");
        assertThat(served).as("two counted, the third within 2/s").doesNotContainNull();
        connect(rates, "client");
        assertThat(served.get(3)).isNull();
    }

    @Test
    void withoutRatesNothingIsHeld() {
        ConnectionCreationRates rates = rates(Integer.MAX_VALUE, Map.of(), 11);
        for (int i = 0; i < 1000; i++) {
            connect(rates, "client");
        }
        assertThat(served).doesNotContainNull();
        assertThat(rates.limits("client")).isFalse();
    }

    /**
     * Apache's dynamic max.connection.creation.rate: a rate set at run time paces the connections
     * from then on, and lifted, lets them through at once (the paused acceptor resumes when its
     * delay ends, at most one sample).
     */
    @Test
    void aRateSetOrLiftedAtRunTimePacesTheConnectionsFromThenOn() {
        ConnectionCreationRates rates = rates(Integer.MAX_VALUE, Map.of(), 2);
        long t = now.get();
        assertThat(rates.limits("CLIENT")).isFalse();

        rates.update(Integer.MAX_VALUE, Map.of("client", 1));

        assertThat(rates.limits("CLIENT")).isTrue();
        assertThat(rates.limits("OTHER")).isFalse();
        for (int i = 0; i < 4; i++) {
            connect(rates, "CLIENT");
        }
        assertThat(served.stream().filter(java.util.Objects::nonNull).count()).as("1/s over 2 samples of 1 s").isLessThan(4);
        assertThat(served.get(0)).isEqualTo(t);

        rates.update(Integer.MAX_VALUE, Map.of());
        advanceTo(t + 1_000);

        assertThat(served).as("lifted: every waiting connection served when the pause ends").allSatisfy(at -> assertThat(at).isNotNull()
                .isLessThanOrEqualTo(t + 1_000));
        assertThat(rates.limits("CLIENT")).isFalse();
        assertThat(connect(rates, "CLIENT")).isTrue();
        assertThat(served.get(4)).isEqualTo(t + 1_000);

        rates.update(1, Map.of());
        connect(rates, "CLIENT");
        connect(rates, "CLIENT");
        connect(rates, "CLIENT");
        assertThat(served.subList(5, 8)).as("the broker-wide rate, set now").containsNull();
    }
}
