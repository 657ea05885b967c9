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
                .hasMessage("Invalid value 2 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1");
        assertThatThrownBy(() -> TopicDefaults.of(Map.of("log.retention.hours", "0"))).isInstanceOf(ConfigException.class)
                .hasMessage("log.retention.ms must be unlimited (-1) or, equal or greater than 1");
        Map<String, String> lags = Map.of("log.cleaner.min.compaction.lag.ms", "10", "log.cleaner.max.compaction.lag.ms", "5");
        assertThat(TopicDefaults.of(lags).values())
                .as("a dynamic layer is not held to min <= max lag, as Apache's DynamicLogConfig").containsEntry("min.compaction.lag.ms", "10");
        assertThatThrownBy(() -> TopicDefaults.ofStatic(lags)).as("static settings are, as Apache's LogManager at start-up")
                .isInstanceOf(ConfigException.class)
                .hasMessage("conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)");
        assertThatThrownBy(() -> TopicDefaults.from(name -> java.util.Optional.ofNullable(lags.get(name))))
                .isInstanceOf(ConfigException.class);
    }

    @Test
    void dynamicLayersLieOverTheStaticOnesThisBrokersOverTheClusters() {
        TopicDefaults statics = TopicDefaults.of(Map.of("log.retention.hours", "24", "message.max.bytes", "5000"));

        TopicDefaults cluster = statics.withDynamic(Map.of("log.retention.ms", "1000"), Map.of());
        TopicDefaults mine = statics.withDynamic(Map.of("log.retention.ms", "1000"), Map.of("log.retention.ms", "2000", "message.max.bytes", "6000"));

        assertThat(statics.values()).containsEntry("retention.ms", "86400000");
        assertThat(cluster.values()).as("log.retention.ms outranks log.retention.hours").containsEntry("retention.ms", "1000")
                .containsEntry("max.message.bytes", "5000");
        assertThat(mine.values()).containsEntry("retention.ms", "2000").containsEntry("max.message.bytes", "6000");
        assertThat(mine.setting("log.retention.ms")).isEqualTo("2000");
        assertThat(mine.setting("log.retention.hours")).isEqualTo("24");
        assertThat(mine.settings()).as("the static layer stays as set").containsEntry("message.max.bytes", "5000");
        assertThat(statics.withDynamic(Map.of(), Map.of())).isSameAs(statics);
        assertThat(statics.withDynamic(Map.of("log.retention.ms", "0", "log.segment.bytes", "1048576"), Map.of()).values())
                .as("a dynamic value another version let through is left out, the rest applies")
                .containsEntry("retention.ms", "86400000").containsEntry("segment.bytes", "1048576");
        assertThat(mine.withDynamic(Map.of(), Map.of()).values()).as("removing the dynamic layers restores the static defaults")
                .isEqualTo(statics.values());
    }
}
