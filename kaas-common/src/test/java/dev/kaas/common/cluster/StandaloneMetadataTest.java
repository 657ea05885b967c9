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
    void theDataDirectoryIsHeldByOneBindingAtATime() throws Exception {
        StandaloneMetadata first = StandaloneMetadata.open(data);
        assertThatThrownBy(() -> StandaloneMetadata.open(data)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already running");
        first.close();
        StandaloneMetadata.open(data).close();
    }
}
