package dev.kaas.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.common.model.Assignment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClusterViewTest {
    private static Assignment version(long v) {
        return new Assignment(v, 1, "c", List.of(), List.of(), List.of(), List.of());
    }

    @Test
    void aWaiterThatGivesUpReleasesNoOtherWaiterOfTheSameVersion() throws Exception {
        ClusterView view = new ClusterView(TestBrokerConfig.defaults());
        view.applied(version(1));

        CompletableFuture<Void> impatient = view.awaitVersion(3).completeOnTimeout(null, 1, TimeUnit.MILLISECONDS);
        impatient.get(5, TimeUnit.SECONDS);
        CompletableFuture<Void> patient = view.awaitVersion(3);
        CompletableFuture<Void> later = view.awaitVersion(3);

        assertThat(patient).as("version 3 is not applied").isNotDone();
        assertThat(later).isNotDone();
        view.applied(version(2));
        assertThat(patient).isNotDone();
        view.applied(version(3));
        assertThat(patient).isCompleted();
        assertThat(later).isCompleted();
        assertThat(view.awaitVersion(2)).as("an older version is applied already").isCompleted();
    }
}
