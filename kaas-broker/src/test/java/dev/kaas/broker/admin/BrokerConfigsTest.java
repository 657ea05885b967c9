package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.common.config.TopicDefaults;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;
import org.junit.jupiter.api.Test;

/** DescribeConfigs BROKER: the security settings and the connection limits, as Apache describes them. */
class BrokerConfigsTest {
    static Map<String, BrokerConfigs.Entry> entries(Map<String, String> clusterDefault, Map<String, String> dynamic) {
        Map<String, BrokerConfigs.Entry> out = new HashMap<>();
        BrokerConfigs.of(TestBrokerConfig.defaults(), TopicDefaults.of(Map.of()), clusterDefault, dynamic).forEach(e -> out.put(e.name(), e));
        return out;
    }

    @Test
    void theSecuritySettingsAreListedAndPasswordsNeverShown() {
        System.setProperty("ssl.keystore.password", "do-not-show");
        System.setProperty("ssl.keystore.location", "/etc/kaas/broker.p12");
        try {
            Map<String, BrokerConfigs.Entry> e = entries(Map.of(), Map.of());

            assertThat(e.get("ssl.keystore.password").sensitive()).isTrue();
            assertThat(e.get("ssl.keystore.password").value()).isNull();
            assertThat(e.get("ssl.keystore.password").synonyms()).allSatisfy(s -> assertThat(s.value()).isNull());
            assertThat(e.get("ssl.keystore.password").source()).isEqualTo(ConfigSource.STATIC_BROKER_CONFIG);
            assertThat(e.get("ssl.keystore.password").type()).isEqualTo(ConfigType.PASSWORD);
            assertThat(e.get("ssl.key.password").sensitive()).isTrue();
            assertThat(e.get("ssl.keystore.location").value()).isEqualTo("/etc/kaas/broker.p12");
            assertThat(e.get("ssl.keystore.location").sensitive()).isFalse();
            assertThat(e.get("ssl.client.auth").value()).isEqualTo("none");
            assertThat(e.get("ssl.client.auth").source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
            assertThat(e.get("sasl.enabled.mechanisms").value()).isEqualTo("GSSAPI");
            assertThat(e.get("connections.max.reauth.ms").value()).isEqualTo("0");
            assertThat(e.get("sasl.oauthbearer.jwks.endpoint.url").value()).isNull();
            assertThat(e).containsKey("listener.security.protocol.map");
            assertThat(e.values()).filteredOn(x -> x.value() != null).noneSatisfy(x -> assertThat(x.value()).contains("do-not-show"));
        } finally {
            System.clearProperty("ssl.keystore.password");
            System.clearProperty("ssl.keystore.location");
        }
    }

    @Test
    void customPropertiesAreListedFromBothLayersWithTheirValuesHidden() {
        Map<String, BrokerConfigs.Entry> e = entries(Map.of("my.reporter.endpoint", "http://x", "my.reporter.token", "cluster"),
                Map.of("my.reporter.token", "mine"));

        BrokerConfigs.Entry token = e.get("my.reporter.token");
        assertThat(token.sensitive()).isTrue();
        assertThat(token.value()).isNull();
        assertThat(token.type()).isEqualTo(ConfigType.UNKNOWN);
        assertThat(token.readOnly()).as("not one of Apache's dynamic names").isTrue();
        assertThat(token.source()).isEqualTo(ConfigSource.DYNAMIC_BROKER_CONFIG);
        assertThat(token.synonyms()).extracting(TopicConfigEntries.Synonym::source)
                .containsExactly(ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(token.synonyms()).allSatisfy(y -> assertThat(y.value()).isNull());
        assertThat(e.get("my.reporter.endpoint").source()).isEqualTo(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(e).as("a known name kaas does not describe is not made custom").doesNotContainKey("num.io.threads");
        assertThat(BrokerConfigs.of(TestBrokerConfig.defaults(), TopicDefaults.of(Map.of()), Map.of("super.users", "User:x"), Map.of()))
                .as("a name kaas describes already is described once").filteredOn(x -> x.name().equals("super.users")).hasSize(1);
    }

    @Test
    void theConnectionLimitsAreWritableWithApachesChain() {
        Map<String, BrokerConfigs.Entry> e = entries(Map.of("max.connections.per.ip", "50", "listener.name.plaintext.max.connections", "7"),
                Map.of("max.connections.per.ip", "20"));

        BrokerConfigs.Entry perIp = e.get("max.connections.per.ip");
        assertThat(perIp.value()).isEqualTo("20");
        assertThat(perIp.readOnly()).isFalse();
        assertThat(perIp.synonyms()).extracting(TopicConfigEntries.Synonym::source).containsExactly(ConfigSource.DYNAMIC_BROKER_CONFIG,
                ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG);
        assertThat(perIp.synonyms()).last().extracting(TopicConfigEntries.Synonym::value).isEqualTo(String.valueOf(Integer.MAX_VALUE));
        assertThat(e.get("max.connections").source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
        assertThat(e.get("max.connections").readOnly()).isFalse();
        BrokerConfigs.Entry listener = e.get("listener.name.plaintext.max.connections");
        assertThat(listener.value()).isEqualTo("7");
        assertThat(listener.source()).isEqualTo(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(listener.readOnly()).as("not one of Apache's dynamic names, though it can be set").isTrue();
        assertThat(e).as("a listener's own limit, unset, is not described").doesNotContainKey("listener.name.plaintext.max.connection.creation.rate");
    }
}
