package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionLogTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";

    @TempDir
    Path tmp;

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    private final ExecutorService flusher = Executors.newFixedThreadPool(2);
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    private Path dir() {
        return tmp.resolve("orders-" + TOPIC_ID).resolve("0");
    }

    private PartitionLog open(int epoch, Map<String, String> configs) throws IOException {
        return open(dir(), epoch, configs, flusher);
    }

    private PartitionLog open(Path dir, int epoch, Map<String, String> configs, Executor flush) throws IOException {
        PartitionLog log = PartitionLog.open(dir, TP, TOPIC_ID, epoch, 1, LogConfig.from(configs), clock::get, flush);
        opened.add(log);
        return log;
    }

    private static MemoryRecords batch(String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(1_700_000_000_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    values[i].getBytes(StandardCharsets.UTF_8), new RecordHeader[] {new RecordHeader("h", new byte[] {(byte) i})});
        }
        return MemoryRecords.withRecords(CompressionType.NONE, records);
    }

    private static MemoryRecords idempotent(long pid, short epoch, int seq, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(1_700_000_000_000L, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withIdempotentRecords(CompressionType.NONE, pid, epoch, seq, records);
    }

    private static List<String> values(MemoryRecords records) {
        List<String> out = new ArrayList<>();
        for (RecordBatch b : records.batches()) {
            for (Record r : b) {
                out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.value()));
            }
        }
        return out;
    }

    private void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    /** Storage work a test queues on a partition's writer, as the produce path does. */
    private interface WriterTask {
        void run() throws IOException;
    }

    private static Runnable onWriter(WriterTask task) {
        return () -> {
            try {
                task.run();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
    }

    /**
     * flush.messages changed by AlterConfigs between an append's publish (under fsync
     * acknowledgement: the high watermark waits) and its acknowledgement (now page-cache: at once):
     * the acknowledged record is visible, not left below a high watermark nothing moves.
     */
    @Test
    void anAppendAcknowledgedAfterFlushMessagesChangedIsVisible() throws Exception {
        PartitionLog log = open(0, Map.of());
        var r = log.append(batch("a", "b"));
        assertThat(log.highWatermark()).as("fsync acknowledgement: not yet").isZero();

        log.updateConfig(LogConfig.from(Map.of("flush.messages", "1000")));

        log.awaitDurable(r.lastOffset() + 1).get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(log.highWatermark()).isEqualTo(r.lastOffset() + 1);
    }

    @Test
    void everyGroupCommitIsObservedWithTheAppendsItAcknowledged() throws Exception {
        PartitionLog log = open(0, Map.of());
        List<long[]> rounds = java.util.Collections.synchronizedList(new ArrayList<>());
        log.observe(new LogObserver() {
            @Override
            public void groupCommit(long fsyncNanos, long fenceNanos, int appends) {
                rounds.add(new long[] {fsyncNanos, fenceNanos, appends});
            }

            @Override
            public void takeover(long nanos) {
            }
        });

        var first = log.append(batch("a"));
        var second = log.append(batch("b"));
        var third = log.append(batch("c"));
        CompletableFuture.allOf(log.awaitDurable(first.lastOffset() + 1), log.awaitDurable(second.lastOffset() + 1),
                log.awaitDurable(third.lastOffset() + 1)).get(10, TimeUnit.SECONDS);
        // The observer hears of a round after its appends were acknowledged (an ack never waits for
        // metrics), so the last round may reach it a moment after the futures completed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (rounds.stream().mapToLong(r -> r[2]).sum() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }

        assertThat(rounds).isNotEmpty();
        assertThat(rounds.stream().mapToLong(r -> r[2]).sum()).as("every waiting append, once").isEqualTo(3);
        assertThat(rounds).allSatisfy(r -> assertThat(r[0]).as("fsync time").isNotNegative());
        assertThat(rounds).allSatisfy(r -> assertThat(r[1]).as("fence check time").isNotNegative());
    }

    @Test
    void appendAssignsOffsetsAndReadReturnsTheSameBytes() throws Exception {
        PartitionLog log = open(0, Map.of());
        appendDurably(log, batch("a", "b"));
        var third = log.append(batch("c"));
        log.awaitDurable(third.lastOffset() + 1).get(10, TimeUnit.SECONDS);

        assertThat(third.baseOffset()).isEqualTo(2);
        assertThat(log.highWatermark()).isEqualTo(3);
        MemoryRecords read = log.read(0, 1 << 20, true, log.highWatermark());
        assertThat(values(read)).containsExactly("0:a", "1:b", "2:c");
        for (RecordBatch b : read.batches()) {
            b.ensureValid();
            assertThat(b.partitionLeaderEpoch()).isZero();
        }
        Record first = read.batches().iterator().next().iterator().next();
        assertThat(first.headers()[0].key()).isEqualTo("h");
        assertThat(first.timestamp()).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void readStopsAtTheHighWatermarkAndHonoursMaxBytes() throws Exception {
        PartitionLog log = open(0, Map.of());
        for (int i = 0; i < 10; i++) {
            appendDurably(log, batch("v" + i));
        }
        MemoryRecords upTo5 = log.read(0, 1 << 20, true, 5);
        assertThat(values(upTo5)).hasSize(5);
        int oneBatch = log.read(0, 1 << 20, true, 1).sizeInBytes();
        assertThat(values(log.read(0, oneBatch * 2 + 1, true, 10))).hasSize(2);
        assertThat(values(log.read(3, 1, true, 10))).as("KIP-74: first batch whole even when larger").containsExactly("3:v3");
        assertThat(log.read(3, 1, false, 10).sizeInBytes()).isZero();
    }

    @Test
    void rollsSegmentsBySizeAndFindsEveryOffsetThroughTheIndex() throws Exception {
        PartitionLog log = open(0, Map.of("segment.bytes", "2000", "index.interval.bytes", "150"));
        for (int i = 0; i < 200; i++) {
            appendDurably(log, batch("value-" + i, "second-" + i));
        }
        assertThat(log.segmentCount()).isGreaterThan(5);
        for (long offset = 0; offset < 400; offset++) {
            List<String> got = values(log.read(offset, 200, true, log.highWatermark()));
            assertThat(got).as("offset %d", offset).isNotEmpty();
            long firstOffset = Long.parseLong(got.get(0).split(":")[0]);
            assertThat(firstOffset).isLessThanOrEqualTo(offset).isGreaterThanOrEqualTo(offset - 1);
        }
        assertThat(Files.list(dir()).filter(p -> p.toString().endsWith(".log")).count()).isEqualTo(log.segmentCount());
    }

    @Test
    void everyLegalTopicNameGetsADirectoryThatFitsTheFileSystem() throws Exception {
        String longest = "t".repeat(249);
        String otherWithSamePrefix = "t".repeat(248) + "u";
        Path a = PartitionLog.directory(tmp, longest, "BBBBBBBBBBBBBBBBBBBBBB", 0);
        Path b = PartitionLog.directory(tmp, otherWithSamePrefix, "CCCCCCCCCCCCCCCCCCCCCC", 0);
        assertThat(a.getParent().getFileName().toString()).hasSizeLessThanOrEqualTo(255);
        assertThat(a.getParent()).as("the topic ID keeps them apart").isNotEqualTo(b.getParent());

        PartitionLog log = open(a, 0, Map.of(), flusher);
        appendDurably(log, batch("a"));
        assertThat(values(log.read(0, 1 << 20, true, log.highWatermark()))).containsExactly("0:a");
        assertThat(PartitionLog.directory(tmp, "orders", TOPIC_ID, 0)).as("short names keep today's layout")
                .isEqualTo(tmp.resolve("orders-" + TOPIC_ID).resolve("0"));
    }

    @Test
    void aPartitionHoldsOneDescriptorPerSegment() throws Exception {
        Path fds = Path.of("/proc/self/fd");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(fds), "needs /proc");
        long before;
        try (var l = Files.list(fds)) {
            before = l.count();
        }
        PartitionLog log = open(0, Map.of("segment.bytes", "500"));
        for (int i = 0; i < 20; i++) {
            appendDurably(log, batch("value-" + i, "second-" + i));
        }
        log.close();
        opened.clear();
        PartitionLog reopened = open(1, Map.of("segment.bytes", "500"));
        long after;
        try (var l = Files.list(fds)) {
            after = l.count();
        }
        assertThat(reopened.segmentCount()).isGreaterThan(5);
        assertThat(after - before).as("descriptors for %d segments (indexes are not held open)", reopened.segmentCount())
                .isLessThanOrEqualTo(reopened.segmentCount() + 1);
    }

    @Test
    void indexesLeftShortByAPowerLossAreRebuiltNotTrusted() throws Exception {
        // Indexes are never fsynced: after a power loss a sealed segment's index files can exist and be empty.
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        Map<String, String> small = Map.of("segment.bytes", "400", "index.interval.bytes", "100");
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(small), clock::get, flusher, disk);
        for (int i = 0; i < 30; i++) {
            SimpleRecord r = new SimpleRecord(1_700_000_000_000L + i * 1000L, ("v" + i).getBytes(StandardCharsets.UTF_8));
            appendDurably(log, MemoryRecords.withRecords(CompressionType.NONE, r));
        }
        log.close();
        disk.powerLoss();

        PartitionLog reopened = open(1, small);
        assertThat(reopened.segmentCount()).isGreaterThan(3);
        for (int i = 0; i < 30; i++) {
            assertThat(reopened.offsetForTimestamp(1_700_000_000_000L + i * 1000L, 30))
                    .as("ListOffsets by timestamp of record %d", i).map(PartitionLog.TimestampAndOffset::offset).contains((long) i);
            assertThat(values(reopened.read(i, 1, true, 30)).get(0)).startsWith(i + ":");
        }
    }

    @Test
    void rollsSegmentsByAge() throws Exception {
        PartitionLog log = open(0, Map.of("segment.ms", "1000"));
        appendDurably(log, batch("a"));
        clock.addAndGet(1500);
        appendDurably(log, batch("b"));
        assertThat(log.segmentCount()).isEqualTo(2);
    }

    @Test
    void segmentNamesCarryTheLeaderEpoch() throws Exception {
        PartitionLog log = open(3, Map.of());
        appendDurably(log, batch("a"));
        log.close();
        opened.clear();
        PartitionLog next = open(4, Map.of());
        appendDurably(next, batch("b"));
        try (var files = Files.list(dir())) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log")).sorted())
                    .containsExactly("00000003-00000000000000000000.log", "00000004-00000000000000000001.log");
        }
        assertThat(values(next.read(0, 1 << 20, true, 2))).containsExactly("0:a");
        assertThat(next.epochForOffset(1)).isEqualTo(4);
    }

    @Test
    void recoveryTruncatesALastBatchTornAtEveryByte() throws Exception {
        PartitionLog log = open(0, Map.of());
        appendDurably(log, batch("one", "two"));
        appendDurably(log, batch("three"));
        long lastStart = lastBatchPosition(log);
        long end = segmentFile().toFile().length();
        log.abandon();
        opened.clear();
        byte[] original = Files.readAllBytes(segmentFile());

        for (long cut = lastStart; cut < end; cut++) {
            Path copy = tmp.resolve("cut-" + cut);
            copyDir(dir(), copy);
            try (FileChannel ch = FileChannel.open(copy.resolve(segmentFile().getFileName()), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            PartitionLog recovered = open(copy, 1, Map.of(), flusher);
            assertThat(recovered.logEndOffset()).as("cut at %d", cut).isEqualTo(2);
            assertThat(values(recovered.read(0, 1 << 20, true, recovered.highWatermark()))).containsExactly("0:one", "1:two");
            recovered.abandon();
        }
        assertThat(Files.readAllBytes(segmentFile())).isEqualTo(original);
    }

    @Test
    void recoveryDropsGarbageAfterTheLastBatchAndCorruptBytesInside() throws Exception {
        PartitionLog log = open(0, Map.of());
        appendDurably(log, batch("one"));
        appendDurably(log, batch("two"));
        long lastStart = lastBatchPosition(log);
        log.abandon();
        opened.clear();
        Path first = segmentFile();
        long validEnd = first.toFile().length();
        Files.write(first, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                StandardOpenOption.APPEND);

        PartitionLog recovered = open(1, Map.of());
        assertThat(recovered.logEndOffset()).isEqualTo(2);
        assertThat(first.toFile().length()).isEqualTo(validEnd);
        appendDurably(recovered, batch("three"));
        recovered.abandon();
        opened.clear();

        // Flip one byte inside epoch 0's last batch: the CRC no longer matches, the batch goes. The
        // volume lost a record it had fsynced, but epoch 1's acknowledged record is not dropped for
        // it: the log keeps a gap at offset 1 (consumers skip gaps, as after compaction).
        try (FileChannel ch = FileChannel.open(first, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, validEnd - 2);
            b.flip();
            byte flipped = (byte) (b.get(0) ^ 0xFF);
            ch.write(ByteBuffer.wrap(new byte[] {flipped}), validEnd - 2);
        }
        PartitionLog again = open(2, Map.of());
        assertThat(again.logEndOffset()).isEqualTo(3);
        assertThat(first.toFile().length()).isEqualTo(lastStart);
        assertThat(values(again.read(0, 1 << 20, true, again.highWatermark()))).containsExactly("0:one");
        assertThat(values(again.read(1, 1 << 20, true, again.highWatermark()))).containsExactly("2:three");
    }

    @Test
    void missingOrCorruptIndexesAreRebuilt() throws Exception {
        PartitionLog log = open(0, Map.of("segment.bytes", "1500", "index.interval.bytes", "100"));
        for (int i = 0; i < 60; i++) {
            appendDurably(log, batch("value-" + i));
        }
        log.close();
        opened.clear();
        try (var files = Files.list(dir())) {
            for (Path p : files.toList()) {
                String n = p.getFileName().toString();
                if (n.endsWith(".index")) {
                    Files.delete(p);
                } else if (n.endsWith(".timeindex")) {
                    Files.write(p, new byte[] {9, 9, 9});
                }
            }
        }
        PartitionLog reopened = open(1, Map.of("segment.bytes", "1500", "index.interval.bytes", "100"));
        assertThat(reopened.logEndOffset()).isEqualTo(60);
        for (long offset = 0; offset < 60; offset++) {
            assertThat(values(reopened.read(offset, 100, true, 60)).get(0)).startsWith(offset + ":");
        }
        assertThat(reopened.offsetForTimestamp(0, 60)).map(PartitionLog.TimestampAndOffset::offset).contains(0L);
    }

    @Test
    void idempotentDuplicatesGetTheirOriginalOffsetsAndGapsAreRejected() throws Exception {
        PartitionLog log = open(0, Map.of());
        appendDurably(log, batch("other"));
        var first = log.append(idempotent(7, (short) 0, 0, "a", "b"));
        var second = log.append(idempotent(7, (short) 0, 2, "c"));
        assertThat(first.baseOffset()).isEqualTo(1);
        assertThat(second.baseOffset()).isEqualTo(3);

        var retry = log.append(idempotent(7, (short) 0, 0, "a", "b"));
        assertThat(retry.baseOffset()).isEqualTo(1);
        assertThat(log.logEndOffset()).isEqualTo(4);

        assertThatThrownBy(() -> log.append(idempotent(7, (short) 0, 5, "gap"))).isInstanceOf(OutOfOrderSequenceException.class);
        var bumped = log.append(idempotent(7, (short) 1, 0, "new epoch"));
        assertThat(bumped.baseOffset()).isEqualTo(4);
        assertThatThrownBy(() -> log.append(idempotent(7, (short) 0, 3, "stale"))).isInstanceOf(InvalidProducerEpochException.class);
        assertThatThrownBy(() -> log.append(idempotent(7, (short) 2, 4, "new epoch must start at 0"))).isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.logEndOffset()).isEqualTo(5);
    }

    @Test
    void theDedupeWindowIsFiveBatches() throws Exception {
        PartitionLog log = open(0, Map.of());
        for (int seq = 0; seq < 6; seq++) {
            log.append(idempotent(9, (short) 0, seq, "v" + seq));
        }
        assertThat(log.append(idempotent(9, (short) 0, 1, "v1")).baseOffset()).as("still in the window").isEqualTo(1);
        assertThatThrownBy(() -> log.append(idempotent(9, (short) 0, 0, "v0"))).as("fell out of the window")
                .isInstanceOf(OutOfOrderSequenceException.class);
    }

    @Test
    void producerStateSurvivesCleanCloseAndCrash() throws Exception {
        PartitionLog log = open(0, Map.of());
        var r = log.append(idempotent(11, (short) 0, 0, "a"));
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
        log.close();
        opened.clear();
        PartitionLog afterClose = open(1, Map.of());
        assertThat(afterClose.append(idempotent(11, (short) 0, 0, "a")).baseOffset()).isZero();
        var r2 = afterClose.append(idempotent(11, (short) 0, 1, "b"));
        afterClose.awaitDurable(r2.lastOffset() + 1).get(10, TimeUnit.SECONDS);
        afterClose.abandon();
        opened.clear();
        Files.deleteIfExists(dir().resolve(PartitionLog.PRODUCER_STATE));
        PartitionLog afterCrash = open(2, Map.of());
        assertThat(afterCrash.append(idempotent(11, (short) 0, 1, "b")).baseOffset()).isEqualTo(1);
        assertThatThrownBy(() -> afterCrash.append(idempotent(11, (short) 0, 3, "gap"))).isInstanceOf(OutOfOrderSequenceException.class);
    }

    /**
     * A takeover's race, as ClusterIT met it: the new leader refused a producer's first batch
     * here (seq 0, still opening the partition) and the next request (seq 89) arrived once it was
     * open. Accepted, seq 0 could never follow and the producer's retries ran out.
     */
    @Test
    void aProducerFirstSeenPastSequenceZeroIsOutOfOrderUntilItsEarlierBatchesLand() throws Exception {
        PartitionLog log = open(0, Map.of());
        assertThatThrownBy(() -> log.append(idempotent(21, (short) 0, 89, "late"))).isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.logEndOffset()).as("nothing written").isZero();
        assertThat(log.append(idempotent(21, (short) 0, 0, "first")).baseOffset()).isZero();
        assertThat(log.append(idempotent(21, (short) 0, 1, "late")).baseOffset()).isEqualTo(1);
        assertThat(log.append(idempotent(22, (short) 3, 0, "a bumped epoch starts at 0")).baseOffset()).isEqualTo(2);
    }

    /**
     * Once the head of the log is gone a rebuilt window may lack producers whose last batches went
     * with it: such a producer is taken at any sequence, as Apache 3.7 takes it, even after a
     * clean close in between (the snapshot remembers).
     */
    @Test
    void aWindowRebuiltAfterTheHeadWasDeletedTakesAnUnknownProducerAtAnySequence() throws Exception {
        PartitionLog log = open(0, Map.of());
        appendDurably(log, idempotent(31, (short) 0, 0, "a", "b"));
        appendDurably(log, batch("other"));
        log.deleteRecordsBefore(2);
        log.abandon();
        opened.clear();
        Files.deleteIfExists(dir().resolve(PartitionLog.PRODUCER_STATE));
        PartitionLog afterCrash = open(1, Map.of());
        assertThat(afterCrash.append(idempotent(31, (short) 0, 2, "c")).baseOffset()).isEqualTo(3);
        assertThat(afterCrash.append(idempotent(32, (short) 0, 7, "another")).baseOffset()).isEqualTo(4);
        afterCrash.close();
        opened.clear();
        PartitionLog afterClose = open(2, Map.of());
        assertThat(afterClose.append(idempotent(33, (short) 0, 9, "still")).baseOffset()).isEqualTo(5);

        Path fresh = tmp.resolve("fresh-" + TOPIC_ID).resolve("0");
        PartitionLog whole = open(fresh, 0, Map.of(), flusher);
        appendDurably(whole, idempotent(31, (short) 0, 0, "a"));
        whole.abandon();
        Files.deleteIfExists(fresh.resolve(PartitionLog.PRODUCER_STATE));
        PartitionLog wholeAfterCrash = open(fresh, 1, Map.of(), flusher);
        assertThatThrownBy(() -> wholeAfterCrash.append(idempotent(34, (short) 0, 9, "gap"))).as("the whole log: nobody is missing")
                .isInstanceOf(OutOfOrderSequenceException.class);
    }

    @Test
    void invalidBatchesWriteNothing() throws Exception {
        PartitionLog log = open(0, Map.of("max.message.bytes", "200", "message.timestamp.before.max.ms", "1000"));
        appendDurably(log, batch("ok"));
        long size = segmentFile().toFile().length();

        MemoryRecords corrupt = batch("corrupt me");
        corrupt.buffer().put(corrupt.sizeInBytes() - 1, (byte) 0x55);
        assertThatThrownBy(() -> log.append(corrupt)).isInstanceOf(CorruptRecordException.class);
        assertThatThrownBy(() -> log.append(batch("x".repeat(500)))).isInstanceOf(RecordTooLargeException.class);
        MemoryRecords old = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(clock.get() - 5000, "old".getBytes()));
        assertThatThrownBy(() -> log.append(old)).isInstanceOf(InvalidTimestampException.class);

        assertThat(segmentFile().toFile().length()).isEqualTo(size);
        assertThat(log.logEndOffset()).isEqualTo(1);
    }

    @Test
    void logAppendTimeRewritesTheBatchTimestamp() throws Exception {
        PartitionLog log = open(0, Map.of("message.timestamp.type", "LogAppendTime"));
        var r = log.append(batch("a"));
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
        assertThat(r.logAppendTime()).isEqualTo(clock.get());
        RecordBatch b = log.read(0, 1 << 20, true, 1).batches().iterator().next();
        b.ensureValid();
        assertThat(b.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(b.maxTimestamp()).isEqualTo(clock.get());
    }

    /**
     * An open makes its fence claim and its new segment durable with one directory fsync at its
     * end rather than one per name: a power loss at any step of a takeover that acknowledged a
     * record must leave that record and the new owner's fence, so the old owner can never come
     * back under its epoch.
     */
    @Test
    void aTakeoverThatAcknowledgedSurvivesAPowerLossAtEveryStep() throws Exception {
        takeOverWithAPowerCutAtEveryStep(true);
    }

    /** The previous owner wrote nothing: the new segment supersedes its empty one at offset 0. */
    @Test
    void aTakeoverOfAnEmptyLogSurvivesAPowerLossAtEveryStep() throws Exception {
        takeOverWithAPowerCutAtEveryStep(false);
    }

    private void takeOverWithAPowerCutAtEveryStep(boolean firstAppends) throws Exception {
        int acknowledgedRuns = 0;
        for (int s = 0; s < 80; s++) {
            int steps = s;
            Path dir = tmp.resolve("cut-" + firstAppends + "-" + steps).resolve("0");
            PartitionLog first = open(dir, 0, Map.of(), flusher);
            if (firstAppends) {
                appendDurably(first, batch("before"));
            }
            first.abandon();
            dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
            boolean acknowledged = disk.cutAfter(steps, () -> {
                PartitionLog successor = PartitionLog.open(dir, TP, TOPIC_ID, 1, 2, LogConfig.from(Map.of()), clock::get, flusher, disk);
                opened.add(successor);
                appendDurably(successor, batch("after"));
            });
            if (acknowledged) {
                acknowledgedRuns++;
                // The fence's own file, not only the segment names or the legacy file that also say epoch 1.
                assertThat(dir.resolve("leader-epochs").resolve("00000001")).as("cut after %d steps: the claim is durable", steps)
                        .exists();
                assertThatThrownBy(() -> open(dir, 0, Map.of(), flusher)).as("cut after %d steps: the old epoch is refused", steps)
                        .isInstanceOf(NotLeaderOrFollowerException.class);
            }
            PartitionLog next = open(dir, 2, Map.of(), flusher);
            List<String> all = new ArrayList<>(values(next.read(0, 1 << 20, true, next.highWatermark())));
            if (firstAppends && next.highWatermark() > 1) {
                all.addAll(values(next.read(1, 1 << 20, true, next.highWatermark())));
            }
            if (acknowledged) {
                assertThat(all).as("cut after %d steps", steps).containsExactlyElementsOf(firstAppends ? List.of("0:before", "1:after") : List.of("0:after"));
            } else if (firstAppends) {
                // A takeover cut short acknowledged nothing, and cost nothing acknowledged before it.
                assertThat(all).as("cut after %d steps", steps).startsWith("0:before");
            }
        }
        assertThat(acknowledgedRuns).as("some cuts came after the acknowledgement").isPositive();
    }

    @Test
    void deposedLeaderCannotAcknowledgeAfterANewerFence() throws Exception {
        PartitionLog old = open(0, Map.of());
        appendDurably(old, batch("acknowledged"));
        PartitionLog successor = open(1, Map.of());
        assertThat(successor.logEndOffset()).isEqualTo(1);

        var late = old.append(batch("late"));
        CompletableFuture<Void> ack = old.awaitDurable(late.lastOffset() + 1);
        assertThat(ack).failsWithin(10, TimeUnit.SECONDS).withThrowableThat().withCauseInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(old.highWatermark()).isEqualTo(1);
        assertThat(old.isFenced()).isTrue();
        assertThatThrownBy(() -> old.append(batch("after"))).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(values(successor.read(0, 1 << 20, true, successor.highWatermark()))).containsExactly("0:acknowledged");
    }

    @Test
    void concurrentAppendsShareFsyncs() throws Exception {
        // Counted at the file channel: one flush loop may run many fsyncs, so counting loop submissions proves nothing.
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        java.util.Queue<Runnable> pending = new java.util.concurrent.ConcurrentLinkedQueue<>();
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of()), clock::get, pending::add, disk);
        opened.add(log);
        long before = disk.forces(".log");
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            var r = log.append(batch("v" + i));
            acks.add(log.awaitDurable(r.lastOffset() + 1));
        }
        assertThat(acks).noneMatch(CompletableFuture::isDone);
        Runnable task;
        while ((task = pending.poll()) != null) {
            task.run();
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        assertThat(log.highWatermark()).isEqualTo(500);
        assertThat(disk.forces(".log") - before).as("fsyncs for 500 concurrent acks=all appends").isEqualTo(1);
    }

    @Test
    void theWriterRunsTheGroupCommitAfterItsQueuedAppendsAreWritten() throws Exception {
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        java.util.Queue<Runnable> flushPool = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.Queue<Runnable> writerPool = new java.util.concurrent.ConcurrentLinkedQueue<>();
        SerialExecutor writer = new SerialExecutor(writerPool::add);
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of()), clock::get, flushPool::add, disk);
        opened.add(log);
        long before = disk.forces(".log");
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        List<Long> forcesSeenByAppends = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String v = "v" + i;
            writer.execute(onWriter(() -> {
                forcesSeenByAppends.add(disk.forces(".log"));
                var r = log.append(batch(v));
                acks.add(log.awaitDurable(r.lastOffset() + 1, writer));
            }));
        }
        assertThat(writerPool).as("one drain of the writer runs everything").hasSize(1);
        writerPool.poll().run();

        // The group commit waits for the queued appends, but for at most MAX_IDLE_WAIT_TASKS of them.
        assertThat(forcesSeenByAppends.stream().filter(f -> f == before).count()).as("appends written before the first fsync")
                .isEqualTo(SerialExecutor.MAX_IDLE_WAIT_TASKS + 1);
        assertThat(acks).hasSize(200).allMatch(CompletableFuture::isDone);
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(1, TimeUnit.SECONDS);
        assertThat(disk.forces(".log") - before).as("fsyncs, run by the writer, for 200 queued appends").isBetween(3L, 4L);
        assertThat(flushPool).as("no flush thread woken").isEmpty();
        assertThat(log.highWatermark()).isEqualTo(200);
    }

    @Test
    void anAcknowledgementTheWriterGaveSurvivesAPowerLossAndNothingIsAcknowledgedBeforeItsFsync() throws Exception {
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        java.util.concurrent.atomic.AtomicReference<CompletableFuture<Void>> ackAtForce = new java.util.concurrent.atomic.AtomicReference<>();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor writer = new SerialExecutor(pool);
            PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of()), clock::get, flusher, disk);
            opened.add(log);
            CompletableFuture<CompletableFuture<Void>> ack = new CompletableFuture<>();
            disk.beforeForce(file -> {
                if (file.endsWith(".log") && ack.isDone()) {
                    ackAtForce.compareAndSet(null, ack.join());
                    assertThat(ack.join()).as("not acknowledged before its fsync").isNotDone();
                }
            });
            writer.execute(() -> {
                try {
                    var r = log.append(batch("acknowledged"));
                    ack.complete(log.awaitDurable(r.lastOffset() + 1, writer));
                } catch (Throwable e) {
                    ack.completeExceptionally(e);
                }
            });
            ack.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
            assertThat(ackAtForce.get()).as("the fsync ran after the append asked for it").isNotNull();
            disk.powerLoss();
        } finally {
            pool.shutdownNow();
        }

        PartitionLog reopened = open(1, Map.of());
        assertThat(values(reopened.read(0, 1 << 20, true, reopened.highWatermark()))).containsExactly("0:acknowledged");
    }

    @Test
    void aDeposedLeadersWriterCannotAcknowledge() throws Exception {
        PartitionLog old = open(0, Map.of());
        appendDurably(old, batch("acknowledged"));
        PartitionLog successor = open(1, Map.of());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor writer = new SerialExecutor(pool);
            CompletableFuture<CompletableFuture<Void>> ack = new CompletableFuture<>();
            writer.execute(() -> {
                try {
                    var late = old.append(batch("late"));
                    ack.complete(old.awaitDurable(late.lastOffset() + 1, writer));
                } catch (Throwable e) {
                    ack.completeExceptionally(e);
                }
            });
            assertThat(ack.get(10, TimeUnit.SECONDS)).failsWithin(10, TimeUnit.SECONDS).withThrowableThat()
                    .withCauseInstanceOf(NotLeaderOrFollowerException.class);
        } finally {
            pool.shutdownNow();
        }
        assertThat(old.highWatermark()).isEqualTo(1);
        assertThat(values(successor.read(0, 1 << 20, true, successor.highWatermark()))).containsExactly("0:acknowledged");
    }

    @Test
    void aCloseQueuedBehindAppendsAcknowledgesWhatItsFsyncCoveredAndNothingLater() throws Exception {
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        java.util.Queue<Runnable> writerPool = new java.util.concurrent.ConcurrentLinkedQueue<>();
        SerialExecutor writer = new SerialExecutor(writerPool::add);
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of()), clock::get, flusher, disk);
        opened.add(log);
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        writer.execute(onWriter(() -> {
            var r = log.append(batch("before-close"));
            acks.add(log.awaitDurable(r.lastOffset() + 1, writer));
        }));
        writer.execute(onWriter(() -> {
            log.close();
        }));
        writerPool.poll().run();

        assertThat(acks.get(0)).as("the closing fsync covered it and the fence held").isCompleted();
        assertThat(log.awaitDurable(2, writer)).as("nothing is acknowledged after close")
                .failsWithin(1, TimeUnit.SECONDS).withThrowableThat().withCauseInstanceOf(NotLeaderOrFollowerException.class);
        disk.powerLoss();
        PartitionLog reopened = open(1, Map.of());
        assertThat(values(reopened.read(0, 1 << 20, true, reopened.highWatermark()))).containsExactly("0:before-close");
    }

    @Test
    void aDeposedLeadersCloseFailsTheWaitersQueuedAheadOfIt() throws Exception {
        PartitionLog old = open(0, Map.of());
        appendDurably(old, batch("acknowledged"));
        java.util.Queue<Runnable> writerPool = new java.util.concurrent.ConcurrentLinkedQueue<>();
        SerialExecutor writer = new SerialExecutor(writerPool::add);
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        writer.execute(onWriter(() -> {
            var late = old.append(batch("late"));
            acks.add(old.awaitDurable(late.lastOffset() + 1, writer));
            open(1, Map.of());
            old.close();
        }));
        writerPool.poll().run();

        assertThat(acks.get(0)).failsWithin(1, TimeUnit.SECONDS).withThrowableThat().withCauseInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(old.highWatermark()).isEqualTo(1);
    }

    @Test
    void lazyFlushAcknowledgesFromThePageCacheAndFlushesByCount() throws Exception {
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        java.util.Queue<Runnable> pending = new java.util.concurrent.ConcurrentLinkedQueue<>();
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of("flush.messages", "3")), clock::get,
                pending::add, disk);
        opened.add(log);
        long before = disk.forces(".log");
        var r = log.append(batch("a"));
        assertThat(log.awaitDurable(r.lastOffset() + 1)).as("acknowledged from the page cache").isDone();
        assertThat(log.highWatermark()).isEqualTo(1);
        log.append(batch("b"));
        assertThat(pending).as("no flush before flush.messages").isEmpty();
        log.append(batch("c"));
        Runnable task;
        while ((task = pending.poll()) != null) {
            task.run();
        }
        assertThat(disk.forces(".log") - before).as("one fsync once three messages are unflushed").isEqualTo(1);
        disk.powerLoss();
        log.abandon();
        PartitionLog after = open(1, Map.of());
        assertThat(values(after.read(0, 1 << 20, true, after.highWatermark()))).containsExactly("0:a", "1:b", "2:c");
    }

    private Path segmentFile() throws IOException {
        try (var files = Files.list(dir())) {
            return files.filter(p -> p.toString().endsWith(".log")).sorted().reduce((a, b) -> b).orElseThrow();
        }
    }

    private long lastBatchPosition(PartitionLog log) throws IOException {
        LogSegment s = log.segments().get(log.segments().size() - 1);
        return s.positionOf(log.logEndOffset() - 1, s.size());
    }

    private static void copyDir(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (var files = Files.list(from)) {
            for (Path p : files.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }
}
