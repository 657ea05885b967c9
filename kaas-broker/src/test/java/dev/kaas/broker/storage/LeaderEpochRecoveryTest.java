package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.fs.PowerLossDisk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A deposed leader keeps running: it appends after its successor took over, before, during and
 * after the successor's fsyncs, rolls segments of its dead epoch, and crashes with everyone else.
 * Whatever it does, every record a leader acknowledged survives at its offset, and no record a
 * deposed leader appended after its successor's takeover is ever served (ARCHITECTURE.md, "Fencing").
 */
class LeaderEpochRecoveryTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";

    @TempDir
    Path tmp;

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    /** Flushes run only when the test says so, so their order against other writers is the test's choice. */
    private final Queue<Runnable> flushes = new ArrayDeque<>();
    private final Executor manualFlush = flushes::add;
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
    }

    private Path dir() {
        return tmp.resolve("orders-" + TOPIC_ID).resolve("0");
    }

    private PartitionLog open(int epoch, PowerLossDisk disk, Map<String, String> configs) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, epoch, 1, LogConfig.from(configs), clock::get, manualFlush, disk);
        opened.add(log);
        return log;
    }

    private static MemoryRecords batch(String value) {
        return MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(1_700_000_000_000L, value.getBytes(StandardCharsets.UTF_8)));
    }

    private void runFlushes() {
        Runnable r;
        while ((r = flushes.poll()) != null) {
            r.run();
        }
    }

    /** Appends and runs the flush: true when the append was acknowledged (durable and still owned). */
    private boolean appendAcked(PartitionLog log, String value) {
        CompletableFuture<Void> f = appendPending(log, value);
        runFlushes();
        return f.isDone() && !f.isCompletedExceptionally();
    }

    private CompletableFuture<Void> appendPending(PartitionLog log, String value) {
        try {
            var r = log.append(batch(value));
            return log.awaitDurable(r.lastOffset() + 1);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** A deposed writer appends: it may write bytes, it must never be acknowledged. */
    private void zombieAppends(PartitionLog zombie, String value) {
        CompletableFuture<Void> f = appendPending(zombie, value);
        runFlushes();
        assertThat(f.isDone() && !f.isCompletedExceptionally()).as("deposed writer acknowledged %s", value).isFalse();
    }

    private static List<String> served(PartitionLog log) throws IOException {
        List<String> out = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.highWatermark()) {
            MemoryRecords read = log.read(offset, 1 << 20, true, log.highWatermark());
            if (read.sizeInBytes() == 0) {
                break;
            }
            for (RecordBatch b : read.batches()) {
                for (Record r : b) {
                    out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.value()));
                    offset = r.offset() + 1;
                }
            }
        }
        return out;
    }

    @Test
    void aDeposedLeadersLateBytesNeverWinTheNextRecovery() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        PartitionLog epoch0 = open(0, disk, Map.of());
        assertThat(appendAcked(epoch0, "A")).isTrue();

        PartitionLog epoch1 = open(1, disk, Map.of());
        zombieAppends(epoch0, "late1");
        zombieAppends(epoch0, "late2");
        assertThat(appendAcked(epoch1, "B")).isTrue();
        assertThat(appendAcked(epoch1, "C")).isTrue();

        PartitionLog epoch2 = open(2, disk, Map.of());
        assertThat(served(epoch2)).containsExactly("0:A", "1:B", "2:C");
        assertThat(epoch2.logEndOffset()).isEqualTo(3);
    }

    @Test
    void lateBytesBeforeDuringAndAfterTheSuccessorsFirstFsyncAreNeverServed() throws Exception {
        for (String when : List.of("before", "during", "after")) {
            Path d = dir();
            if (Files.exists(d)) {
                opened.forEach(PartitionLog::abandon);
                opened.clear();
                dev.kaas.common.fs.AtomicFiles.removeRecursively(d);
            }
            PowerLossDisk disk = new PowerLossDisk();
            PartitionLog epoch0 = open(0, disk, Map.of());
            assertThat(appendAcked(epoch0, "A")).isTrue();
            PartitionLog epoch1 = open(1, disk, Map.of());

            CompletableFuture<Void> b = appendPending(epoch1, "B");
            if (when.equals("before")) {
                appendPending(epoch0, "late-before");
            }
            AtomicBoolean once = new AtomicBoolean();
            if (when.equals("during")) {
                disk.beforeForce(name -> {
                    if (name.startsWith("00000001-") && name.endsWith(".log") && once.compareAndSet(false, true)) {
                        appendPending(epoch0, "late-during");
                    }
                });
            }
            runFlushes();
            disk.beforeForce(name -> { });
            if (when.equals("after")) {
                zombieAppends(epoch0, "late-after");
            }
            runFlushes();
            assertThat(b).as(when).isCompleted();
            assertThat(b.isCompletedExceptionally()).as(when).isFalse();
            assertThat(appendAcked(epoch1, "C")).as(when).isTrue();

            PartitionLog epoch2 = open(2, disk, Map.of());
            assertThat(served(epoch2)).as("zombie appended %s the successor's first fsync", when).containsExactly("0:A", "1:B", "2:C");
            opened.forEach(PartitionLog::abandon);
            opened.clear();
        }
    }

    @Test
    void anOlderOpenerPausedAcrossANewerTakeoverCannotTakeTheFenceBack() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        PartitionLog epoch1 = open(1, disk, Map.of());
        assertThat(appendAcked(epoch1, "A")).isTrue();
        // Epoch 2's opener has read the fence (epoch 1) and is writing its own when epoch 3 takes over completely.
        java.util.concurrent.atomic.AtomicReference<PartitionLog> epoch3 = new java.util.concurrent.atomic.AtomicReference<>();
        disk.beforeForce(name -> {
            if (name.startsWith(".00000002.tmp") && epoch3.get() == null) {
                try {
                    epoch3.set(open(3, disk, Map.of()));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> open(2, disk, Map.of()))
                .isInstanceOf(org.apache.kafka.common.errors.NotLeaderOrFollowerException.class);
        disk.beforeForce(name -> { });
        assertThat(epoch3.get()).isNotNull();
        assertThat(appendAcked(epoch3.get(), "B")).as("the newest owner keeps the fence").isTrue();
        zombieAppends(epoch1, "late");

        PartitionLog epoch4 = open(4, disk, Map.of());
        assertThat(served(epoch4)).containsExactly("0:A", "1:B");
    }

    @Test
    void anEmptySuccessorSegmentStillEndsTheDeposedEpoch() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        PartitionLog epoch0 = open(0, disk, Map.of());
        assertThat(appendAcked(epoch0, "A")).isTrue();
        PartitionLog epoch1 = open(1, disk, Map.of());
        epoch1.close();
        zombieAppends(epoch0, "late1");

        PartitionLog epoch2 = open(2, disk, Map.of());
        assertThat(served(epoch2)).containsExactly("0:A");
        epoch2.abandon();

        // And once more after epoch 2 replaced epoch 1's empty segment with its own, also empty.
        zombieAppends(epoch0, "late2");
        PartitionLog epoch3 = open(3, disk, Map.of());
        assertThat(served(epoch3)).containsExactly("0:A");
        assertThat(appendAcked(epoch3, "B")).isTrue();
        PartitionLog epoch4 = open(4, disk, Map.of());
        assertThat(served(epoch4)).containsExactly("0:A", "1:B");
    }

    @Test
    void aDeposedLeaderRollingSegmentsOfItsDeadEpochChangesNothing() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        Map<String, String> tiny = Map.of("segment.bytes", "200");
        PartitionLog epoch0 = open(0, disk, tiny);
        assertThat(appendAcked(epoch0, "A")).isTrue();
        assertThat(appendAcked(epoch0, "B")).isTrue();
        PartitionLog epoch1 = open(1, disk, tiny);
        for (int i = 0; i < 6; i++) {
            zombieAppends(epoch0, "late" + i);
        }
        assertThat(appendAcked(epoch1, "C")).isTrue();
        epoch1.close();

        PartitionLog epoch2 = open(2, disk, tiny);
        assertThat(served(epoch2)).containsExactly("0:A", "1:B", "2:C");
        try (var files = Files.list(dir())) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log")))
                    .as("segments the deposed leader began after its epoch ended are gone")
                    .allMatch(n -> !n.startsWith("00000000-") || Long.parseLong(n.substring(9, 29)) < 2);
        }
    }

    @Test
    void aStaleProducerSnapshotFromADeposedOwnerIsNotTrusted() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        PartitionLog epoch0 = open(0, disk, Map.of());
        assertThat(appendAcked(epoch0, "A")).isTrue();
        PartitionLog epoch1 = open(1, disk, Map.of());
        // The deposed owner appends an idempotent batch (never acknowledged) and its snapshot says so.
        epoch0.append(MemoryRecords.withIdempotentRecords(CompressionType.NONE, 7L, (short) 0, 0,
                new SimpleRecord(1_700_000_000_000L, "late".getBytes(StandardCharsets.UTF_8))));
        dev.kaas.common.fs.AtomicFiles.write(dir().resolve(PartitionLog.PRODUCER_STATE), dev.kaas.common.fs.Json.bytes(
                new PartitionLog.ProducerSnapshot(2, 0, List.of(new ProducerStateTable.Entry(7L, (short) 0,
                        List.of(new ProducerStateTable.BatchMeta(0, 0, 1, 1, 1_700_000_000_000L)))))));
        assertThat(appendAcked(epoch1, "B")).isTrue();
        assertThat(appendAcked(epoch1, "C")).isTrue();
        epoch1.abandon();

        PartitionLog epoch2 = open(2, disk, Map.of());
        var retried = epoch2.append(MemoryRecords.withIdempotentRecords(CompressionType.NONE, 7L, (short) 0, 0,
                new SimpleRecord(1_700_000_000_000L, "late".getBytes(StandardCharsets.UTF_8))));
        assertThat(retried.baseOffset()).as("the retry is appended, not answered as a duplicate of a record that is not in the log")
                .isEqualTo(3);
    }

    /**
     * Seeded random interleavings of up to three overlapping owners (each new one deposes the
     * previous, who keeps writing), appends, flushes, clean closes and power losses. After every
     * takeover: every acknowledged record is served at its offset, nothing appended by a deposed
     * owner after its successor's takeover is served, and what was served below the high watermark
     * never changes.
     */
    @Test
    void randomInterleavingsOfDeposedWritersAndCrashesNeverLoseAnAcknowledgedRecord() throws Exception {
        for (long seed = 1; seed <= 150; seed++) {
            runInterleaving(seed);
        }
    }

    private void runInterleaving(long seed) throws Exception {
        opened.forEach(PartitionLog::abandon);
        opened.clear();
        flushes.clear();
        if (Files.exists(dir())) {
            dev.kaas.common.fs.AtomicFiles.removeRecursively(dir());
        }
        Random random = new Random(seed);
        PowerLossDisk disk = new PowerLossDisk();
        Map<String, String> configs = Map.of("segment.bytes", Integer.toString(150 + random.nextInt(400)));
        Map<String, Long> acked = new LinkedHashMap<>();
        Set<String> late = new java.util.HashSet<>();
        TreeMap<Long, String> everServed = new TreeMap<>();
        List<PartitionLog> writers = new ArrayList<>();
        Map<PartitionLog, Map<String, CompletableFuture<Long>>> pending = new HashMap<>();
        int epoch = 0;
        PartitionLog current = open(epoch, disk, configs);
        writers.add(current);
        int counter = 0;
        for (int step = 0; step < 60; step++) {
            int op = random.nextInt(100);
            if (op < 45) {
                PartitionLog w = writers.get(random.nextInt(writers.size()));
                String value = "s" + seed + "-" + (counter++) + (w == current ? "" : "-z");
                if (w != current) {
                    late.add(value);
                }
                try {
                    var r = w.append(batch(value));
                    CompletableFuture<Long> f = w.awaitDurable(r.lastOffset() + 1).thenApply(v -> r.baseOffset());
                    pending.computeIfAbsent(w, k -> new LinkedHashMap<>()).put(value, f);
                } catch (Exception expected) {
                    // Fenced or closed writers refuse: nothing written.
                }
            } else if (op < 70) {
                runFlushes();
            } else if (op < 85 || writers.size() >= 3) {
                epoch++;
                // Writers that have not yet learnt they are deposed keep going; anything they append from now on is late.
                current = open(epoch, disk, configs);
                writers.add(current);
                if (writers.size() > 3) {
                    writers.remove(0);
                }
                checkServed(seed, current, acked, late, everServed, pending);
            } else if (op < 93) {
                runFlushes();
                collect(pending, acked);
                current.close();
                writers.remove(current);
                epoch++;
                current = open(epoch, disk, configs);
                writers.add(current);
                checkServed(seed, current, acked, late, everServed, pending);
            } else {
                // Power loss: every writer dies mid-flight; only forced bytes and synced names remain.
                collect(pending, acked);
                disk.powerLoss();
                flushes.clear();
                writers.forEach(PartitionLog::abandon);
                writers.clear();
                pending.clear();
                epoch++;
                current = open(epoch, disk, configs);
                writers.add(current);
                checkServed(seed, current, acked, late, everServed, Map.of());
            }
            collect(pending, acked);
        }
    }

    private static void collect(Map<PartitionLog, Map<String, CompletableFuture<Long>>> pending, Map<String, Long> acked) {
        for (var perWriter : pending.values()) {
            perWriter.entrySet().removeIf(e -> {
                CompletableFuture<Long> f = e.getValue();
                if (!f.isDone()) {
                    return false;
                }
                if (!f.isCompletedExceptionally()) {
                    acked.put(e.getKey(), f.join());
                }
                return true;
            });
        }
    }

    private void checkServed(long seed, PartitionLog log, Map<String, Long> acked, Set<String> late,
                             TreeMap<Long, String> everServed, Map<PartitionLog, Map<String, CompletableFuture<Long>>> pending)
            throws IOException {
        Map<Long, String> byOffset = new TreeMap<>();
        for (String entry : served(log)) {
            int colon = entry.indexOf(':');
            byOffset.put(Long.parseLong(entry.substring(0, colon)), entry.substring(colon + 1));
        }
        for (var e : acked.entrySet()) {
            assertThat(byOffset.get(e.getValue())).as("seed %d: acknowledged %s at offset %d", seed, e.getKey(), e.getValue())
                    .isEqualTo(e.getKey());
        }
        for (String value : byOffset.values()) {
            assertThat(late).as("seed %d: served a record a deposed owner appended after its successor took over", seed)
                    .doesNotContain(value);
        }
        for (var e : everServed.entrySet()) {
            if (byOffset.containsKey(e.getKey())) {
                assertThat(byOffset.get(e.getKey())).as("seed %d: offset %d changed", seed, e.getKey()).isEqualTo(e.getValue());
            }
        }
        // Everything served at a takeover is below the new high watermark and fsynced by the recovery: it is final.
        everServed.putAll(byOffset);
    }
}
