package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.common.config.TopicDefaults;
import java.util.Map;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.junit.jupiter.api.Test;

class TopicConfigEntriesTest {
    private static final TopicDefaults BROKER = TopicDefaults.of(Map.of("log.retention.hours", "24", "message.max.bytes", "5000"));

    @Test
    void anOverrideThenTheBrokerDefaultThenApachesAsKafkaConfigsShowsThem() {
        TopicConfigEntries topic = new TopicConfigEntries(BROKER, Map.of("max.message.bytes", "7000"));

        assertThat(topic.value("max.message.bytes")).isEqualTo("7000");
        assertThat(topic.source("max.message.bytes")).isEqualTo(ConfigSource.TOPIC_CONFIG);
        assertThat(topic.synonyms("max.message.bytes")).containsExactly(
                new TopicConfigEntries.Synonym("max.message.bytes", "7000", ConfigSource.TOPIC_CONFIG),
                new TopicConfigEntries.Synonym("message.max.bytes", "5000", ConfigSource.STATIC_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("message.max.bytes", "1048588", ConfigSource.DEFAULT_CONFIG));

        TopicConfigEntries plain = new TopicConfigEntries(BROKER, Map.of());
        assertThat(plain.source("max.message.bytes")).isEqualTo(ConfigSource.STATIC_BROKER_CONFIG);
        assertThat(plain.synonyms("segment.bytes")).containsExactly(
                new TopicConfigEntries.Synonym("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG));
    }

    /** Apache 3.7's ConfigHelper keeps the chain from the primary broker name on: log.retention.ms, not .hours. */
    @Test
    void aDefaultSetUnderASecondaryNameShowsItsValueButNoChainAsInApache() {
        TopicConfigEntries topic = new TopicConfigEntries(BROKER, Map.of());

        assertThat(topic.value("retention.ms")).isEqualTo("86400000");
        assertThat(topic.source("retention.ms")).isEqualTo(ConfigSource.DEFAULT_CONFIG);
        assertThat(topic.synonyms("retention.ms")).isEmpty();
        assertThat(topic.synonyms("segment.ms")).isEmpty();

        TopicConfigEntries both = new TopicConfigEntries(TopicDefaults.of(Map.of("log.retention.ms", "1000", "log.retention.hours", "24")), Map.of());
        assertThat(both.value("retention.ms")).isEqualTo("1000");
        assertThat(both.synonyms("retention.ms")).containsExactly(
                new TopicConfigEntries.Synonym("log.retention.ms", "1000", ConfigSource.STATIC_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG));
        assertThat(both.synonyms("remote.storage.enable")).as("no broker name").isEmpty();
        assertThat(both.source("remote.storage.enable")).isEqualTo(ConfigSource.DEFAULT_CONFIG);
    }

    @Test
    void theBrokerDescribesEveryNameOfATopicDefaultWithTheOneItWasSetBy() {
        Map<String, BrokerConfigs.Entry> entries = new java.util.HashMap<>();
        BrokerConfigs.of(TestBrokerConfig.defaults(), BROKER, Map.of(), Map.of()).forEach(e -> entries.put(e.name(), e));

        assertThat(entries.get("log.retention.hours").value()).isEqualTo("24");
        assertThat(entries.get("log.retention.minutes").value()).isNull();
        assertThat(entries.get("log.retention.ms").value()).isNull();
        assertThat(entries.get("log.roll.hours").value()).isEqualTo("168");
        assertThat(entries.get("message.max.bytes").value()).isEqualTo("5000");
        assertThat(entries.get("log.flush.interval.messages").value()).as("kaas's fsync-per-append default").isEqualTo("1");
        assertThat(entries.get("log.retention.hours").kaasKey()).as("read under its Apache name").isEqualTo("log.retention.hours");

        BrokerConfigs.of(TestBrokerConfig.defaults(), TopicDefaults.of(Map.of("log.retention.ms", "1000", "log.retention.hours", "24")), Map.of(), Map.of())
                .forEach(e -> entries.put(e.name(), e));
        assertThat(entries.get("log.retention.ms").value()).isEqualTo("1000");
        assertThat(entries.get("log.retention.hours").value()).as("as set, though .ms wins").isEqualTo("24");
    }

    @Test
    void dynamicLayersComeFirstInTheChainThisBrokersThenTheClusters() {
        TopicDefaults layered = BROKER.withDynamic(Map.of("message.max.bytes", "6000", "log.retention.ms", "1000"), Map.of("message.max.bytes", "7000"));
        TopicConfigEntries topic = new TopicConfigEntries(layered, Map.of());

        assertThat(topic.value("max.message.bytes")).isEqualTo("7000");
        assertThat(topic.source("max.message.bytes")).isEqualTo(ConfigSource.DYNAMIC_BROKER_CONFIG);
        assertThat(topic.synonyms("max.message.bytes")).extracting(TopicConfigEntries.Synonym::source).containsExactly(
                ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, ConfigSource.STATIC_BROKER_CONFIG,
                ConfigSource.DEFAULT_CONFIG);
        assertThat(topic.value("retention.ms")).isEqualTo("1000");
        assertThat(topic.synonyms("retention.ms")).containsExactly(
                new TopicConfigEntries.Synonym("log.retention.ms", "1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG));

        Map<String, BrokerConfigs.Entry> entries = new java.util.HashMap<>();
        BrokerConfigs.of(TestBrokerConfig.defaults(), layered, Map.of("leader.replication.throttled.rate", "100"), Map.of())
                .forEach(e -> entries.put(e.name(), e));
        assertThat(entries.get("message.max.bytes").value()).isEqualTo("7000");
        assertThat(entries.get("message.max.bytes").source()).isEqualTo(ConfigSource.DYNAMIC_BROKER_CONFIG);
        assertThat(entries.get("message.max.bytes").readOnly()).isFalse();
        assertThat(entries.get("log.retention.hours").readOnly()).as("Apache changes only the primary name at run time").isTrue();
        assertThat(entries.get("leader.replication.throttled.rate").value()).isEqualTo("100");
        assertThat(entries.get("leader.replication.throttled.rate").source()).isEqualTo(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(entries.get("leader.replication.throttled.rate").readOnly()).as("a quota config, read-only in Apache's describe").isTrue();
        assertThat(entries).as("an unset throttle is not described, as in Apache").doesNotContainKey("follower.replication.throttled.rate");
    }
}
