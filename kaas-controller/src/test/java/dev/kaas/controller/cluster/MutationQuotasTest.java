package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ClientQuota;
import dev.kaas.proto.MutationClient;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** controller_mutation_rate on a token bucket (Apache's ControllerMutationQuotaManager), on a fake clock. */
class MutationQuotasTest {
    final AtomicLong clock = new AtomicLong(1_000_000);
    final AtomicReference<List<ClientQuota>> quotas = new AtomicReference<>(List.of());
    final MutationQuotas manager = new MutationQuotas(quotas::get, clock::get, 11, 1);

    static ClientQuota quota(String user, String clientId, double rate) {
        Map<String, String> entity = new HashMap<>();
        if (user != null || clientId == null) {
            entity.put(ClientQuota.USER, user);
        }
        if (clientId != null) {
            entity.put(ClientQuota.CLIENT_ID, clientId);
        }
        return new ClientQuota(entity, Map.of(MutationQuotas.KEY, rate));
    }

    static MutationClient client(String user, String clientId, boolean strict) {
        return MutationClient.newBuilder().setUser(user).setClientId(clientId).setStrict(strict).build();
    }

    @Test
    void aStrictClientSpendsItsBurstThenIsRefusedUntilTheBucketIsBackAtZero() {
        quotas.set(List.of(quota(null, "admin-app", 2.0)));
        // Burst: 2 partitions/s × 11 samples × 1 s = 22 tokens.
        MutationQuotas.Recorder r = manager.forClient(client("alice", "admin-app", true));
        assertThat(r.record(10)).isTrue();
        assertThat(r.record(10)).isTrue();
        assertThat(r.record(10)).as("2 tokens left: allowed, and the bucket goes to -8").isTrue();
        assertThat(r.throttleTimeMs()).isZero();
        assertThat(r.record(1)).as("below zero: refused, nothing spent").isFalse();
        assertThat(r.throttleTimeMs()).as("8 tokens at 2/s").isEqualTo(4000);

        clock.addAndGet(1000);
        assertThat(r.throttleTimeMs()).isEqualTo(3000);
        MutationQuotas.Recorder next = manager.forClient(client("alice", "admin-app", true));
        assertThat(next.record(1)).as("a later request of the same client shares the bucket").isFalse();
        assertThat(next.throttleTimeMs()).isEqualTo(3000);
        clock.addAndGet(3000);
        assertThat(manager.forClient(client("alice", "admin-app", true)).record(5)).as("back at zero").isTrue();
    }

    @Test
    void anOlderRequestIsServedPastTheQuotaAndOnlyDelayed() {
        quotas.set(List.of(quota(null, "admin-app", 2.0)));
        MutationQuotas.Recorder r = manager.forClient(client("alice", "admin-app", false));
        assertThat(r.record(30)).isTrue();
        assertThat(r.record(30)).isTrue();
        assertThat(r.throttleTimeMs()).as("22 - 60 = -38 tokens at 2/s").isEqualTo(19_000);
    }

    @Test
    void clientsWithoutAQuotaOrWithoutAClientAreNotCounted() {
        assertThat(manager.forClient(client("alice", "app", true))).isSameAs(MutationQuotas.UNBOUNDED);
        quotas.set(List.of(quota("bob", null, 1.0)));
        assertThat(manager.forClient(client("alice", "app", true))).isSameAs(MutationQuotas.UNBOUNDED);
        assertThat(manager.forClient(null)).isSameAs(MutationQuotas.UNBOUNDED);
        MutationQuotas.Recorder bob = manager.forClient(client("bob", "any", true));
        assertThat(bob).isNotSameAs(MutationQuotas.UNBOUNDED);
        assertThat(bob.record(12)).isTrue();
        assertThat(bob.record(1)).as("11 tokens of burst").isFalse();
    }

    @Test
    void usersAndClientIdsShareBucketsAsTheirEntityResolves() {
        // The default user quota: each user its own bucket, shared by all of that user's client ids.
        quotas.set(List.of(quota(null, null, 1.0)));
        assertThat(manager.forClient(client("alice", "a", true)).record(12)).isTrue();
        assertThat(manager.forClient(client("alice", "b", true)).record(1)).as("alice's bucket, another client id").isFalse();
        assertThat(manager.forClient(client("bob", "a", true)).record(1)).as("bob's own bucket").isTrue();
    }

    @Test
    void aChangedQuotaAppliesToTheBucketAsItIs() {
        quotas.set(List.of(quota(null, "app", 1.0)));
        MutationQuotas.Recorder r = manager.forClient(client("alice", "app", true));
        assertThat(r.record(21)).isTrue();
        assertThat(r.record(1)).isFalse();
        quotas.set(List.of(quota(null, "app", 100.0)));
        MutationQuotas.Recorder raised = manager.forClient(client("alice", "app", true));
        clock.addAndGet(100);
        assertThat(raised.record(1)).as("-10 + 100/s x 0.1 s = 0").isTrue();
    }
}
