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

        assertThat(topic.value("retention.ms")).isEqualTo("86400000");
        assertThat(topic.source("retention.ms")).isEqualTo(ConfigSource.STATIC_BROKER_CONFIG);
        assertThat(topic.synonyms("retention.ms")).containsExactly(
                new TopicConfigEntries.Synonym("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
                new TopicConfigEntries.Synonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG));

        assertThat(topic.value("segment.ms")).isEqualTo("604800000");
        assertThat(topic.source("segment.ms")).isEqualTo(ConfigSource.DEFAULT_CONFIG);
        assertThat(topic.synonyms("segment.ms")).containsExactly(new TopicConfigEntries.Synonym("log.roll.hours", "168", ConfigSource.DEFAULT_CONFIG));
    }

    @Test
    void theBrokerDescribesEveryNameOfATopicDefaultWithTheOneItWasSetBy() {
        Map<String, BrokerConfigs.Entry> entries = new java.util.HashMap<>();
        BrokerConfigs.of(TestBrokerConfig.defaults(), BROKER).forEach(e -> entries.put(e.name(), e));

        assertThat(entries.get("log.retention.hours").value()).isEqualTo("24");
        assertThat(entries.get("log.retention.minutes").value()).isNull();
        assertThat(entries.get("log.retention.ms").value()).isNull();
        assertThat(entries.get("log.roll.hours").value()).isEqualTo("168");
        assertThat(entries.get("message.max.bytes").value()).isEqualTo("5000");
        assertThat(entries.get("log.flush.interval.messages").value()).as("kaas's fsync-per-append default").isEqualTo("1");
        assertThat(entries.get("log.retention.hours").kaasKey()).as("read under its Apache name").isEqualTo("log.retention.hours");
    }
}
