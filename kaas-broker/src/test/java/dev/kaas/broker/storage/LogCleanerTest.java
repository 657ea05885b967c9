package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.PowerLossDisk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction on real segment files: what a pass keeps (the latest value per key at its own
 * offset, tombstones until their horizon, committed transactions, the producers' last batches),
 * what it drops (older values, aborted transactions, markers once their data is gone), and that a
 * power loss at any step of a pass leaves a log recovery opens whole.
 */
class LogCleanerTest {
    static final TopicPartition TP = new TopicPartition("table", 0);
    static final String TOPIC_ID = "DDDDDDDDDDDDDDDDDDDDDD";
    static final long NOW = 1_700_000_000_000L;
    static final long DELETE_RETENTION = 60_000L;

    @TempDir
    Path tmp;

    final AtomicLong clock = new AtomicLong(NOW);
    final ExecutorService flusher = Executors.newFixedThreadPool(2);
    /** Replaced segments wait an hour before deletion, so no reaper task runs in a test. */
    final ScheduledThreadPoolExecutor reaper = new ScheduledThreadPoolExecutor(1);
    final List<PartitionLog> opened = new ArrayList<>();
    final LogCleaner cleaner = new LogCleaner(new LogCleaner.Settings(1 << 20, 16 * 1024, Double.MAX_VALUE), clock::get, ms -> { });

    static Map<String, String> configs() {
        return Map.of("cleanup.policy", "compact", "segment.bytes", "1024", "min.cleanable.dirty.ratio", "0.01",
                "delete.retention.ms", Long.toString(DELETE_RETENTION), "file.delete.delay.ms", "3600000");
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        reaper.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        reaper.shutdown();
        reaper.awaitTermination(10, TimeUnit.SECONDS);
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    PartitionLog open(Path dir, int epoch, Disk disk) throws IOException {
        PartitionLog log = PartitionLog.open(dir, TP, TOPIC_ID, epoch, 1, LogConfig.from(configs()), clock::get, flusher, disk);
        opened.add(log);
        return log;
    }

    static SimpleRecord kv(String key, String value) {
        return new SimpleRecord(NOW, key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    static void append(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    static void appendKeyed(PartitionLog log, CompressionType compression, SimpleRecord... records) throws Exception {
        append(log, MemoryRecords.withRecords(compression, records));
    }

    /** One data record as stored: offset, key, value (null for a tombstone), and its producer. */
    record Rec(long offset, String key, String value, long producerId) {
    }

    /** Every data record in the log, every batch checked for a valid CRC and increasing offsets. */
    static List<Rec> contents(PartitionLog log) throws IOException {
        List<Rec> out = new ArrayList<>();
        long last = -1;
        for (LogSegment s : log.segments()) {
            ByteBuffer b = ByteBuffer.allocate(s.size());
            s.readFully(b, 0);
            b.flip();
            for (MutableRecordBatch batch : MemoryRecords.readableRecords(b).batches()) {
                batch.ensureValid();
                assertThat(batch.baseOffset()).isGreaterThan(last);
                last = batch.lastOffset();
                if (batch.isControlBatch()) {
                    continue;
                }
                for (Record r : batch) {
                    out.add(new Rec(r.offset(), utf8(r.key()), r.hasValue() ? utf8(r.value()) : null, batch.producerId()));
                }
            }
        }
        return out;
    }

    static String utf8(ByteBuffer b) {
        return b == null ? null : StandardCharsets.UTF_8.decode(b.duplicate()).toString();
    }

    /** Every batch in the log, as (base offset, record count, producer id, control, delete horizon, last offset). */
    static List<long[]> batches(PartitionLog log) throws IOException {
        List<long[]> out = new ArrayList<>();
        for (LogSegment s : log.segments()) {
            ByteBuffer b = ByteBuffer.allocate(s.size());
            s.readFully(b, 0);
            b.flip();
            for (MutableRecordBatch batch : MemoryRecords.readableRecords(b).batches()) {
                out.add(new long[] {batch.baseOffset(), batch.countOrNull(), batch.producerId(), batch.isControlBatch() ? 1 : 0,
                        batch.deleteHorizonMs().orElse(-1), batch.lastOffset()});
            }
        }
        return out;
    }

    Optional<LogCleaner.Stats> clean(PartitionLog log) throws Exception {
        return cleaner.clean(log, Runnable::run, reaper);
    }

    /** 40 batches of 5 updates over keys k0..k9, in both compressions, with the log's active segment the last one. */
    static Map<Long, Rec> writeUpdates(PartitionLog log, int batches) throws Exception {
        Map<Long, Rec> written = new LinkedHashMap<>();
        long offset = log.logEndOffset();
        for (int b = 0; b < batches; b++) {
            SimpleRecord[] records = new SimpleRecord[5];
            for (int i = 0; i < 5; i++) {
                String key = "k" + ((b * 5 + i) % 10);
                String value = "v" + b + "." + i + "-padding-padding";
                records[i] = kv(key, value);
                written.put(offset, new Rec(offset, key, value, -1));
                offset++;
            }
            appendKeyed(log, b % 2 == 0 ? CompressionType.NONE : CompressionType.GZIP, records);
        }
        return written;
    }

    /** For each key, its last record below {@code below}. */
    static Map<String, Rec> latestBelow(Map<Long, Rec> written, long below) {
        Map<String, Rec> latest = new HashMap<>();
        written.values().stream().filter(r -> r.offset() < below).forEach(r -> latest.put(r.key(), r));
        return latest;
    }

    @Test
    void keepsTheLatestValueOfEachKeyAtItsOwnOffset() throws Exception {
        PartitionLog log = open(tmp.resolve("p"), 0, Disk.SYSTEM);
        Map<Long, Rec> written = writeUpdates(log, 40);
        long activeBase = log.segments().get(log.segments().size() - 1).baseOffset();
        long sizeBefore = log.sizeInBytes();
        assertThat(log.segmentCount()).isGreaterThan(5);

        assertThat(clean(log)).isPresent();

        List<Rec> after = contents(log);
        Map<String, Rec> latest = latestBelow(written, activeBase);
        List<Rec> cleanPart = after.stream().filter(r -> r.offset() < activeBase).toList();
        assertThat(cleanPart).containsExactlyInAnyOrderElementsOf(latest.values());
        assertThat(after.stream().filter(r -> r.offset() >= activeBase).toList())
                .containsExactlyElementsOf(written.values().stream().filter(r -> r.offset() >= activeBase).toList());
        assertThat(log.sizeInBytes()).isLessThan(sizeBefore);
        assertThat(log.logStartOffset()).isZero();
        assertThat(log.logEndOffset()).isEqualTo(200);

        // A reader from an offset compaction removed gets the first batch that holds a later one.
        assertThat(after).noneMatch(r -> r.offset() == 1);
        long expectedBase = batches(log).stream().filter(b -> b[5] >= 1).findFirst().orElseThrow()[0];
        MemoryRecords fromGap = log.read(1, 1 << 20, true, log.highWatermark());
        assertThat(fromGap.batches().iterator().next().baseOffset()).isEqualTo(expectedBase);

        // A reopen (a takeover) finds the same log.
        log.close();
        PartitionLog reopened = open(tmp.resolve("p"), 1, Disk.SYSTEM);
        assertThat(contents(reopened)).isEqualTo(after);
        assertThat(reopened.logEndOffset()).isEqualTo(200);
    }

    @Test
    void aSecondPassWithNothingNewLeavesTheLogAsItIs() throws Exception {
        PartitionLog log = open(tmp.resolve("p"), 0, Disk.SYSTEM);
        writeUpdates(log, 40);
        clean(log);
        List<Rec> once = contents(log);

        assertThat(clean(log)).isEmpty();
        assertThat(contents(log)).isEqualTo(once);
    }

    @Test
    void tombstonesStayUntilTheirDeleteHorizonThenGo() throws Exception {
        PartitionLog log = open(tmp.resolve("p"), 0, Disk.SYSTEM);
        appendKeyed(log, CompressionType.NONE, kv("gone", "old value"), kv("kept", "value"));
        appendKeyed(log, CompressionType.NONE, kv("gone", null));
        writeUpdates(log, 20);

        clean(log);
        List<Rec> first = contents(log);
        assertThat(first).noneMatch(r -> r.key().equals("gone") && r.value() != null);
        assertThat(first).anyMatch(r -> r.key().equals("gone") && r.value() == null);
        // The pass that first kept the tombstone set its batch's horizon.
        assertThat(batches(log)).anyMatch(b -> b[4] == NOW + DELETE_RETENTION);

        clock.addAndGet(DELETE_RETENTION - 1);
        writeUpdates(log, 20);
        clean(log);
        assertThat(contents(log)).anyMatch(r -> r.key().equals("gone") && r.value() == null);

        clock.addAndGet(2);
        writeUpdates(log, 20);
        clean(log);
        assertThat(contents(log)).noneMatch(r -> r.key().equals("gone"));
        assertThat(contents(log)).anyMatch(r -> r.key().equals("kept") && r.value().equals("value"));
    }

    static MemoryRecords txn(long pid, short epoch, int seq, SimpleRecord... records) {
        return MemoryRecords.withTransactionalRecords(CompressionType.NONE, pid, epoch, seq, records);
    }

    static MemoryRecords idempotent(long pid, short epoch, int seq, SimpleRecord... records) {
        return MemoryRecords.withIdempotentRecords(CompressionType.NONE, pid, epoch, seq, records);
    }

    long marker(PartitionLog log, long pid, boolean commit) throws Exception {
        long offset = log.appendMarker(pid, (short) 0, 0, commit);
        log.awaitDurable(offset + 1).get(10, TimeUnit.SECONDS);
        return offset;
    }

    @Test
    void abortedTransactionsGoAndTheirMarkersFollowOnceTheirDataHas() throws Exception {
        PartitionLog log = open(tmp.resolve("p"), 0, Disk.SYSTEM);
        append(log, txn(7, (short) 0, 0, kv("committed", "c1")));
        long commit = marker(log, 7, true);
        append(log, txn(8, (short) 0, 0, kv("aborted", "a1"), kv("committed", "a2")));
        long abort = marker(log, 8, false);
        // Both producers write again later, so their transactional batches are not their last.
        writeUpdates(log, 20);
        append(log, idempotent(7, (short) 0, 1, kv("p7", "later")));
        append(log, idempotent(8, (short) 0, 2, kv("p8", "later")));
        writeUpdates(log, 20);

        clean(log);
        List<Rec> first = contents(log);
        assertThat(first).noneMatch(r -> r.producerId() == 8 && r.offset() < abort);
        assertThat(first).contains(new Rec(0, "committed", "c1", 7));
        // The abort marker stays while the pass still met its data; the commit marker while its data stays.
        assertThat(batches(log)).anyMatch(b -> b[0] == abort && b[3] == 1);
        assertThat(batches(log)).anyMatch(b -> b[0] == commit && b[3] == 1);
        assertThat(log.abortedTransactions(0, log.logEndOffset())).extracting(PartitionLog.AbortedTransaction::producerId)
                .containsExactly(8L);
        // A takeover reads the cleaned segment's transaction index: read_committed still learns of the abort.
        log.close();
        log = open(tmp.resolve("p"), 1, Disk.SYSTEM);
        assertThat(log.abortedTransactions(0, log.logEndOffset())).extracting(PartitionLog.AbortedTransaction::producerId)
                .containsExactly(8L);
        assertThat(log.lastStableOffset()).isEqualTo(log.logEndOffset());

        // Next pass: no data left for the abort, so its marker gets a horizon; after it, it goes.
        writeUpdates(log, 20);
        clean(log);
        assertThat(batches(log)).anyMatch(b -> b[0] == abort && b[3] == 1 && b[4] == NOW + DELETE_RETENTION);
        clock.addAndGet(DELETE_RETENTION + 1);
        writeUpdates(log, 20);
        clean(log);
        assertThat(batches(log)).noneMatch(b -> b[0] == abort);
        assertThat(batches(log)).anyMatch(b -> b[0] == commit && b[3] == 1);
        assertThat(contents(log)).contains(new Rec(0, "committed", "c1", 7));
    }

    @Test
    void aProducersLastBatchStaysEvenWhenEmptied() throws Exception {
        PartitionLog log = open(tmp.resolve("p"), 0, Disk.SYSTEM);
        append(log, idempotent(9, (short) 3, 0, kv("k1", "from nine")));
        long lastOfNine = log.logEndOffset() - 1;
        writeUpdates(log, 40);

        clean(log);

        // k1's value from producer 9 is superseded, but the batch stays, empty, with the producer's sequence.
        assertThat(contents(log)).noneMatch(r -> r.producerId() == 9);
        assertThat(batches(log)).anyMatch(b -> b[0] == lastOfNine && b[1] == 0 && b[2] == 9);
        log.close();
        // Without the snapshot, recovery rebuilds the producers from the batches themselves.
        Files.delete(tmp.resolve("p").resolve(PartitionLog.PRODUCER_STATE));
        PartitionLog reopened = open(tmp.resolve("p"), 1, Disk.SYSTEM);
        // The reopened log still knows producer 9: its retry of sequence 0 is a duplicate, not a new write.
        var dup = reopened.append(idempotent(9, (short) 3, 0, kv("k1", "from nine")));
        assertThat(dup.baseOffset()).isEqualTo(lastOfNine);
    }

    @Test
    void aPowerLossAtAnyStepOfAPassLeavesALogBetweenBeforeAndAfter() throws Exception {
        // The log written under epoch 0 and taken over (epoch 1), so all of it is below the active
        // segment; cleaned once without a cut: what a finished pass gives.
        PartitionLog reference = writeCutLog(tmp.resolve("reference"), Disk.SYSTEM);
        List<Rec> before = contents(reference);
        clean(reference);
        List<Rec> after = contents(reference);
        assertThat(after.size()).isLessThan(before.size() / 3);

        int cuts = 0;
        for (int step = 0; ; step++) {
            Path dir = tmp.resolve("cut-" + step);
            PowerLossDisk disk = new PowerLossDisk();
            PartitionLog log = writeCutLog(dir, disk);
            boolean finished = disk.cutAfter(step, () -> clean(log));
            log.abandon();

            PartitionLog recovered = open(dir, 2, disk);
            List<Rec> found = contents(recovered);
            assertThat(before).as("cut after %d steps: nothing that was not written", step).containsAll(found);
            assertThat(found).as("cut after %d steps: every record a finished pass keeps", step).containsAll(after);
            assertThat(recovered.logEndOffset()).isEqualTo(reference.logEndOffset());
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()))
                        .noneMatch(n -> n.endsWith(".cleaned") || n.endsWith(".swap"));
            }
            // And the next pass completes the job.
            clean(recovered);
            assertThat(contents(recovered)).as("cut after %d steps, then a whole pass", step).isEqualTo(after);
            if (finished) {
                break;
            }
            cuts++;
        }
        assertThat(cuts).as("a pass has many steps to cut").isGreaterThan(10);
    }

    /**
     * A process that dies after {@code steps} more durable-state operations: everything it did
     * stays (unlike a power loss), and everything after fails. Lets a test stop a pass between
     * any two renames, which a power loss (back to the last directory fsync) never leaves.
     */
    static final class DyingDisk implements Disk {
        private int steps = Integer.MAX_VALUE;

        /** From now on, {@code steps} more operations succeed. */
        void dieAfter(int steps) {
            this.steps = steps;
        }

        boolean dead() {
            return steps < 0;
        }

        private void step() throws IOException {
            if (--steps < 0) {
                throw new IOException("process killed");
            }
        }

        @Override
        public java.nio.channels.FileChannel open(Path file, java.nio.file.OpenOption... options) throws IOException {
            step();
            return Disk.SYSTEM.open(file, options);
        }

        @Override
        public void move(Path from, Path to) throws IOException {
            step();
            Disk.SYSTEM.move(from, to);
        }

        @Override
        public void delete(Path file) throws IOException {
            step();
            Disk.SYSTEM.delete(file);
        }

        @Override
        public void fsyncDirectory(Path dir) {
            if (--steps < 0) {
                throw new java.io.UncheckedIOException(new IOException("process killed"));
            }
            Disk.SYSTEM.fsyncDirectory(dir);
        }
    }

    /** Cleaned in groups of several segments (written in 1 KiB ones): a kill can fall between two sources' renames. */
    PartitionLog openGrouping(Path dir, int epoch, Disk disk) throws IOException {
        Map<String, String> grouping = new HashMap<>(configs());
        grouping.put("segment.bytes", "8192");
        PartitionLog log = PartitionLog.open(dir, TP, TOPIC_ID, epoch, 1, LogConfig.from(grouping), clock::get, flusher, disk);
        opened.add(log);
        return log;
    }

    @Test
    void aKillBetweenAnyTwoStepsOfAPassLeavesALogRecoveryCompletes() throws Exception {
        writeCutLog(tmp.resolve("reference"), Disk.SYSTEM).close();
        PartitionLog reference = openGrouping(tmp.resolve("reference"), 2, Disk.SYSTEM);
        List<Rec> before = contents(reference);
        clean(reference);
        List<Rec> after = contents(reference);
        assertThat(reference.segmentCount()).as("several sources per cleaned segment").isLessThan(5);

        int kills = 0;
        for (int step = 0; ; step++) {
            Path dir = tmp.resolve("kill-" + step);
            writeCutLog(dir, Disk.SYSTEM).close();
            DyingDisk disk = new DyingDisk();
            PartitionLog log = openGrouping(dir, 2, disk);
            disk.dieAfter(step);
            boolean finished;
            try {
                clean(log);
                finished = !disk.dead();
            } catch (Exception | Error killed) {
                finished = false;
            }
            // Dead: its descriptors go with it, nothing more is written.
            for (LogSegment s : log.segments()) {
                s.channel().close();
            }

            PartitionLog recovered = openGrouping(dir, 3, Disk.SYSTEM);
            List<Rec> found = contents(recovered);
            assertThat(before).as("killed after %d steps: nothing that was not written", step).containsAll(found);
            assertThat(found).as("killed after %d steps: every record a finished pass keeps", step).containsAll(after);
            try (Stream<Path> files = Files.list(dir)) {
                List<String> names = files.map(p -> p.getFileName().toString()).toList();
                assertThat(names).noneMatch(n -> n.endsWith(".cleaned") || n.endsWith(".swap") || n.endsWith(".deleted"));
                for (String n : names) {
                    if (n.matches("[0-9a-f]{8}-[0-9]{20}\\.(index|timeindex|txnindex)")) {
                        assertThat(names).as("killed after %d steps: %s belongs to a segment", step, n)
                                .contains(n.replaceAll("\\.(index|timeindex|txnindex)$", ".log"));
                    }
                }
            }
            clean(recovered);
            assertThat(contents(recovered)).as("killed after %d steps, then a whole pass", step).isEqualTo(after);
            if (finished) {
                break;
            }
            kills++;
        }
        assertThat(kills).as("a pass has many steps to kill it at").isGreaterThan(10);
    }

    /** An owner deposed right after it committed a swap leaves its successor's files alone. */
    @Test
    void anOwnerDeposedAfterItsCommitDoesNotTouchItsSuccessorsFiles() throws Exception {
        Path dir = tmp.resolve("deposed");
        PartitionLog reference = writeCutLog(tmp.resolve("reference"), Disk.SYSTEM);
        clean(reference);
        List<Rec> after = contents(reference);
        writeCutLog(dir, Disk.SYSTEM).close();
        java.util.concurrent.CountDownLatch committed = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
        Disk pausing = new Disk() {
            @Override
            public java.nio.channels.FileChannel open(Path file, java.nio.file.OpenOption... options) throws IOException {
                return Disk.SYSTEM.open(file, options);
            }

            @Override
            public void move(Path from, Path to) throws IOException {
                Disk.SYSTEM.move(from, to);
            }

            @Override
            public void delete(Path file) throws IOException {
                Disk.SYSTEM.delete(file);
            }

            @Override
            public void fsyncDirectory(Path d) {
                Disk.SYSTEM.fsyncDirectory(d);
                boolean swapCommitted;
                try (Stream<Path> files = Files.list(d)) {
                    swapCommitted = files.anyMatch(p -> p.getFileName().toString().endsWith(".swap"));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                if (swapCommitted && committed.getCount() > 0) {
                    // A GC pause right after the commit.
                    committed.countDown();
                    try {
                        resume.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        PartitionLog old = open(dir, 2, pausing);
        var pass = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return clean(old);
            } catch (Exception e) {
                return Optional.<LogCleaner.Stats>empty();
            }
        });
        assertThat(committed.await(30, TimeUnit.SECONDS)).isTrue();

        // The successor takes over while the old owner is paused: its recovery finishes the swap.
        PartitionLog successor = open(dir, 3, Disk.SYSTEM);
        List<Rec> served = contents(successor);
        resume.countDown();
        pass.get(30, TimeUnit.SECONDS);
        assertThat(old.isFenced()).isTrue();

        assertThat(contents(successor)).isEqualTo(served);
        successor.close();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).as("nothing of the successor's renamed aside")
                    .noneMatch(n -> n.endsWith(".deleted"));
        }
        assertThat(contents(open(dir, 4, Disk.SYSTEM))).containsAll(after);
    }

    /** A close queued on the writer ahead of a pass's view does not wait for the pass's timeout. */
    @Test
    void aCloseQueuedAheadOfAPassDoesNotWaitForIt() throws Exception {
        Path dir = tmp.resolve("closing");
        PartitionLog log = writeCutLog(dir, Disk.SYSTEM);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor writer = new SerialExecutor(pool);
            java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
            writer.execute(() -> {
                try {
                    busy.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();
            writer.execute(() -> {
                try {
                    log.close();
                    closed.complete(null);
                } catch (IOException e) {
                    closed.completeExceptionally(e);
                }
            });
            var pass = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return cleaner.clean(log, writer, reaper);
                } catch (Exception e) {
                    return Optional.<LogCleaner.Stats>empty();
                }
            });
            org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(log::cleaningHeld);
            long t0 = System.nanoTime();
            busy.countDown();

            closed.get(10, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("the pass let go at once").isLessThan(5_000);
            assertThat(pass.get(10, TimeUnit.SECONDS)).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    /** Segments a pass replaced are closed by the reaper without writing their indexes over the cleaned segment's. */
    @Test
    void replacedSegmentsClosedLaterLeaveTheCleanedIndexesAlone() throws Exception {
        Path dir = tmp.resolve("indexes");
        Map<String, String> immediate = new HashMap<>(configs());
        immediate.put("file.delete.delay.ms", "0");
        immediate.put("segment.bytes", "1000000");
        PartitionLog first = PartitionLog.open(dir, TP, TOPIC_ID, 0, 1, LogConfig.from(immediate), clock::get, flusher, Disk.SYSTEM);
        opened.add(first);
        writeUpdates(first, 40);
        // Taken over without a close (a crash): the old epoch's one segment is recovered, not sealed by a roll.
        PartitionLog log = PartitionLog.open(dir, TP, TOPIC_ID, 1, 1, LogConfig.from(immediate), clock::get, flusher, Disk.SYSTEM);
        opened.add(log);
        LogSegment x = log.segments().get(0);
        clean(log);
        byte[] index = Files.readAllBytes(x.indexFile());
        byte[] timeIndex = Files.readAllBytes(x.timeIndexFile());

        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> reaper.getCompletedTaskCount() > 0);
        assertThat(Files.readAllBytes(x.indexFile())).isEqualTo(index);
        assertThat(Files.readAllBytes(x.timeIndexFile())).isEqualTo(timeIndex);
    }

    private PartitionLog writeCutLog(Path dir, Disk disk) throws Exception {
        PartitionLog log = open(dir, 0, disk);
        appendKeyed(log, CompressionType.NONE, kv("gone", "old"), kv("kept", "value"));
        append(log, txn(8, (short) 0, 0, kv("aborted", "a1")));
        marker(log, 8, false);
        writeUpdates(log, 30);
        append(log, idempotent(8, (short) 0, 1, kv("p8", "later")));
        log.close();
        return open(dir, 1, disk);
    }

    /**
     * The in-place walk of uncompressed batches writes, byte for byte, what kafka-clients' filterTo
     * writes: over passes that drop older values, keep tombstones and set their horizons, then drop
     * them, empty a producer's last batch, drop aborted data, on batches with records without keys, headers,
     * timestamps out of order, batches larger than the cleaner's buffers, and compressed batches
     * between them; the reference decides every record by its key, as Apache does.
     */
    @Test
    void cleaningInPlaceWritesExactlyWhatKafkaClientsWrites() throws Exception {
        LogCleaner reference = new LogCleaner(new LogCleaner.Settings(1 << 20, 16 * 1024, Double.MAX_VALUE), clock::get, ms -> { });
        reference.inPlace = false;
        // Records without keys, written while the topic was not yet compacted (a compacted one refuses them).
        Map<String, String> deletePolicy = new HashMap<>(configs());
        deletePolicy.put("cleanup.policy", "delete");
        for (String name : List.of("walked", "decoded")) {
            PartitionLog before = PartitionLog.open(tmp.resolve(name), TP, TOPIC_ID, 0, 1, LogConfig.from(deletePolicy), clock::get,
                    flusher, Disk.SYSTEM);
            appendKeyed(before, CompressionType.NONE, kv("a", "1"), new SimpleRecord(NOW, null, "no key".getBytes(StandardCharsets.UTF_8)),
                    kv("b", "2"), new SimpleRecord(NOW + 5, (byte[]) null, (byte[]) null));
            before.close();
        }
        PartitionLog walked = open(tmp.resolve("walked"), 1, Disk.SYSTEM);
        PartitionLog decoded = open(tmp.resolve("decoded"), 1, Disk.SYSTEM);
        java.util.Random random = new java.util.Random(42);
        int[] seq = new int[3];
        for (int round = 0; round < 4; round++) {
            long seed = random.nextLong();
            int[] next = null;
            for (PartitionLog log : List.of(walked, decoded)) {
                next = seq.clone();
                writeMixed(log, new java.util.Random(seed), next, round);
            }
            seq = next;
            Optional<LogCleaner.Stats> a = cleaner.clean(walked, Runnable::run, reaper);
            Optional<LogCleaner.Stats> b = reference.clean(decoded, Runnable::run, reaper);
            assertThat(a).isPresent();
            assertThat(a.get().recordsKept()).isEqualTo(b.orElseThrow().recordsKept());
            assertThat(a.get().recordsRead()).isEqualTo(b.get().recordsRead());
            assertThat(a.get().bytesWritten()).isEqualTo(b.get().bytesWritten());
            assertThat(segmentBytes(walked)).as("round " + round).isEqualTo(segmentBytes(decoded));
            // Past the horizons the first passes set: the next pass drops those tombstones and markers.
            clock.addAndGet(round == 1 ? DELETE_RETENTION + 1 : 1_000);
        }
        assertThat(cleaner.walkedBatches).as("batches cleaned in place").isGreaterThan(100);
        assertThat(contents(walked)).isEqualTo(contents(decoded));
    }

    /**
     * The one documented difference from kafka-clients: a kept record whose header key is not
     * UTF-8 keeps its bytes in a rebuilt batch, where kafka-clients decodes the key to a string
     * and writes U+FFFD (three bytes) in its place. Every field reads back the same either way.
     */
    @Test
    void aHeaderKeyThatIsNotUtf8KeepsItsBytesWhereKafkaClientsReplacesIt() throws Exception {
        MemoryRecords crafted = MemoryRecords.withRecords(CompressionType.NONE, kv("x", "old"),
                new SimpleRecord(NOW, "x".getBytes(StandardCharsets.UTF_8), "new".getBytes(StandardCharsets.UTF_8),
                        new org.apache.kafka.common.header.Header[] {new org.apache.kafka.common.header.internals.RecordHeader("h", new byte[] {1})}));
        ByteBuffer b = crafted.buffer();
        RecordScan scan = new RecordScan();
        scan.open(b, 0, crafted.batches().iterator().next());
        scan.next();
        scan.next();
        // The second record ends with: header count, key length, "h", value length, value.
        int headerKey = scan.recordEnd - 3;
        assertThat(b.get(headerKey)).isEqualTo((byte) 'h');
        b.put(headerKey, (byte) 0xff);
        b.putInt(17, (int) org.apache.kafka.common.utils.Crc32C.compute(b, 21, b.limit() - 21));
        byte[] tail = java.util.Arrays.copyOfRange(b.array(), scan.tailStart, scan.recordEnd);

        LogCleaner reference = new LogCleaner(new LogCleaner.Settings(1 << 20, 16 * 1024, Double.MAX_VALUE), clock::get, ms -> { });
        reference.inPlace = false;
        Map<String, String> files = new HashMap<>();
        for (String name : List.of("walked", "decoded")) {
            PartitionLog log = open(tmp.resolve(name), 0, Disk.SYSTEM);
            append(log, MemoryRecords.readableRecords(b.duplicate()));
            writeUpdates(log, 20);
            assertThat((name.equals("walked") ? cleaner : reference).clean(log, Runnable::run, reaper)).isPresent();
            files.put(name, String.join("", segmentBytes(log).values()));
            assertThat(contents(log)).contains(new Rec(1, "x", "new", -1));
        }
        String original = java.util.HexFormat.of().formatHex(tail);
        String replaced = original.replace("02ff02", "06efbfbd02");
        assertThat(files.get("walked")).contains(original).doesNotContain(replaced);
        assertThat(files.get("decoded")).contains(replaced).doesNotContain(original);
    }

    /** About 120 batches: mostly uncompressed, some gzip, some idempotent, one transaction committed and one aborted. */
    private void writeMixed(PartitionLog log, java.util.Random random, int[] seq, int round) throws Exception {
        for (int b = 0; b < 120; b++) {
            int n = 1 + random.nextInt(8);
            SimpleRecord[] records = new SimpleRecord[n];
            for (int i = 0; i < n; i++) {
                byte[] key = ("key-" + random.nextInt(25)).getBytes(StandardCharsets.UTF_8);
                byte[] value = random.nextInt(6) == 0 ? null : ("value-" + random.nextInt(1000) + "-".repeat(random.nextInt(40)))
                        .getBytes(StandardCharsets.UTF_8);
                org.apache.kafka.common.header.Header[] headers = random.nextInt(4) == 0
                        ? new org.apache.kafka.common.header.Header[] {new org.apache.kafka.common.header.internals.RecordHeader("h", new byte[] {1, 2})}
                        : new org.apache.kafka.common.header.Header[0];
                // Timestamps out of order within a batch, some far before the batch's first.
                long timestamp = NOW - random.nextInt(3) * 100_000_000L + random.nextInt(10_000);
                records[i] = new SimpleRecord(timestamp, key, value, headers);
            }
            int kind = random.nextInt(10);
            if (kind == 0) {
                appendKeyed(log, CompressionType.GZIP, records);
            } else if (kind <= 2) {
                int producer = kind;
                append(log, MemoryRecords.withIdempotentRecords(CompressionType.NONE, 20 + producer, (short) 0, seq[producer], records));
                seq[producer] += n;
            } else {
                appendKeyed(log, CompressionType.NONE, records);
            }
            if (b % 30 == 7) {
                // Larger than the cleaner's 16 KiB buffers: read and rebuilt through grown ones.
                SimpleRecord[] large = new SimpleRecord[60];
                for (int i = 0; i < large.length; i++) {
                    large[i] = kv("key-" + random.nextInt(25), "v".repeat(400) + random.nextInt(1000));
                }
                appendKeyed(log, CompressionType.NONE, large);
            }
            if (b == 40 || b == 80) {
                long pid = 1000L * round + 30 + b;
                append(log, txn(pid, (short) 0, 0, records));
                marker(log, pid, b == 40);
            }
        }
    }

    /** Every segment file's bytes in hex, by name. */
    static Map<String, String> segmentBytes(PartitionLog log) throws IOException {
        Map<String, String> out = new java.util.TreeMap<>();
        for (LogSegment s : log.segments()) {
            out.put(s.file().getFileName().toString(), java.util.HexFormat.of().formatHex(Files.readAllBytes(s.file())));
        }
        return out;
    }
}
