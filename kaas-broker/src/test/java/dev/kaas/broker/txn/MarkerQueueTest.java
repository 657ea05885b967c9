package dev.kaas.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.SlotAssignment;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.protocol.Errors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two brokers' marker queues on one volume, their doorbells wired to each other as the controller would. */
class MarkerQueueTest {
    static final TopicPartition TP = new TopicPartition("orders", 3);

    @TempDir
    Path data;

    final ScheduledExecutorService io1 = Executors.newSingleThreadScheduledExecutor();
    final ScheduledExecutorService io2 = Executors.newSingleThreadScheduledExecutor();
    final AtomicLong clock = new AtomicLong(1_000_000);
    final AtomicReference<Assignment> assignment = new AtomicReference<>(
            new Assignment(1, 1, "c", List.of(), List.of(), List.of(), List.of(new SlotAssignment(4, 1, 7))));
    final Map<String, CompletableFuture<Void>> written = new ConcurrentHashMap<>();
    final List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
    MarkerQueue coordinator;
    MarkerQueue leader;
    volatile boolean ringsLost;
    Disk disk = Disk.SYSTEM;

    @AfterEach
    void stop() {
        io1.shutdownNow();
        io2.shutdownNow();
    }

    void start() {
        coordinator = new MarkerQueue(data, 1, assignment::get, to -> ring(to, 1), io1, clock::get, disk);
        leader = new MarkerQueue(data, 2, assignment::get, to -> ring(to, 2), io2, clock::get, disk);
        coordinator.start((tp, id, pid, epoch, ce, commit) -> CompletableFuture.failedFuture(new AssertionError("nothing is led by 1")),
                (txnId, pid, epoch, partitions) -> {
                    asked.add(txnId + " " + pid + " " + epoch + " " + partitions);
                    Map<TopicPartition, Errors> answer = new java.util.LinkedHashMap<>();
                    partitions.forEach(tp -> answer.put(tp, tp.equals(TP) ? Errors.NONE : Errors.INVALID_TXN_STATE));
                    return CompletableFuture.completedFuture(answer);
                });
        leader.start((tp, id, pid, epoch, ce, commit) -> {
            CompletableFuture<Void> f = new CompletableFuture<>();
            written.put(tp + " " + pid + " " + epoch + " " + ce + " " + commit, f);
            return f;
        }, (txnId, pid, epoch, partitions) -> CompletableFuture.failedFuture(new AssertionError("no slot is held by 2")));
    }

    void ring(int to, int from) {
        if (!ringsLost) {
            (to == 1 ? coordinator : leader).rung(from);
        }
    }

