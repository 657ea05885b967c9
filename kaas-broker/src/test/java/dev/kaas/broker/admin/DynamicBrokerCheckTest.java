package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The receiving broker's check of a dynamic broker config change: the stored layers, the operations applied, its cleaner's rule. */
class DynamicBrokerCheckTest {
    static final String TOO_MANY = "Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads cannot be "
            + "increased to more than double the current value 2 for configuration Invalid dynamic configuration";

    @TempDir
    Path data;
    Partitions partitions;
    DynamicBrokerCheck check;

    @BeforeEach
    void broker1WithTwoCleanerThreadsFromTheClusterDefault() {
        var config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        partitions = new Partitions(config);
        ClusterView view = new ClusterView(config);
        Map<String, Map<String, String>> stored = Map.of("", Map.of("log.cleaner.threads", "2"), "1", Map.of("log.retention.ms", "1000"));
        view.applied(new Assignment(1, 1, "c", List.of(new BrokerInfo(1, List.of())), List.of(), List.of(), List.of(), stored));
        partitions.applyDynamicConfigs(stored.get(""), stored.get("1"));
        check = new DynamicBrokerCheck(view, partitions, 1);
    }

    @AfterEach
    void stop() {
        partitions.onStop(null);
    }

    static ConfigAlterations.Op set(String name, String value) {
        return new ConfigAlterations.Op(name, OpType.SET.id(), value);
    }

    @Test
    void moreThanDoubleTheThreadsIsRefusedWithApachesTextForEitherResource() {
        assertThat(check.check("", List.of(set("log.cleaner.threads", "5")), false)).isEqualTo(TOO_MANY);
        assertThat(check.check("1", List.of(set("log.cleaner.threads", "5")), false)).isEqualTo(TOO_MANY);
        assertThat(check.check("1", List.of(set("log.cleaner.threads", "4")), false)).isNull();
    }

    @Test
    void aDeleteOrALegacyReplaceThatDropsTheSettingIsCheckedAsWellAndUnrelatedChangesAreNot() {
        assertThat(check.check("", List.of(new ConfigAlterations.Op("log.cleaner.threads", OpType.DELETE.id(), null)), false))
                .as("back to the static 1: half of 2 is allowed").isNull();
        assertThat(check.check("1", List.of(set("log.cleaner.threads", "5"), set("log.retention.ms", "1")), false)).isEqualTo(TOO_MANY);
        assertThat(check.check("1", List.of(set("log.retention.ms", "5")), false)).isNull();
        assertThat(check.check("", List.of(set("log.retention.ms", "5")), true))
                .as("legacy AlterConfigs replaces the cluster's set: threads back to 1").isNull();
    }
}
