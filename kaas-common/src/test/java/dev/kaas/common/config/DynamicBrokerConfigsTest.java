package dev.kaas.common.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class DynamicBrokerConfigsTest {
    @Test
    void thePrimaryTopicDefaultNamesAndTheThrottlesAreDynamicAsInApache() {
        assertThat(DynamicBrokerConfigs.NAMES).contains("log.retention.ms", "log.segment.bytes", "message.max.bytes", "log.cleanup.policy",
                "log.roll.ms", "log.flush.interval.messages", "min.insync.replicas", "leader.replication.throttled.rate",
                "log.cleaner.threads", "log.cleaner.io.max.bytes.per.second", "log.cleaner.dedupe.buffer.size",
                "log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor", "log.cleaner.backoff.ms");
        assertThat(DynamicBrokerConfigs.NAMES).as("secondary names, the message format and what kaas sizes at start-up")
                .doesNotContain("log.retention.hours", "log.retention.minutes", "log.roll.hours", "log.message.format.version",
                        "log.cleaner.enable", "num.io.threads", "auto.create.topics.enable");
    }

    @Test
    void aNameApacheDoesNotKnowIsACustomPropertyAndKept() {
        assertThat(DynamicBrokerConfigs.APACHE_NAMES).as("Apache 3.7.2's KafkaConfig.configNames").hasSize(295)
                .contains("num.io.threads", "log.retention.hours", "ssl.keystore.location", "listeners");
        assertThat(DynamicBrokerConfigs.custom("metric.reporters.custom.endpoint")).isTrue();
        assertThat(DynamicBrokerConfigs.kept("metric.reporters.custom.endpoint")).isTrue();
        assertThat(DynamicBrokerConfigs.custom("num.io.threads")).as("known to Apache, not dynamic in kaas").isFalse();
        assertThat(DynamicBrokerConfigs.kept("num.io.threads")).isFalse();
        assertThat(DynamicBrokerConfigs.custom("listener.name.internal.ssl.keystore.location"))
                .as("Apache reads a listener-prefixed name as its base name's value").isFalse();
        assertThat(DynamicBrokerConfigs.custom("listener.name")).as("no prefix without the listener's name and a dot").isTrue();
        assertThat(DynamicBrokerConfigs.NAMES).as("what kaas changes at run time is Apache's (the throttles are quota settings)")
                .allSatisfy(n -> assertThat(DynamicBrokerConfigs.APACHE_NAMES.contains(n) || DynamicBrokerConfigs.THROTTLES.contains(n)).as(n).isTrue());
        assertThat(DynamicBrokerConfigs.custom("leader.replication.throttled.rate")).isFalse();
    }

    @Test
    void namesThatAreNotKeptAreRefusedWithApachesMessage() {
        assertThat(DynamicBrokerConfigs.refusal(java.util.List.of("log.retention.ms", "my.custom.key"))).isNull();
        assertThat(DynamicBrokerConfigs.refusal(java.util.List.of("num.io.threads", "my.custom.key", "log.retention.hours", "num.io.threads")))
                .isEqualTo("Cannot update these configs dynamically: Set(log.retention.hours, num.io.threads)");
        assertThat(DynamicBrokerConfigs.refusal(java.util.List.of("ssl.keystore.location", "ssl.truststore.location")))
                .isEqualTo("These security configs can be dynamically updated only per-listener using the listener prefix: "
                        + "Set(ssl.keystore.location, ssl.truststore.location)");
        assertThat(DynamicBrokerConfigs.refusal(java.util.List.of("ssl.keystore.location", "num.io.threads")))
                .as("Apache checks its non-dynamic names first, and names only those")
                .isEqualTo("Cannot update these configs dynamically: Set(num.io.threads)");
    }

    @Test
    void customPropertiesAreBoundedPerResource() {
        Map<String, String> many = new java.util.HashMap<>();
        for (int i = 0; i < DynamicBrokerConfigs.MAX_CUSTOM; i++) {
            many.put("custom." + i, "v");
        }
        assertThat(DynamicBrokerConfigs.customBound(Map.of(), many)).isNull();
        Map<String, String> more = new java.util.HashMap<>(many);
        more.put("custom.one-more", "v");
        assertThat(DynamicBrokerConfigs.customBound(many, more)).startsWith("Too many custom broker configs");
        assertThat(DynamicBrokerConfigs.customBound(Map.of(), Map.of("custom.big", "x".repeat(DynamicBrokerConfigs.MAX_CUSTOM_CHARS))))
                .startsWith("Too many custom broker configs");
        Map<String, String> fewer = new java.util.HashMap<>(more);
        fewer.remove("custom.0");
        assertThat(DynamicBrokerConfigs.customBound(more, fewer)).as("a resource already past the bound can shrink").isNull();
        Map<String, String> other = new java.util.HashMap<>(more);
        other.put("log.retention.ms", "1000");
        assertThat(DynamicBrokerConfigs.customBound(more, other)).as("and change other keys").isNull();
    }

    @Test
    void aConfigurationIsCheckedWholeWithApachesMessages() {
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.retention.ms", "1000", "leader.replication.throttled.rate", "10"))).isNull();
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.retention.ms", "soon")))
                .isEqualTo("Invalid value soon for configuration log.retention.ms: Not a number of type LONG");
        assertThat(DynamicBrokerConfigs.validate(Map.of("follower.replication.throttled.rate", "-1")))
                .isEqualTo("Invalid value -1 for configuration follower.replication.throttled.rate: Value must be at least 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("message.max.bytes", "-1")))
                .isEqualTo("Invalid value -1 for configuration message.max.bytes: Value must be at least 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.cleaner.threads", "2", "log.cleaner.io.max.bytes.per.second", "1e6"))).isNull();
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.cleaner.threads", "-1")))
                .isEqualTo("Invalid value -1 for configuration log.cleaner.threads: Value must be at least 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.cleaner.io.max.bytes.per.second", "fast")))
                .isEqualTo("Invalid value fast for configuration log.cleaner.io.max.bytes.per.second: Not a number of type DOUBLE");
        assertThat(DynamicBrokerConfigs.validate(Map.of("log.retention.ms", "0")))
                .isEqualTo("log.retention.ms must be unlimited (-1) or, equal or greater than 1");
    }

    @Test
    void theConnectionLimitsAreDynamicAndCheckedAsApachesDefinitions() {
        assertThat(DynamicBrokerConfigs.NAMES).contains("max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
                "max.connection.creation.rate");
        assertThat(DynamicBrokerConfigs.dynamic("listener.name.client.max.connections")).isTrue();
        assertThat(DynamicBrokerConfigs.dynamic("listener.name.client.max.connection.creation.rate")).isTrue();
        assertThat(DynamicBrokerConfigs.dynamic("listener.name.client.ssl.keystore.location")).as("not built dynamic").isFalse();
        assertThat(DynamicBrokerConfigs.dynamic("listener.name.CLIENT.max.connections")).as("Apache's prefix is lower-case").isFalse();

        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections", "100", "max.connections.per.ip.overrides", "10.0.0.1:5, broker-1:0",
                "listener.name.client.max.connection.creation.rate", "10"))).isNull();
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip", "-1")))
                .isEqualTo("Invalid value -1 for configuration max.connections.per.ip: Value must be at least 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connection.creation.rate", "fast")))
                .isEqualTo("Invalid value fast for configuration max.connection.creation.rate: Not a number of type INT");
        // A listener's own limit is typed and ranged under its base name (Apache's validateConfigTypes strips the prefix).
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.client.max.connections", "-2")))
                .isEqualTo("Invalid value -2 for configuration max.connections: Value must be at least 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.client.max.connection.creation.rate", "many")))
                .isEqualTo("Invalid value many for configuration max.connection.creation.rate: Not a number of type INT");
        // Zero passes the types and fails in Apache's listeners, whose refusal DynamicBrokerConfig wraps as a name and a value.
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections", "0"))).isEqualTo("Invalid value "
                + "org.apache.kafka.common.config.ConfigException: Invalid max.connections 0 for configuration Invalid dynamic configuration");
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.client.max.connection.creation.rate", "0"))).isEqualTo("Invalid value "
                + "org.apache.kafka.common.config.ConfigException: Invalid max.connection.creation.rate 0 for configuration Invalid dynamic configuration");
        assertThat(DynamicBrokerConfigs.validate(new java.util.TreeMap<>(Map.of("max.connections", "0", "max.connections.per.ip", "0"))))
                .as("the listeners' check comes last").startsWith("requirement failed:");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip", "0")))
                .isEqualTo("requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip", "0", "max.connections.per.ip.overrides", "10.0.0.1:5"))).isNull();
        // Apache 3.7's KafkaConfig: CoreUtils.parseCsvMap's substring, wrapped by getMap; then each count's toInt, not wrapped.
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip.overrides", "10.0.0.1")))
                .isEqualTo("Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 8");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip.overrides", "10.0.0.1:5, broker-1:many")))
                .isEqualTo("For input string: \"many\"");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip.overrides", "10.0.0.1:")))
                .isEqualTo("For input string: \"\"");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip.overrides", "10.0.0.1:-1"))).isNull();
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip", "0", "max.connections.per.ip.overrides", ",")))
                .as("the rule reads the parsed overrides, and ',' has none").startsWith("requirement failed:");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip", "0", "max.connections.per.ip.overrides", "  ")))
                .as("a blank value is none").startsWith("requirement failed:");
        // Apache's order: every type first, then the overrides' parse, the per-ip rule and the hosts, then the listeners.
        assertThat(DynamicBrokerConfigs.validate(new java.util.TreeMap<>(Map.of("max.connections.per.ip.overrides", "10.0.0.1",
                "replica.alter.log.dirs.io.max.bytes.per.second", "abc"))))
                .isEqualTo("Invalid value abc for configuration replica.alter.log.dirs.io.max.bytes.per.second: Not a number of type LONG");
        assertThat(DynamicBrokerConfigs.validate(new java.util.TreeMap<>(Map.of("max.connection.creation.rate", "0", "max.connections", "0"))))
                .as("max.connections before the rate, whatever the keys' order").contains("Invalid max.connections 0");
        assertThat(DynamicBrokerConfigs.validate(Map.of("max.connections.per.ip.overrides", "bad_host!:3")))
                .isEqualTo("max.connections.per.ip.overrides contains invalid addresses : bad_host!");
    }
}