    @Test
    void theLeaderWritesTheMarkerAndItsAnswerCompletesTheCoordinatorsRequest() throws Exception {
        start();
        CompletableFuture<Void> sent = coordinator.send(2, 4, TP, "topic-id", 42, (short) 3, 7, true);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> written.containsKey(TP + " 42 3 7 true"));
        assertThat(sent).isNotDone();
        written.get(TP + " 42 3 7 true").complete(null);
        sent.get(5, TimeUnit.SECONDS);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).untilAsserted(() -> assertThat(files()).isEmpty());
    }

    @Test
    void theLeadersRefusalReachesTheCoordinatorAsItsError() {
        start();
        CompletableFuture<Void> sent = coordinator.send(2, 4, TP, "topic-id", 42, (short) 3, 7, false);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> written.containsKey(TP + " 42 3 7 false"));
        written.get(TP + " 42 3 7 false").completeExceptionally(new InvalidProducerEpochException("old"));
        assertThatThrownBy(() -> sent.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(InvalidProducerEpochException.class);
    }

    @Test
    void aRequestFromAnOlderEpochOfTheSlotIsRefusedWithoutWriting() {
        assignment.set(new Assignment(2, 1, "c", List.of(), List.of(), List.of(), List.of(new SlotAssignment(4, 3, 8))));
        start();
        CompletableFuture<Void> sent = coordinator.send(2, 4, TP, "topic-id", 42, (short) 3, 7, true);
        assertThatThrownBy(() -> sent.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(TransactionCoordinatorFencedException.class);
        assertThat(written).isEmpty();
    }

    @Test
    void lostRingsCostOnlyTheSweepInterval() throws Exception {
        ringsLost = true;
        start();
        CompletableFuture<Void> sent = coordinator.send(2, 4, TP, "topic-id", 42, (short) 3, 7, true);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> written.containsKey(TP + " 42 3 7 true"));
        written.get(TP + " 42 3 7 true").complete(null);
        sent.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aRequestNobodyAnswersTimesOutAndIsWithdrawn() throws Exception {
        // The clock passes the timeout the moment the request file appears, before the sender has
        // gone on: its age must count from before the file was visible, or it never times out.
        disk = new Disk() {
            @Override
            public FileChannel open(Path file, OpenOption... options) throws IOException {
                return Disk.SYSTEM.open(file, options);
            }

            @Override
            public void move(Path from, Path to) throws IOException {
                Disk.SYSTEM.move(from, to);
                if (to.toString().endsWith(".req")) {
                    clock.addAndGet(MarkerQueue.TIMEOUT_MS + 1);
                }
            }

            @Override
            public void delete(Path file) throws IOException {
                Disk.SYSTEM.delete(file);
            }

            @Override
            public void fsyncDirectory(Path dir) {
                Disk.SYSTEM.fsyncDirectory(dir);
            }
        };
        start();
        // Broker 5 is gone: nothing drains its queue.
        CompletableFuture<Void> sent = coordinator.send(5, 4, TP, "topic-id", 42, (short) 3, 7, true);
        assertThatThrownBy(() -> sent.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(TimeoutException.class);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).untilAsserted(() -> assertThat(files()).isEmpty());
    }

    @Test
    void anEmptyResultWhichACrashCanLeaveOfAnUnsyncedFileFailsTheRequestSoItIsSentAgain() throws Exception {
        start();
        // Broker 5 answered, then its machine crashed before the result's bytes reached the disk.
        CompletableFuture<Void> sent = coordinator.send(5, 4, TP, "topic-id", 42, (short) 3, 7, true);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> !files().isEmpty());
        Path request = files().get(0);
        String name = request.getFileName().toString();
        Files.write(request.resolveSibling(name.substring(0, name.length() - ".req".length()) + ".res"), new byte[0]);
        coordinator.rung(5);
        assertThatThrownBy(() -> sent.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(UnknownServerException.class);
    }

    @Test
    void anUnreadableRequestIsDroppedAndTheQueueGoesOn() throws Exception {
        Path bad = data.resolve("__cluster/markers/to-2/9-garbage.req");
        AtomicFiles.write(bad, "{\"topic\":\"../x\",\"partition\":-1}".getBytes(StandardCharsets.UTF_8));
        start();
        CompletableFuture<Void> sent = coordinator.send(2, 4, TP, "topic-id", 42, (short) 3, 7, true);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> written.containsKey(TP + " 42 3 7 true"));
        written.get(TP + " 42 3 7 true").complete(null);
        sent.get(5, TimeUnit.SECONDS);
        assertThat(bad).doesNotExist();
        assertThat(written).hasSize(1);
    }

    @Test
    void aLeaderAsksTheCoordinatorToVerifyAndGetsItsAnswerPerPartition() throws Exception {
        start();
        TopicPartition other = new TopicPartition("orders", 4);
        Map<TopicPartition, Errors> answer = leader.verify(1, "tx/../\u0000", 42, (short) 3, new java.util.LinkedHashSet<>(List.of(TP, other)))
                .get(5, TimeUnit.SECONDS);
        assertThat(answer).containsExactly(Map.entry(TP, Errors.NONE), Map.entry(other, Errors.INVALID_TXN_STATE));
        assertThat(asked).containsExactly("tx/../\u0000 42 3 [" + TP + ", " + other + "]");
        Awaitility.await().atMost(5, TimeUnit.SECONDS).untilAsserted(() -> assertThat(files()).isEmpty());
    }

    @Test
    void aVerificationNobodyAnswersIsANetworkErrorForEveryPartition() throws Exception {
        start();
        CompletableFuture<Map<TopicPartition, Errors>> answer = leader.verify(5, "tx", 42, (short) 3, java.util.Set.of(TP));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> !files().isEmpty());
        clock.addAndGet(MarkerQueue.TIMEOUT_MS + 1);
        assertThat(answer.get(5, TimeUnit.SECONDS)).containsExactly(Map.entry(TP, Errors.NETWORK_EXCEPTION));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).untilAsserted(() -> assertThat(files()).isEmpty());
    }

    @Test
    void anOutOfRangeVerificationRequestIsDroppedUnanswered() throws Exception {
        Path noId = data.resolve("__cluster/markers/to-1/2-noid.vreq");
        AtomicFiles.write(noId, "{\"from\":2,\"producerId\":1,\"producerEpoch\":0,\"partitions\":[{\"topic\":\"t\",\"partition\":0}]}"
                .getBytes(StandardCharsets.UTF_8));
        Path badPartition = data.resolve("__cluster/markers/to-1/2-bad.vreq");
        AtomicFiles.write(badPartition, "{\"from\":2,\"transactionalId\":\"tx\",\"producerId\":1,\"producerEpoch\":0,\"partitions\":[{\"topic\":\"t\",\"partition\":-1}]}"
                .getBytes(StandardCharsets.UTF_8));
        start();
        Map<TopicPartition, Errors> answer = leader.verify(1, "tx", 42, (short) 3, java.util.Set.of(TP)).get(5, TimeUnit.SECONDS);
        assertThat(answer).containsExactly(Map.entry(TP, Errors.NONE));
        assertThat(noId).doesNotExist();
        assertThat(badPartition).doesNotExist();
        assertThat(asked).hasSize(1);
        try (var walk = Files.walk(data.resolve("__cluster/markers"))) {
            assertThat(walk.filter(p -> p.toString().endsWith(".vres")).toList()).as("no answer to what was dropped").isEmpty();
        }
    }

    List<Path> files() throws Exception {
        Path root = data.resolve("__cluster/markers");
        if (!Files.exists(root)) {
            return List.of();
        }
        try (var walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile).toList();
        }
    }
}
