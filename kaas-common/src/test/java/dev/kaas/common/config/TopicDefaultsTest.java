package dev.kaas.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class TopicDefaultsTest {
    @Test
    void theFinestRetentionNameWinsAsInApache() {
        TopicDefaults hours = TopicDefaults.of(Map.of("log.retention.hours", "2"));
        TopicDefaults minutes = TopicDefaults.of(Map.of("log.retention.hours", "2", "log.retention.minutes", "3"));
        TopicDefaults millis = TopicDefaults.of(Map.of("log.retention.hours", "2", "log.retention.minutes", "3", "log.retention.ms", "4"));

        assertThat(hours.values()).containsEntry("retention.ms", "7200000");
        assertThat(minutes.values()).containsEntry("retention.ms", "180000");
        assertThat(millis.values()).containsEntry("retention.ms", "4");
        assertThat(minutes.settings()).as("every name set, as written").containsOnly(
                Map.entry("log.retention.hours", "2"), Map.entry("log.retention.minutes", "3"));
    }

    @Test
    void aNegativeRetentionInAnyUnitIsForever() {
        assertThat(TopicDefaults.of(Map.of("log.retention.hours", "-1")).values()).containsEntry("retention.ms", "-1");
        assertThat(TopicDefaults.of(Map.of("log.retention.ms", "-2")).values()).containsEntry("retention.ms", "-1");
        assertThat(TopicDefaults.of(Map.of("log.roll.hours", "1")).values()).containsEntry("segment.ms", "3600000");
    }

    @Test
    void aTopicOverrideBeatsTheBrokerDefaultWhichBeatsApaches() {
        TopicDefaults d = TopicDefaults.from(name -> Optional.ofNullable(Map.of("message.max.bytes", "5000", "log.cleanup.policy", "compact").get(name)));

        Map<String, Object> plain = d.effective(Map.of());
        Map<String, Object> overridden = d.effective(Map.of("max.message.bytes", "7000"));

        assertThat(plain).containsEntry("max.message.bytes", 5000).containsEntry("retention.ms", 604_800_000L);
        assertThat(plain.get("cleanup.policy")).asList().containsExactly("compact");
        assertThat(overridden).containsEntry("max.message.bytes", 7000);
        assertThat(TopicDefaults.NONE.effective(Map.of())).containsEntry("max.message.bytes", 1048588).containsEntry("flush.messages", 1L);
    }

    @Test
    void aBadBrokerDefaultNamesTheBrokerKey() {
        assertThatThrownBy(() -> TopicDefaults.of(Map.of("log.roll.hours", "soon"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.roll.hours");
        assertThatThrownBy(() -> TopicDefaults.of(Map.of("log.cleaner.min.cleanable.ratio", "2"))).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("log.cleaner.min.cleanable.ratio=2 (the broker default of min.cleanable.dirty.ratio): Invalid value 2");
        assertThatThrownBy(() -> TopicDefaults.of(Map.of("log.cleaner.min.compaction.lag.ms", "10", "log.cleaner.max.compaction.lag.ms", "5")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)");
    }
}
