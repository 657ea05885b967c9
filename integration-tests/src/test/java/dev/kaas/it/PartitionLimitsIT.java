package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Apache's partitions-per-request limit, through the Kafka Admin API of a real cluster. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PartitionLimitsIT {
    @TempDir
    Path tmp;

    @Test
    void createTopicsAskingForMoreThanTenThousandPartitionsIsRefusedWholeWithApachesError() throws Exception {
        try (KaasCluster cluster = KaasCluster.start(tmp.resolve("data"));
             Admin admin = Admin.create(cluster.clientProps())) {
            var huge = admin.createTopics(List.of(new NewTopic("huge", 100_000, (short) 1)));
            assertThat(huge.all()).failsWithin(60, TimeUnit.SECONDS).withThrowableThat()
                    .havingCause().isInstanceOf(PolicyViolationException.class)
                    .withMessage("Excessively large number of partitions per request.");

            // Two topics that are each fine but together too many: neither is created.
            var together = admin.createTopics(List.of(new NewTopic("half-a", 6000, (short) 1), new NewTopic("half-b", 5000, (short) 1)));
            for (String name : List.of("half-a", "half-b")) {
                assertThat(together.values().get(name)).failsWithin(60, TimeUnit.SECONDS).withThrowableThat()
                        .havingCause().isInstanceOf(PolicyViolationException.class);
            }
            // Validation only is refused the same way.
            var dry = admin.createTopics(List.of(new NewTopic("dry", 10_001, (short) 1)), new CreateTopicsOptions().validateOnly(true));
            assertThat(dry.all()).failsWithin(60, TimeUnit.SECONDS).withThrowableThat()
                    .havingCause().isInstanceOf(PolicyViolationException.class);

            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).doesNotContain("huge", "half-a", "half-b", "dry");
            admin.createTopics(List.of(new NewTopic("normal", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeTopics(List.of("normal")).allTopicNames().get(30, TimeUnit.SECONDS).get("normal").partitions()).hasSize(3);
        }
    }
}
