package dev.kaas.common.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.model.TopicSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StandaloneMetadataTest {
    @TempDir
    Path data;

    private static final TopicSpec T = new TopicSpec("t", "AAAAAAAAAAAAAAAAAAAAAA", 1, null);

    @Test
    void writesUnderADeposedLeaseEpochAreRefusedAndChangeNothing() throws Exception {
        try (StandaloneMetadata m = StandaloneMetadata.open(data)) {
            long first = m.lease().acquireOrRenew("a", 1000, 5000).transitions();
            m.topics().store(first, List.of(T));
            m.assignments().store(first, "{\"v\":1}");
            // "a" stalls past its deadline; "b" takes over.
            long second = m.lease().acquireOrRenew("b", 7000, 5000).transitions();
            assertThat(second).isGreaterThan(first);

            assertThatThrownBy(() -> m.topics().store(first, List.of())).isInstanceOf(LeaseFencedException.class);
            assertThatThrownBy(() -> m.assignments().store(first, "{\"v\":2}")).isInstanceOf(LeaseFencedException.class);
            assertThatThrownBy(() -> m.producerIds().allocateBlock(first)).isInstanceOf(LeaseFencedException.class);
            assertThat(m.topics().topics()).containsExactly(T);
            assertThat(Files.readString(m.clusterDir().resolve("assignment.json"))).isEqualTo("{\"v\":1}");

            m.topics().store(second, List.of());
            assertThat(m.topics().topics()).isEmpty();
            assertThat(m.producerIds().allocateBlock(second)).isZero();
        }
    }

    @Test
    void aReleasedLeaseFencesItsFormerHolder() throws Exception {
        try (StandaloneMetadata m = StandaloneMetadata.open(data)) {
            long epoch = m.lease().acquireOrRenew("a", 1000, 5000).transitions();
            m.lease().release("a");
            assertThatThrownBy(() -> m.topics().store(epoch, List.of(T))).isInstanceOf(LeaseFencedException.class);
        }
    }

    @Test
    void aCatalogOrAssignmentWriteCutByPowerLossLeavesTheOldOrTheNewFile() throws Exception {
        TopicSpec t2 = new TopicSpec("t2", "BBBBBBBBBBBBBBBBBBBBBB", 1, null);
        int cuts = 0;
        for (int step = 0; step < 30; step++) {
            Path dir = data.resolve("cut-" + step);
            dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
            boolean returned;
            try (StandaloneMetadata m = StandaloneMetadata.open(dir, disk)) {
                long epoch = m.lease().acquireOrRenew("a", 1000, 5000).transitions();
                m.topics().store(epoch, List.of(T));
                m.assignments().store(epoch, "{\"v\":1}");
                returned = disk.cutAfter(step, () -> {
                    m.topics().store(epoch, List.of(T, t2));
                    m.assignments().store(epoch, "{\"v\":2}");
                });
                cuts += returned ? 0 : 1;
            }
            try (StandaloneMetadata m = StandaloneMetadata.open(dir)) {
                List<TopicSpec> topics = m.topics().topics();
                String assignment = Files.readString(m.clusterDir().resolve("assignment.json"));
                assertThat(topics).as("catalog after a loss at step %d", step).isIn(List.of(T), List.of(T, t2));
                assertThat(assignment).as("assignment after a loss at step %d", step).isIn("{\"v\":1}", "{\"v\":2}");
                if (returned) {
                    assertThat(topics).containsExactly(T, t2);
                    assertThat(assignment).isEqualTo("{\"v\":2}");
                }
                assertThat(m.lease().acquireOrRenew("b", 100_000, 5000).holder()).as("the lease file is readable").isEqualTo("b");
            }
        }
        assertThat(cuts).isGreaterThan(5);
    }

    @Test
    void aStandbyBindingOnTheSameDirectoryWaitsForTheLeaseAndFencesTheOldHolderOnceItTakesIt() throws Exception {
        try (StandaloneMetadata active = StandaloneMetadata.open(data); StandaloneMetadata standby = StandaloneMetadata.open(data)) {
            long epoch = active.lease().acquireOrRenew("a", 0, 5000).transitions();
            String clusterId = active.clusterId(epoch);
            LeaseRecord seen = standby.lease().acquireOrRenew("b", 4999, 5000);
            assertThat(seen.holder()).as("the standby waits while the lease is held").isEqualTo("a");
            active.topics().store(epoch, List.of(T));
            assertThat(standby.clusterId(seen.transitions())).isEqualTo(clusterId);

            // The holder stops renewing (hung or dead): after its deadline the standby takes over.
            LeaseRecord taken = standby.lease().acquireOrRenew("b", 5000, 5000);
            assertThat(taken.holder()).isEqualTo("b");
            assertThat(taken.transitions()).isEqualTo(epoch + 1);
            assertThatThrownBy(() -> active.topics().store(epoch, List.of()))
                    .as("the old holder, still believing it leads, writes nothing").isInstanceOf(LeaseFencedException.class);
            assertThatThrownBy(() -> active.assignments().store(epoch, "{}")).isInstanceOf(LeaseFencedException.class);
            assertThatThrownBy(() -> active.producerIds().allocateBlock(epoch)).isInstanceOf(LeaseFencedException.class);
            assertThat(standby.topics().topics()).containsExactly(T);
            standby.topics().store(taken.transitions(), List.of());
            assertThat(active.lease().acquireOrRenew("a", 6000, 5000).holder()).as("the old holder cannot renew").isEqualTo("b");
        }
    }

    @Test
    void aBrokerReadsTheClusterIdOfItsDataDirectory() throws Exception {
        assertThat(StandaloneMetadata.readClusterId(data)).isEmpty();
        try (StandaloneMetadata m = StandaloneMetadata.open(data)) {
            long epoch = m.lease().acquireOrRenew("a", 0, 5000).transitions();
            String id = m.clusterId(epoch);
            assertThat(StandaloneMetadata.readClusterId(data)).isEqualTo(id);
        }
    }
}
