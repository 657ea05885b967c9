package dev.kaas.broker.data;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CleanerSettingsTest {
    static final CleanerSettings STATIC = CleanerSettings.of(TestBrokerConfig.defaults().broker());

    @TempDir
    Path data;

    @Test
    void theBrokersOwnValueWinsOverTheClustersWhichWinsOverTheStaticOne() {
        CleanerSettings s = STATIC.withDynamic(Map.of("log.cleaner.threads", "2", "log.cleaner.backoff.ms", "500"),
                Map.of("log.cleaner.threads", "3", "log.retention.ms", "1000"));

        assertThat(s.threads()).isEqualTo(3);
        assertThat(s.backoffMs()).isEqualTo(500);
        assertThat(s.dedupeBytes()).as("static, Apache's default").isEqualTo(128L * 1024 * 1024);
        assertThat(STATIC.withDynamic(Map.of(), Map.of())).isEqualTo(STATIC);
    }

    @Test
    void aValueThatDoesNotParseIsLeftOut() {
        CleanerSettings s = STATIC.withDynamic(Map.of("log.cleaner.threads", "many", "log.cleaner.io.max.bytes.per.second", "1e6"),
                Map.of("log.cleaner.backoff.ms", "-5"));

        assertThat(s.threads()).isEqualTo(1);
        assertThat(s.backoffMs()).isEqualTo(15_000);
        assertThat(s.ioMaxBytesPerSecond()).isEqualTo(1e6);
    }

    @Test
    void threadsChangeAsApachesLogCleanerAllowsWithinHalfToDouble() {
        CleanerSettings four = STATIC.withDynamic(Map.of("log.cleaner.threads", "4"), Map.of());

        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.threads", "8"), Map.of()))).isNull();
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.threads", "2"), Map.of()))).isNull();
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.threads", "9"), Map.of())))
                .isEqualTo("Log cleaner threads cannot be increased to more than double the current value 4");
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.threads", "1"), Map.of())))
                .isEqualTo("Log cleaner threads cannot be reduced to less than half the current value 4");
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.threads", "0"), Map.of())))
                .isEqualTo("Log cleaner threads should be at least 1");
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.io.buffer.load.factor", "1.5"), Map.of())))
                .startsWith("log.cleaner.io.buffer.load.factor must be more than 0 and at most 1");
        assertThat(four.reconfigurationError(four.withDynamic(Map.of("log.cleaner.dedupe.buffer.size", "100"), Map.of())))
                .contains("too small a key map");
    }

    @Test
    void eachThreadGetsItsShareOfTheMemory() {
        CleanerSettings two = STATIC.withDynamic(Map.of("log.cleaner.threads", "2", "log.cleaner.dedupe.buffer.size", "1000000",
                "log.cleaner.io.buffer.size", "400000", "log.cleaner.io.buffer.load.factor", "0.5"), Map.of());

        assertThat(two.perThread().dedupeBufferBytes()).isEqualTo(500_000);
        assertThat(two.perThread().ioBufferBytes()).as("a read and a write buffer each").isEqualTo(100_000);
        assertThat(two.perThread().loadFactor()).isEqualTo(0.5);
    }

    @Test
    void partitionsStartWithTheStoredSettingsThenRestartTheirCleanerWithWhatItCanTakeAndKeepItsSettingsOtherwise() {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString()));
        Partitions partitions = new Partitions(config);
        try {
            // The first assignment carries what was stored before this broker started: its configuration, not a change
            // (4 threads where the static setting is 1, as threads raised 1, 2, 4 before a restart).
            Map<String, String> cluster = Map.of("log.cleaner.threads", "4");
            Map<String, String> mine = Map.of("log.cleaner.backoff.ms", "250");
            partitions.applyDynamicConfigs(cluster, mine);
            assertThat(partitions.cleanerSettings().threads()).isEqualTo(4);
            assertThat(partitions.cleanerSettings().backoffMs()).isEqualTo(250);
            assertThat(partitions.runningCleanerRounds()).isEqualTo(4);

            assertThat(partitions.cleanerChangeError(cluster, mine, Map.of("log.cleaner.threads", "9"), mine))
                    .isEqualTo("Log cleaner threads cannot be increased to more than double the current value 4");
            assertThat(partitions.cleanerChangeError(cluster, mine, cluster, Map.of("log.cleaner.backoff.ms", "250", "log.retention.ms", "1")))
                    .as("a change that leaves the cleaner's settings alone").isNull();
            partitions.applyDynamicConfigs(Map.of("log.cleaner.threads", "9"), mine);
            assertThat(partitions.cleanerSettings().threads()).as("refused: the cleaner keeps its settings").isEqualTo(4);
            assertThat(partitions.runningCleanerRounds()).isEqualTo(4);

            partitions.applyDynamicConfigs(Map.of("log.cleaner.threads", "2"), Map.of());
            assertThat(partitions.cleanerSettings().threads()).isEqualTo(2);
            assertThat(partitions.runningCleanerRounds()).isEqualTo(2);
            partitions.applyDynamicConfigs(Map.of(), Map.of());
            assertThat(partitions.cleanerSettings()).isEqualTo(STATIC);
            assertThat(partitions.runningCleanerRounds()).isEqualTo(1);
        } finally {
            partitions.onStop(null);
        }
    }

    @Test
    void atStartUpOnlyWhatNoCleanerCouldRunWithIsRefused() {
        Partitions partitions = new Partitions(TestBrokerConfig.of(Map.of("dataDir", data.toString())));
        try {
            partitions.applyDynamicConfigs(Map.of("log.cleaner.io.buffer.load.factor", "2.0"), Map.of());
            assertThat(partitions.cleanerSettings()).isEqualTo(STATIC);
        } finally {
            partitions.onStop(null);
        }
    }
}
