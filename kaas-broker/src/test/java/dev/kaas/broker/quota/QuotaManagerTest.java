package dev.kaas.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ClientQuota;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Apache's client quota arithmetic and precedence on a fake clock. */
class QuotaManagerTest {
    static final KafkaPrincipal ALICE = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice");

    final FakeTime time = new FakeTime(1_800_000_000_000L);
    final AtomicLong now = time.now;
    final List<ClientQuota> quotas = new ArrayList<>();
    volatile List<ClientQuota> published = List.of();
    final QuotaManager produce = new QuotaManager("producer_byte_rate", "Produce", () -> published, time, 11, 1);

    @AfterEach
    void close() {
        produce.close();
    }

    static Map<String, String> entity(String user, String clientId) {
        Map<String, String> e = new TreeMap<>();
        if (user != null) {
            e.put(ClientQuota.USER, user.equals("<default>") ? null : user);
        }
        if (clientId != null) {
            e.put(ClientQuota.CLIENT_ID, clientId.equals("<default>") ? null : clientId);
        }
        return e;
    }

    void quota(String user, String clientId, String key, double value) {
        quotas.add(new ClientQuota(entity(user, clientId), Map.of(key, value)));
        published = List.copyOf(quotas);
    }

    @Test
    void aClientOverItsQuotaWaitsWhatBringsTheRateBackAsApacheComputesIt() {
        quota(null, "limited", "producer_byte_rate", 1000);
        // A fresh rate counts over all but one of its 11 one-second samples: 5,000 bytes are 500 B/s.
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 5_000, now.get())).isZero();
        // 20,000 more: 2,500 B/s against 1,000, so X = (O - T) / T × W = 1.5 × 10 s.
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 20_000, now.get())).isEqualTo(15_000);
        // Another client id has no quota; the limited one, 15 s later, is back within it.
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "other", 1_000_000, now.get())).isZero();
        now.addAndGet(15_000);
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 1, now.get())).isZero();
    }

    /**
     * request_percentage as Apache's ClientRequestQuotaManager: percent of one thread's time over
     * the window, the delay bounded to one window sample (quota.window.size.seconds).
     */
    @Test
    void aRequestQuotaDelayIsAtMostOneWindowSample() {
        QuotaManager request = new QuotaManager("request_percentage", "Request", () -> published, time, 11, 1);
        try {
            quota(null, "busy", "request_percentage", 1);
            // 5 thread-milliseconds (0.5) over 10 s: 0.05 % of a thread, within 1 %.
            assertThat(request.recordAndGetThrottleTimeMs(ALICE, "busy", 0.5, now.get())).isZero();
            // 2 thread-seconds more (200): 20 % against 1 %, X = 19 × 10 s, bounded to 1 s.
            assertThat(request.recordAndGetThrottleTimeMs(ALICE, "busy", 200, now.get())).isEqualTo(1_000);
            assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "busy", 1e12, now.get())).as("a byte rate quota is another key").isZero();
            assertThat(ClientQuotas.percentage(5_000_000)).as("5 ms of a thread, as Apache's NanosToPercentagePerSecond").isEqualTo(0.5);
            assertThat(ClientQuotas.percentage(2_000_000_000L)).isEqualTo(200);
        } finally {
            request.close();
        }
    }

    @Test
    void anUnrecordedFetchIsTakenBackAndTheWindowBoundsOneResponse() {
        quota(null, "limited", "producer_byte_rate", 1000);
        assertThat(produce.maxValueInQuotaWindow(ALICE, "limited")).isEqualTo(1000.0 * 10);
        assertThat(produce.maxValueInQuotaWindow(ALICE, "other")).isEqualTo(Double.MAX_VALUE);
        int delay = produce.recordAndGetThrottleTimeMs(ALICE, "limited", 30_000, now.get());
        assertThat(delay).isPositive();
        produce.unrecord(ALICE, "limited", 30_000, now.get());
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 9_000, now.get())).as("as if never recorded").isZero();
    }

    @Test
    void aChangedQuotaAppliesToTheRateAlreadyMeasured() {
        quota(null, "limited", "producer_byte_rate", 1_000_000);
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 20_000, now.get())).isZero();
        quotas.clear();
        quota(null, "limited", "producer_byte_rate", 1000);
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 1, now.get())).isEqualTo(10_001);
    }

    @Test
    void withoutAQuotaOfItsKindNothingIsRecordedOrThrottled() {
        quota(null, "limited", "consumer_byte_rate", 1);
        quotas.add(new ClientQuota(Map.of(ClientQuota.IP, "127.0.0.1"), Map.of("connection_creation_rate", 1.0)));
        published = List.copyOf(quotas);
        assertThat(produce.enabled()).isFalse();
        assertThat(produce.recordAndGetThrottleTimeMs(ALICE, "limited", 1e12, now.get())).isZero();
    }

    /** Apache's eight levels (DefaultQuotaCallback): which entity's quota applies, and whose rate it is counted in. */
    @Test
    void theMostSpecificEntityWinsInApachesOrder() {
        String[][] levels = {
            {"alice", "app"}, {"alice", "<default>"}, {"alice", null}, {"<default>", "app"},
            {"<default>", "<default>"}, {"<default>", null}, {null, "app"}, {null, "<default>"},
        };
        // Expected (user tag, client tag) of the sensor while each level is the most specific one set.
        String[][] tags = {
            {"alice", "app"}, {"alice", "app"}, {"alice", ""}, {"alice", "app"},
            {"alice", "app"}, {"alice", ""}, {"", "app"}, {"", "app"},
        };
        for (int most = 0; most < levels.length; most++) {
            Map<Map<String, String>, Double> limits = new HashMap<>();
            for (int level = most; level < levels.length; level++) {
                limits.put(entity(levels[level][0], levels[level][1]), (double) (level + 1));
            }
            QuotaManager.Resolved r = QuotaManager.resolve(limits, "alice", "app");
            assertThat(r.limit()).as("level %d", most + 1).isEqualTo(most + 1.0);
            assertThat(new String[] {r.user(), r.clientId()}).as("level %d sensor", most + 1).containsExactly(tags[most]);
        }
        assertThat(QuotaManager.resolve(Map.of(entity("bob", null), 5.0), "alice", "app").limit()).isNull();
    }

    @Test
    void clientsWithoutAQuotaGetNoSensorAndPastTheBoundNewOnesShareOne() {
        quota(null, "<default>", "producer_byte_rate", 1000);
        QuotaManager bounded = new QuotaManager("producer_byte_rate", "Produce", () -> published, time, 11, 1, 4);
        try {
            int base = bounded.metricCount();
            // Tags without a user or a client id have no quota in Apache's quotaLimit: nothing to measure.
            KafkaPrincipal anonymous = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "");
            assertThat(bounded.recordAndGetThrottleTimeMs(anonymous, "", 1e9, now.get())).isZero();
            assertThat(bounded.metricCount()).isEqualTo(base);
            for (int i = 0; i < 50; i++) {
                bounded.recordAndGetThrottleTimeMs(ALICE, "x".repeat(1000) + i, 100, now.get());
            }
            assertThat(bounded.metricCount()).as("at most the bound, and one shared overflow sensor").isLessThanOrEqualTo(5);
            // The shared sensor still holds its clients to the quota together: 50 x 100 + 20,000 over 10 s.
            assertThat(bounded.recordAndGetThrottleTimeMs(ALICE, "another", 20_000, now.get())).isPositive();
        } finally {
            bounded.close();
        }
    }
}
