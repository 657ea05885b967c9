package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ClientQuota;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData.ComponentData;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.junit.jupiter.api.Test;

/** DescribeClientQuotas filters as Apache's ClientQuotasImage.describe. */
class DescribeClientQuotasHandlerTest {
    static Map<String, String> entity(String... typeThenName) {
        Map<String, String> e = new TreeMap<>();
        for (int i = 0; i < typeThenName.length; i += 2) {
            e.put(typeThenName[i], typeThenName[i + 1]);
        }
        return e;
    }

    static final List<ClientQuota> QUOTAS = List.of(
            new ClientQuota(entity("user", "alice"), Map.of("producer_byte_rate", 100.0)),
            new ClientQuota(entity("user", null), Map.of("producer_byte_rate", 200.0)),
            new ClientQuota(entity("user", "alice", "client-id", "app"), Map.of("consumer_byte_rate", 300.0)),
            new ClientQuota(entity("client-id", null), Map.of("request_percentage", 50.0)),
            new ClientQuota(entity("ip", "10.0.0.1"), Map.of("connection_creation_rate", 5.0)));

    static ComponentData c(String type, byte match, String name) {
        return new ComponentData().setEntityType(type).setMatchType(match).setMatch(name);
    }

    static List<String> describe(boolean strict, ComponentData... components) {
        DescribeClientQuotasResponseData r = DescribeClientQuotasHandler.describe(
                new DescribeClientQuotasRequestData().setStrict(strict).setComponents(List.of(components)), QUOTAS);
        if (r.errorCode() != 0) {
            return List.of(r.errorCode() + ": " + r.errorMessage() + (r.entries() == null ? " (no entries)" : ""));
        }
        return r.entries().stream().map(e -> e.entity().stream().map(x -> x.entityType() + "=" + x.entityName()).toList()
                + " " + e.values().stream().map(v -> v.key() + "=" + v.value()).toList()).toList();
    }

    @Test
    void componentsMatchExactlyTheDefaultOrAnyEntityOfTheirType() {
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_EXACT, "alice"))).containsExactly(
                "[user=alice] [producer_byte_rate=100.0]", "[client-id=app, user=alice] [consumer_byte_rate=300.0]");
        assertThat(describe(true, c("user", DescribeClientQuotasRequest.MATCH_TYPE_EXACT, "alice")))
                .containsExactly("[user=alice] [producer_byte_rate=100.0]");
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT, null)))
                .containsExactly("[user=null] [producer_byte_rate=200.0]");
        assertThat(describe(true, c("client-id", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("[client-id=null] [request_percentage=50.0]");
        assertThat(describe(false, c("client-id", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null))).hasSize(2);
        assertThat(describe(false)).as("no component: everything").hasSize(5);
        assertThat(describe(true)).as("strict, no component: entities of no type").isEmpty();
        assertThat(describe(false, c("ip", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("[ip=10.0.0.1] [connection_creation_rate=5.0]");
    }

    @Test
    void aBadFilterIsRefusedWholeWithApachesMessage() {
        assertThat(describe(false, c("", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("42: Invalid empty entity type. (no entries)");
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT, null), c("user", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("42: Entity type user cannot appear more than once in the filter. (no entries)");
        assertThat(describe(false, c("group", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("35: Unsupported entity type group (no entries)");
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_EXACT, null)))
                .containsExactly("42: Request specified MATCH_TYPE_EXACT, but set match string to null. (no entries)");
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT, "x")))
                .containsExactly("42: Request specified MATCH_TYPE_DEFAULT, but also specified a match string. (no entries)");
        assertThat(describe(false, c("user", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, "x")))
                .containsExactly("42: Request specified MATCH_TYPE_SPECIFIED, but also specified a match string. (no entries)");
        assertThat(describe(false, c("user", (byte) 7, null))).containsExactly("42: Unknown match type 7 (no entries)");
        assertThat(describe(false, c("ip", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null), c("user", DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED, null)))
                .containsExactly("42: Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component. (no entries)");
    }
}
