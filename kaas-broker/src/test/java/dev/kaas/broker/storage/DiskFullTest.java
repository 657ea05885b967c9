package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
 * A volume that runs out of space (ENOSPC at the file-channel seam, as a non-root test cannot
 * fill a real file system): the append that meets it fails and leaves nothing a reader or a
 * recovery would take for a record, reads go on, and appends work again once space returns.
 */
class DiskFullTest {
    static final TopicPartition TP = new TopicPartition("full", 0);
    static final String TOPIC_ID = "DDDDDDDDDDDDDDDDDDDDDD";

    @TempDir
    Path tmp;

    final ExecutorService flusher = Executors.newFixedThreadPool(2);
    final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    PartitionLog open(int epoch, Disk disk, Map<String, String> configs) throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("full-" + TOPIC_ID).resolve("0"), TP, TOPIC_ID, epoch, 1,
                LogConfig.from(configs), System::currentTimeMillis, flusher, disk);
        opened.add(log);
        return log;
    }

    static MemoryRecords batch(String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(CompressionType.NONE, records);
    }

    static void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    /** Everything readable, segment after segment (one read stops at a segment's end). */
    static List<String> values(PartitionLog log) throws IOException {
        List<String> out = new ArrayList<>();
        long next = 0;
        while (next < log.highWatermark()) {
            long before = next;
            for (RecordBatch b : log.read(next, 1 << 20, true, log.highWatermark()).batches()) {
                for (Record r : b) {
                    out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.value()));
                }
                next = b.lastOffset() + 1;
            }
            if (next == before) {
                break;
            }
        }
        return out;
    }

    @Test
    void anAppendThatMeetsAFullDiskFailsAndLeavesNothingBehind() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of());
        appendDurably(log, batch("a", "b"));

        disk.full = true;
        assertThatThrownBy(() -> log.append(batch("lost-1", "lost-2", "lost-3"))).isInstanceOf(IOException.class);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(values(log)).as("reads go on").containsExactly("0:a", "1:b");

        disk.full = false;
        appendDurably(log, batch("c"));
        assertThat(values(log)).containsExactly("0:a", "1:b", "2:c");
        log.close();

        PartitionLog reopened = open(1, Disk.SYSTEM, Map.of());
        assertThat(reopened.logEndOffset()).isEqualTo(3);
        assertThat(values(reopened)).as("the short write is not a record").containsExactly("0:a", "1:b", "2:c");
    }

    /**
     * A failed fsync: the writes it should have covered may be gone from the volume while still in
     * the page cache. The log stops (nothing more appended or acknowledged), and its close cuts the
     * segment back to what a completed fsync covered, so the reopened log has neither the failed
     * batch nor its producer window entry: the producer's retry is written, not answered as a
     * duplicate of bytes that may not exist. Fails without the cut (the reopen finds the batch).
     */
    @Test
    void afterAFailedFsyncTheLogStopsAndReopensWithOnlyWhatWasDurable() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of());
        java.util.concurrent.atomic.AtomicBoolean reported = new java.util.concurrent.atomic.AtomicBoolean();
        log.onStorageFailure(() -> reported.set(true));
        appendDurably(log, idempotent(7L, 0, "a", "b"));

        disk.fsyncFails = true;
        var r = log.append(idempotent(7L, 2, "c"));
        assertThatThrownBy(() -> log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IOException.class);
        assertThat(log.isFailed()).isTrue();
        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).untilTrue(reported);
        assertThat(log.highWatermark()).as("nothing past the last good fsync is visible").isEqualTo(2);
        assertThatThrownBy(() -> log.append(batch("d"))).isInstanceOf(org.apache.kafka.common.errors.KafkaStorageException.class);

        disk.fsyncFails = false;
        // A later fsync would succeed, and prove nothing about the bytes the failed one lost.
        assertThatThrownBy(() -> log.awaitFlushed(3, null).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(org.apache.kafka.common.errors.KafkaStorageException.class);
        assertThat(log.highWatermark()).isEqualTo(2);
        log.close();
        PartitionLog reopened = open(0, Disk.SYSTEM, Map.of());
        assertThat(reopened.logEndOffset()).isEqualTo(2);
        var retried = reopened.append(idempotent(7L, 2, "c"));
        assertThat(retried.baseOffset()).as("written again, not a duplicate of what was cut").isEqualTo(2);
        reopened.awaitDurable(retried.lastOffset() + 1).get(10, TimeUnit.SECONDS);
        assertThat(values(reopened)).containsExactly("0:a", "1:b", "2:c");
    }

    /** A roll's fsync of the old segment is a group commit like any other: its failure stops the partition too. */
    @Test
    void aFailedFsyncWhileRollingStopsThePartitionToo() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of("segment.bytes", "100"));
        appendDurably(log, batch("x".repeat(80)));
        disk.fsyncFails = true;
        assertThatThrownBy(() -> log.append(batch("y".repeat(80)))).isInstanceOf(IOException.class);
        assertThat(log.isFailed()).isTrue();
        disk.fsyncFails = false;
        assertThatThrownBy(() -> log.append(batch("z".repeat(80))))
                .isInstanceOf(org.apache.kafka.common.errors.KafkaStorageException.class);
        log.close();
        assertThat(values(open(0, Disk.SYSTEM, Map.of("segment.bytes", "100")))).containsExactly("0:" + "x".repeat(80));
    }

    /** DeleteRecords on a full volume: the manifest cannot be written, so nothing is hidden either. */
    @Test
    void deleteRecordsThatCannotRecordTheNewStartChangesNothing() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of());
        appendDurably(log, batch("a", "b", "c"));
        disk.full = true;
        assertThatThrownBy(() -> log.deleteRecordsBefore(2)).isInstanceOf(IOException.class);
        assertThat(log.logStartOffset()).isZero();
        assertThat(values(log)).containsExactly("0:a", "1:b", "2:c");
        disk.full = false;
        assertThat(log.deleteRecordsBefore(2)).isEqualTo(2);
    }

    static MemoryRecords idempotent(long pid, int seq, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withIdempotentRecords(CompressionType.NONE, pid, (short) 0, seq, records);
    }

    @Test
    void aRollThatMeetsAFullDiskFailsTheAppendAndTheNextOneRolls() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of("segment.bytes", "100"));
        appendDurably(log, batch("x".repeat(80)));

        disk.full = true;
        assertThatThrownBy(() -> log.append(batch("y".repeat(80)))).isInstanceOf(IOException.class);
        assertThat(values(log)).hasSize(1);

        disk.full = false;
        appendDurably(log, batch("z".repeat(80)));
        assertThat(log.segmentCount()).isEqualTo(2);
        log.close();
        assertThat(values(open(1, Disk.SYSTEM, Map.of("segment.bytes", "100")))).containsExactly("0:" + "x".repeat(80), "1:" + "z".repeat(80));
    }
}
