package dev.kaas.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ClientQuota;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** connection_creation_rate of ip entities, as Apache's ConnectionQuotas, on a clock of the test's own. */
class IpConnectionRatesTest {
    final FakeTime time = new FakeTime(1_000_000);
    final AtomicLong now = time.now;
    final AtomicReference<List<ClientQuota>> quotas = new AtomicReference<>(List.of());
    final IpConnectionRates rates = new IpConnectionRates(quotas::get, time, 2, 1);

    static ClientQuota ip(String address, double rate) {
        Map<String, String> entity = new HashMap<>();
        entity.put(ClientQuota.IP, address);
        return new ClientQuota(entity, Map.of(IpConnectionRates.KEY, rate));
    }

    /** How many connections in a row are accepted before the first one held back, and that one's delay. */
    long[] burst(String address) {
        for (int accepted = 0; accepted < 1000; accepted++) {
            long throttle = rates.throttleMs(address);
            if (throttle > 0) {
                return new long[] {accepted, throttle};
            }
        }
        return new long[] {1000, 0};
    }

    @Test
    void anAddressPastItsRateIsHeldBackAtMostOneWindowAndAcceptedAgainLater() {
        quotas.set(List.of(ip("127.0.0.1", 5)));
        // Two samples of 1 s: a fresh rate is measured over at least one second, so five pass at once.
        long[] first = burst("127.0.0.1");
        assertThat(first[0]).isEqualTo(5);
        assertThat(first[1]).as("(6 - 5) / 5 of the 1 s window").isEqualTo(200);
        assertThat(rates.throttleMs("127.0.0.1")).as("a held-back connection is not counted: still 6/s, not 7/s").isEqualTo(200);
        for (int i = 0; i < 20; i++) {
            rates.throttleMs("127.0.0.1");
        }
        now.addAndGet(100);
        assertThat(rates.throttleMs("127.0.0.1")).as("however many were held back").isBetween(1L, 200L);
        now.addAndGet(2_000);
        assertThat(rates.throttleMs("127.0.0.1")).isZero();
        assertThat(rates.throttleMs("10.0.0.1")).as("an address without a quota").isZero();
    }

    @Test
    void theDefaultIpEntityAppliesToEveryAddressWithoutItsOwnEachMeasuredApart() {
        quotas.set(List.of(ip(null, 3), ip("10.0.0.2", 100)));
        assertThat(burst("10.0.0.1")[0]).isEqualTo(3);
        assertThat(burst("10.0.0.3")[0]).as("measured apart").isEqualTo(3);
        assertThat(burst("10.0.0.2")[0]).as("its own quota").isEqualTo(100);
        assertThat(burst("0:0:0:0:0:0:0:1")[0]).isEqualTo(3);
        assertThat(rates.throttleMs("::1")).as("one address, two spellings").isPositive();
    }

    @Test
    void theDelayIsAtMostOneQuotaWindow() {
        // 0.2 connections/s (below the integers AlterClientQuotas accepts, to reach the bound) measured over 1 s: the first is
        // 1/s, (1 - 0.2) / 0.2 x 1 s = 4 s over; Apache bounds it by one window.
        quotas.set(List.of(ip("127.0.0.1", 0.2)));
        assertThat(rates.throttleMs("127.0.0.1")).isEqualTo(1000);
    }

    @Test
    void noQuotaOrAnotherKeyMeansNoLimit() {
        assertThat(burst("127.0.0.1")[0]).isEqualTo(1000);
        quotas.set(List.of(new ClientQuota(Map.of(ClientQuota.CLIENT_ID, "app"), Map.of("producer_byte_rate", 1.0))));
        assertThat(burst("127.0.0.1")[0]).isEqualTo(1000);
    }
}
