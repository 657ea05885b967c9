package dev.kaas.broker.assignment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kaas.broker.cluster.AssignmentApplied;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.storage.DescriptorHeadroom;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import jakarta.enterprise.event.Event;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AssignmentApplierTest {
    private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final TopicPartition TP0 = new TopicPartition("t", 0);
    private static final TopicPartition TP1 = new TopicPartition("t", 1);

    @TempDir
    Path data;
    private Partitions partitions;
    private AssignmentApplier applier;

    @BeforeEach
    void broker1() {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.toString(), "broker.id", 1));
        partitions = new Partitions(config);
        applier = new AssignmentApplier(new ClusterView(config), partitions, noEvents(), noEvents());
    }

    @SuppressWarnings("unchecked")
    private static <T> Event<T> noEvents() {
        return (Event<T>) Proxy.newProxyInstance(Event.class.getClassLoader(), new Class<?>[] {Event.class},
                (self, m, args) -> null);
    }

    private static Assignment assignment(long version, int epoch) {
        TopicSpec spec = new TopicSpec("t", TOPIC_ID, 2, Map.of());
        return new Assignment(version, 1, "c", List.of(),
                List.of(new TopicAssignment(spec, List.of(new PartitionAssignment(0, 1, epoch), new PartitionAssignment(1, 1, epoch)))),
                List.of(), List.of());
    }

    /**
     * The broker's topic defaults (server.properties) reach the open logs: a partition obeys the
     * broker's default, then the topic's override, and the broker's default again when the
     * override is removed (not Apache's). Fails if an update resolves without the broker defaults.
     */
    @Test
    void anOpenPartitionFollowsItsTopicsOverridesOverTheBrokersDefaults() throws Exception {
        BrokerConfig config = TestBrokerConfig.of(Map.of("dataDir", data.resolve("defaults").toString(), "broker.id", 1));
        Partitions withDefaults = new Partitions(config, dev.kaas.common.config.TopicDefaults.of(Map.of("message.max.bytes", "5000")));
        AssignmentApplier a = new AssignmentApplier(new ClusterView(config), withDefaults, noEvents(), noEvents());
        a.submit(assignment(1, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> withDefaults.get(TP0) != null);
        assertThat(withDefaults.get(TP0).log().config().maxMessageBytes()).isEqualTo(5000);

        a.submit(withOverrides(assignment(2, 0), Map.of("max.message.bytes", "7000")));
        await().atMost(Duration.ofSeconds(10)).until(() -> withDefaults.get(TP0).log().config().maxMessageBytes() == 7000);

        a.submit(withOverrides(assignment(3, 0), Map.of()));
        await().atMost(Duration.ofSeconds(10)).until(() -> withDefaults.get(TP0).log().config().maxMessageBytes() == 5000);
    }

    private static Assignment withOverrides(Assignment a, Map<String, String> overrides) {
        TopicAssignment t = a.topics().get(0);
        TopicSpec spec = new TopicSpec(t.topic().name(), t.topic().topicId(), t.topic().partitions(), overrides);
        return new Assignment(a.version(), a.controllerEpoch(), a.clusterId(), a.brokers(), List.of(new TopicAssignment(spec, t.partitions())),
                a.groupSlots(), a.txnSlots());
    }

    /**
     * A failed fsync (a full NFS volume): the partition's log stops, is closed and cut back to what
     * was durable, and is opened again under the same assignment once the volume takes writes,
     * with no new assignment needed. Fails if the applier keeps the failed incarnation.
     */
    @Test
    void aPartitionWhoseFsyncFailedIsReopenedWithWhatWasDurable() throws Exception {
        dev.kaas.broker.storage.FullDisk disk = new dev.kaas.broker.storage.FullDisk();
        partitions.useDisk(disk);
        applier.submit(assignment(1, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> partitions.get(TP0) != null);
        Replica first = partitions.get(TP0);
        appendOnWriter(first, "durable").get(10, TimeUnit.SECONDS);

        disk.fsyncFails = true;
        java.util.concurrent.CompletableFuture<Void> lost = appendOnWriter(first, "lost");
        await().atMost(Duration.ofSeconds(10)).until(lost::isCompletedExceptionally);
        await().atMost(Duration.ofSeconds(10)).until(() -> first.log().isFailed());
        // The volume is still full: the reopen fails and is retried.
        Thread.sleep(2 * AssignmentApplier.STORAGE_RETRY_MS);
        assertThat(partitions.get(TP0)).isNull();

        disk.fsyncFails = false;
        await().atMost(Duration.ofSeconds(10)).until(() -> partitions.get(TP0) != null);
        Replica again = partitions.get(TP0);
        assertThat(again).isNotSameAs(first);
        assertThat(again.log().isFailed()).isFalse();
        assertThat(again.log().logEndOffset()).as("the failed append was cut").isEqualTo(1);
        assertThat(partitions.get(TP1)).as("the other partition was never touched").isNotNull();
    }

    private static java.util.concurrent.CompletableFuture<Void> appendOnWriter(Replica r, String value) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        r.writer().execute(() -> {
            try {
                var a = r.log().append(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8))));
                r.log().awaitDurable(a.lastOffset() + 1, r.writer()).whenComplete((v, e) -> {
                    if (e == null) {
                        done.complete(null);
                    } else {
                        done.completeExceptionally(e);
                    }
                });
            } catch (Exception e) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    @Test
    void aPartitionThatCannotOpenIsReportedAloneAndRetriedLater() {
        AtomicLong inUse = new AtomicLong(900);
        applier.descriptors(new DescriptorHeadroom(inUse::get, () -> 1000));

        applier.submit(assignment(1, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> applier.appliedVersion() == 1);
        assertThat(applier.unopened()).containsOnlyKeys(TP0, TP1);
        assertThat(applier.unopened().get(TP0)).contains("file descriptors: 900 of 1000");
        assertThat(partitions.get(TP0)).isNull();

        inUse.set(100);
        applier.submit(assignment(2, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> applier.appliedVersion() == 2);
        assertThat(applier.unopened()).isEmpty();
        assertThat(partitions.get(TP0)).isNotNull();
        assertThat(partitions.get(TP1)).isNotNull();
    }

    @Test
    void aNewIncarnationOpensOnlyAfterThePreviousOneOnThisBrokerClosed() throws Exception {
        applier.submit(assignment(1, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> partitions.get(TP0) != null);
        Replica old = partitions.get(TP0);

        // The old incarnation's writer is busy; an append is queued behind it when the partition moves to epoch 1.
        CountDownLatch busy = new CountDownLatch(1);
        old.writer().execute(() -> {
            try {
                busy.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        old.writer().execute(() -> {
            try {
                old.log().append(MemoryRecords.withRecords(CompressionType.NONE,
                        new SimpleRecord(System.currentTimeMillis(), "queued".getBytes(StandardCharsets.UTF_8))));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        applier.submit(assignment(2, 1));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> partitions.get(TP0) == null || partitions.get(TP0).log().leaderEpoch() != 1);
        busy.countDown();

        await().atMost(Duration.ofSeconds(10)).until(() -> partitions.get(TP0) != null && partitions.get(TP0).log().leaderEpoch() == 1);
        assertThat(partitions.get(TP0).log().logEndOffset())
                .as("the append queued before the move landed before the new incarnation recovered").isEqualTo(1);
    }

    @Test
    void aLostPartitionIsReportedAppliedOnlyOnceItsCloseHasFinished() throws Exception {
        java.util.concurrent.atomic.AtomicInteger reports = new java.util.concurrent.atomic.AtomicInteger();
        applier.onApplied(reports::incrementAndGet);
        applier.submit(assignment(1, 0));
        await().atMost(Duration.ofSeconds(10)).until(() -> applier.appliedVersion() == 1 && partitions.get(TP0) != null);
        int before = reports.get();

        // TP0's writer is busy when a handoff takes TP0 away (owner -1): its close queues behind.
        Replica old = partitions.get(TP0);
        CountDownLatch busy = new CountDownLatch(1);
        old.writer().execute(() -> {
            try {
                busy.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        TopicSpec spec = new TopicSpec("t", TOPIC_ID, 2, Map.of());
        applier.submit(new Assignment(2, 1, "c", List.of(), List.of(new TopicAssignment(spec, List.of(
                new PartitionAssignment(0, PartitionAssignment.NO_LEADER, 0), new PartitionAssignment(1, 1, 0)))), List.of(), List.of()));
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> applier.appliedVersion() == 1 && reports.get() == before);

        busy.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> applier.appliedVersion() == 2);
        assertThat(reports.get()).as("reported once the close finished").isEqualTo(before + 1);
        assertThat(partitions.get(TP0)).isNull();
    }
}
