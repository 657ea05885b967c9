package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ClientQuota;
import dev.kaas.proto.AlterClientQuotasCall;
import dev.kaas.proto.QuotaAlteration;
import dev.kaas.proto.QuotaEntityPart;
import dev.kaas.proto.QuotaOp;
import dev.kaas.proto.QuotaResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** AlterClientQuotas against Apache 3.7's ClientQuotaControlManager rules and messages. */
class ClientQuotaChangesTest {
    static QuotaEntityPart part(String type, String name) {
        return QuotaEntityPart.newBuilder().setType(type).setName(name == null ? "" : name).setDefaultEntity(name == null).build();
    }

    static QuotaOp set(String key, double value) {
        return QuotaOp.newBuilder().setKey(key).setValue(value).build();
    }

    static QuotaOp remove(String key) {
        return QuotaOp.newBuilder().setKey(key).setRemove(true).build();
    }

    static QuotaAlteration alter(List<QuotaEntityPart> entity, QuotaOp... ops) {
        return QuotaAlteration.newBuilder().addAllEntity(entity).addAllOps(List.of(ops)).build();
    }

    static String message(QuotaResult r) {
        return r.getErrorCode() == 0 ? "ok" : r.getErrorCode() + ": " + r.getErrorMessage();
    }

    @Test
    void validQuotasArePublishedPerEntityAndDefaultsAreTheirOwnEntities() {
        var out = ClientQuotaChanges.apply(List.of(), AlterClientQuotasCall.newBuilder()
                .addAlterations(alter(List.of(part("user", "alice")), set("producer_byte_rate", 1048576), set("request_percentage", 12.5)))
                .addAlterations(alter(List.of(part("user", null), part("client-id", null)), set("consumer_byte_rate", 2048)))
                .addAlterations(alter(List.of(part("ip", "10.0.0.1")), set("connection_creation_rate", 10)))
                .build());
        assertThat(out.results()).extracting(ClientQuotaChangesTest::message).containsExactly("ok", "ok", "ok");
        assertThat(out.changed()).isTrue();
        java.util.Map<String, String> defaults = new java.util.TreeMap<>();
        defaults.put("client-id", null);
        defaults.put("user", null);
        assertThat(out.quotas()).containsExactlyInAnyOrder(
                new ClientQuota(Map.of("user", "alice"), Map.of("producer_byte_rate", 1048576.0, "request_percentage", 12.5)),
                new ClientQuota(defaults, Map.of("consumer_byte_rate", 2048.0)),
                new ClientQuota(Map.of("ip", "10.0.0.1"), Map.of("connection_creation_rate", 10.0)));
        assertThat(out.results().get(1).getEntityList()).extracting(QuotaEntityPart::getDefaultEntity).containsExactly(true, true);

        var removed = ClientQuotaChanges.apply(out.quotas(), AlterClientQuotasCall.newBuilder()
                .addAlterations(alter(List.of(part("user", "alice")), remove("producer_byte_rate"), remove("request_percentage")))
                .addAlterations(alter(List.of(part("user", "bob")), remove("producer_byte_rate"))).build());
        assertThat(removed.results()).extracting(ClientQuotaChangesTest::message).containsExactly("ok", "ok");
        assertThat(removed.quotas()).hasSize(2).noneMatch(q -> "alice".equals(q.entity().get("user")));
    }

    @Test
    void invalidEntitiesAndValuesGetApachesMessagesAndChangeNothingOfTheirEntity() {
        var out = ClientQuotaChanges.apply(List.of(), AlterClientQuotasCall.newBuilder()
                .addAlterations(alter(List.of(), set("producer_byte_rate", 1)))
                .addAlterations(alter(List.of(part("group", "g")), set("producer_byte_rate", 1)))
                .addAlterations(alter(List.of(part("user", "")), set("producer_byte_rate", 1)))
                .addAlterations(alter(List.of(part("ip", "10.0.0.2"), part("user", "u")), set("producer_byte_rate", 1)))
                .addAlterations(alter(List.of(part("ip", "not-an-ip.example")), set("connection_creation_rate", 1)))
                .addAlterations(alter(List.of(part("user", "a")), set("connection_creation_rate", 1)))
                .addAlterations(alter(List.of(part("user", "b")), set("producer_byte_rate", 0)))
                .addAlterations(alter(List.of(part("user", "c")), set("producer_byte_rate", 1.5)))
                .addAlterations(alter(List.of(part("user", "d")), set("producer_byte_rate", 1e30)))
                .addAlterations(alter(List.of(part("ip", "10.0.0.3")), set("connection_creation_rate", 3e9)))
                .addAlterations(alter(List.of(part("user", "e")), set("request_percentage", Double.POSITIVE_INFINITY)))
                .addAlterations(alter(List.of(part("user", "f")), set("producer_byte_rate", 10), set("consumer_byte_rate", -1)))
                .addAlterations(alter(List.of(part("user", "g")), set("producer_byte_rate", 10), set("producer_byte_rate", 20)))
                .build());
        assertThat(out.results()).extracting(ClientQuotaChangesTest::message).containsExactly(
                "42: Invalid empty client quota entity",
                "42: Unhandled client quota entity type: group",
                "42: Empty user not supported",
                "42: Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
                "42: not-an-ip.example is not a valid IP or resolvable host.",
                "42: Invalid configuration key connection_creation_rate",
                "42: Quota producer_byte_rate must be greater than 0",
                "42: producer_byte_rate cannot be a fractional value.",
                "42: Proposed value for producer_byte_rate is too large for a LONG.",
                "42: Proposed value for connection_creation_rate is too large for an INT.",
                "42: Quota request_percentage must be a finite number",
                "42: Quota consumer_byte_rate must be greater than 0",
                "42: Ignoring duplicate entity ClientQuotaEntity(entries={user=g})");
        assertThat(out.changed()).isFalse();
        assertThat(out.quotas()).as("f's valid key is not applied without its invalid one").isEmpty();
    }

    @Test
    void anEntityNamedTwiceIsAnsweredOnceAndValidateOnlyChangesNothing() {
        var twice = ClientQuotaChanges.apply(List.of(), AlterClientQuotasCall.newBuilder()
                .addAlterations(alter(List.of(part("client-id", "app")), set("producer_byte_rate", 10)))
                .addAlterations(alter(List.of(part("client-id", "app")), set("producer_byte_rate", 20))).build());
        assertThat(twice.results()).extracting(ClientQuotaChangesTest::message)
                .containsExactly("42: Ignoring duplicate entity ClientQuotaEntity(entries={client-id=app})");
        assertThat(twice.quotas()).extracting(q -> q.values().get("producer_byte_rate")).containsExactly(10.0);

        var dry = ClientQuotaChanges.apply(List.of(), AlterClientQuotasCall.newBuilder().setValidateOnly(true)
                .addAlterations(alter(List.of(part("client-id", "app")), set("producer_byte_rate", 10))).build());
        assertThat(dry.results()).extracting(ClientQuotaChangesTest::message).containsExactly("ok");
        assertThat(dry.changed()).isFalse();
        assertThat(dry.quotas()).isEmpty();
    }
}
