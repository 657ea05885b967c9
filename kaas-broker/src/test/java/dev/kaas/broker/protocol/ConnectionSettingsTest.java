package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.config.DynamicConfigLayers;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The connection limits in force: this broker's dynamic value, the cluster's, the static one, as Apache layers them. */
class ConnectionSettingsTest {
    static final ConnectionSettings STATIC = new ConnectionSettings(100, "", 1000, Integer.MAX_VALUE, Map.of("CLIENT", 50), Map.of());

    @Test
    void thisBrokersValueOverTheClustersOverTheStaticOne() {
        DynamicConfigLayers layers = new DynamicConfigLayers(
                Map.of("max.connections.per.ip", "10", "max.connections", "20", "listener.name.client.max.connection.creation.rate", "5"),
                Map.of("max.connections.per.ip", "3", "listener.name.client.max.connections", "7"));

        ConnectionSettings s = STATIC.withDynamic(layers, List.of("CLIENT", "INTERNAL"));

        assertThat(s).isEqualTo(new ConnectionSettings(3, "", 20, Integer.MAX_VALUE, Map.of("CLIENT", 7), Map.of("CLIENT", 5)));
        assertThat(STATIC.withDynamic(new DynamicConfigLayers(Map.of(), Map.of()), List.of("CLIENT"))).as("nothing dynamic").isEqualTo(STATIC);
    }

    @Test
    void aDynamicValueThatDoesNotPassIsLeftOutForTheLayerBelow() {
        DynamicConfigLayers layers = new DynamicConfigLayers(Map.of("max.connections.per.ip", "10", "max.connections.per.ip.overrides", "10.0.0.1:2"),
                Map.of("max.connections.per.ip", "-1", "max.connections", "many", "max.connections.per.ip.overrides", "bad_host!:1"));

        ConnectionSettings s = STATIC.withDynamic(layers, List.of("CLIENT"));

        assertThat(s.maxPerIp()).isEqualTo(10);
        assertThat(s.maxTotal()).isEqualTo(1000);
        assertThat(s.overrides()).isEqualTo("10.0.0.1:2");
        assertThat(s.limits().overrides()).isEqualTo(Map.of("10.0.0.1", 2));
    }

    @Test
    void limitsThatCannotBeCountedAreRefusedWithApachesMessage() {
        ConnectionSettings zeroWithoutOverrides = STATIC.withDynamic(new DynamicConfigLayers(Map.of("max.connections.per.ip", "0"), Map.of()),
                List.of("CLIENT"));

        assertThatThrownBy(zeroWithoutOverrides::limits).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
    }
}
