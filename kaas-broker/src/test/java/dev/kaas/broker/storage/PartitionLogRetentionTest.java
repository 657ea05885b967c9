package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retention and DeleteRecords on a real log: what goes, what the log start becomes, what survives a reopen. */
class PartitionLogRetentionTest {
    static final TopicPartition TP = new TopicPartition("events", 0);
    static final String TOPIC_ID = "CCCCCCCCCCCCCCCCCCCCCC";
    static final long NOW = 1_700_000_000_000L;
    static final long HOUR = 3_600_000L;
    /** One 10-record batch per segment: a batch of ten 20-byte values is about 300 bytes. */
    static final Map<String, String> SMALL_SEGMENTS = Map.of("segment.bytes", "200", "file.delete.delay.ms", "0");

    @TempDir
    Path tmp;

    final AtomicLong clock = new AtomicLong(NOW);
    final ExecutorService flusher = Executors.newFixedThreadPool(2);
    final java.util.concurrent.ScheduledThreadPoolExecutor reaper = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
    final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        // The reaper's file work must be over before the temporary directory is removed.
        reaper.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        reaper.shutdown();
        reaper.awaitTermination(10, TimeUnit.SECONDS);
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    Path dir() {
        return tmp.resolve("events-" + TOPIC_ID).resolve("0");
    }

    PartitionLog open(int epoch, Map<String, String> configs) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, epoch, 1, LogConfig.from(configs), clock::get, flusher);
        opened.add(log);
        return log;
    }

    static MemoryRecords tenAt(long timestamp, String prefix) {
        SimpleRecord[] records = new SimpleRecord[10];
        for (int i = 0; i < 10; i++) {
            records[i] = new SimpleRecord(timestamp, (prefix + "-" + i + "-xxxxxxxxxxxxxx").getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(CompressionType.NONE, records);
    }

    static void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    /** Five segments of ten offsets: 0..9 and 10..19 written 3 hours ago, 20..29 2 hours ago, the rest now. */
    PartitionLog fiveSegments(Map<String, String> extra) throws Exception {
        Map<String, String> configs = new java.util.HashMap<>(SMALL_SEGMENTS);
        configs.putAll(extra);
        PartitionLog log = open(0, configs);
        long[] ages = {3 * HOUR, 3 * HOUR, 2 * HOUR, 0, 0};
        for (int i = 0; i < ages.length; i++) {
            appendDurably(log, tenAt(NOW - ages[i], "s" + i));
        }
        assertThat(log.segmentCount()).isEqualTo(5);
        return log;
    }

    static long firstOffset(MemoryRecords records) {
        for (RecordBatch b : records.batches()) {
            for (Record r : b) {
                return r.offset();
            }
        }
        return -1;
    }

    List<String> files(String suffix) throws IOException {
        try (var list = Files.list(dir())) {
            return list.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(suffix)).sorted().toList();
        }
    }

    @Test
    void segmentsOlderThanRetentionMsGoAndTheLogStartMovesToTheFirstLeft() throws Exception {
        PartitionLog log = fiveSegments(Map.of("retention.ms", Long.toString((long) (2.5 * HOUR))));
        assertThat(log.enforceRetention(reaper)).isEqualTo(2);
        assertThat(log.logStartOffset()).isEqualTo(20);
        assertThat(firstOffset(log.read(0, 1 << 20, true, log.highWatermark()))).as("a read below starts at the log start").isEqualTo(20);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(files(".log")).hasSize(3);
            assertThat(files(LogSegment.DELETED_SUFFIX)).as("deleted after file.delete.delay.ms").isEmpty();
        });
        assertThat(log.enforceRetention(reaper)).as("nothing more is old enough").isZero();
        Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(
                Files.readString(dir().resolve(PartitionLog.MANIFEST))).as("the start survives the epoch history's oldest names")
                .containsPattern("\"logStartOffset\"\\s*:\\s*20\\b"));

        log.close();
        PartitionLog reopened = open(1, SMALL_SEGMENTS);
        assertThat(reopened.logStartOffset()).isEqualTo(20);
        assertThat(reopened.logEndOffset()).isEqualTo(50);
    }

    /** AlterConfigs reaches an open log: a retention change at the next check, max.message.bytes at the next append. */
    @Test
    void aConfigChangeAppliesToTheOpenLogWithoutAReopen() throws Exception {
        PartitionLog log = fiveSegments(Map.of());
        assertThat(log.enforceRetention(reaper)).as("seven days: nothing is old enough").isZero();

        Map<String, String> altered = new java.util.HashMap<>(SMALL_SEGMENTS);
        altered.put("retention.ms", Long.toString((long) (2.5 * HOUR)));
        altered.put("max.message.bytes", "100");
        assertThat(log.updateConfig(LogConfig.from(altered))).isTrue();
        assertThat(log.updateConfig(LogConfig.from(altered))).as("the same overrides again change nothing").isFalse();

        assertThat(log.enforceRetention(reaper)).isEqualTo(2);
        assertThat(log.logStartOffset()).isEqualTo(20);
        assertThatThrownBy(() -> log.append(tenAt(NOW, "big"))).isInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
    }

    @Test
    void theOldestSegmentsGoUntilTheRestFitsRetentionBytes() throws Exception {
        PartitionLog log = fiveSegments(Map.of());
        long size;
        try (var list = Files.list(dir())) {
            size = list.filter(p -> p.toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        }
        log.close();
        long perSegment = size / 5;
        Map<String, String> configs = new java.util.HashMap<>(SMALL_SEGMENTS);
        configs.put("retention.bytes", Long.toString(perSegment * 3));
        PartitionLog limited = open(1, configs);
        assertThat(limited.enforceRetention(reaper)).as("5 full segments (and the new empty one), limit 3").isEqualTo(2);
        assertThat(limited.logStartOffset()).isEqualTo(20);
    }

    @Test
    void whenEverySegmentIsTooOldANewActiveOneIsRolledFirst() throws Exception {
        PartitionLog log = open(0, Map.of("retention.ms", Long.toString(HOUR), "file.delete.delay.ms", "0"));
        appendDurably(log, tenAt(NOW - 2 * HOUR, "old"));
        assertThat(log.enforceRetention(reaper)).isEqualTo(1);
        assertThat(log.logStartOffset()).isEqualTo(10);
        assertThat(log.logEndOffset()).isEqualTo(10);
        appendDurably(log, tenAt(NOW, "new"));
        assertThat(firstOffset(log.read(10, 1 << 20, true, log.highWatermark()))).isEqualTo(10);
    }

    @Test
    void deleteRecordsMovesTheLogStartDurablyAndRetentionTakesWhatIsWhollyBelowIt() throws Exception {
        PartitionLog log = fiveSegments(Map.of("retention.ms", "-1"));
        assertThatThrownBy(() -> log.deleteRecordsBefore(51)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(log.deleteRecordsBefore(25)).isEqualTo(25);
        assertThat(log.deleteRecordsBefore(5)).as("never backwards").isEqualTo(25);
        assertThat(log.logStartOffset()).isEqualTo(25);
        assertThat(log.enforceRetention(reaper)).as("0..9 and 10..19; 20..29 still holds 25").isEqualTo(2);
        assertThat(log.logStartOffset()).isEqualTo(25);

        log.close();
        PartitionLog reopened = open(1, SMALL_SEGMENTS);
        assertThat(reopened.logStartOffset()).as("mid-segment, from the manifest").isEqualTo(25);
        assertThat(reopened.deleteRecordsBefore(-1)).as("-1: the high watermark").isEqualTo(50);
    }

    /**
     * A deposed owner still running must not take its successor's files or log start: the fence is
     * read before the manifest is written and before any file is renamed. Fails without those checks.
     */
    @Test
    void aDeposedOwnerNeitherMovesTheLogStartNorRetiresItsSuccessorsFiles() throws Exception {
        PartitionLog old = fiveSegments(Map.of("retention.ms", Long.toString(HOUR)));
        PartitionLog successor = open(1, SMALL_SEGMENTS);
        byte[] manifest = Files.readAllBytes(dir().resolve(PartitionLog.MANIFEST));

        assertThat(old.enforceRetention(reaper)).as("it does not know yet: 0..29 are over an hour old").isEqualTo(3);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(old::isFenced);
        assertThatThrownBy(() -> old.deleteRecordsBefore(30)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(Files.readAllBytes(dir().resolve(PartitionLog.MANIFEST))).isEqualTo(manifest);
        assertThat(files(LogSegment.DELETED_SUFFIX)).isEmpty();
        assertThat(files(".log")).hasSize(6);
        assertThat(successor.logStartOffset()).isZero();
        assertThat(firstOffset(successor.read(0, 1 << 20, true, successor.highWatermark()))).isZero();
    }

    /** The manifest is shared by every epoch: a deposed owner that has not noticed yet must not write it. */
    @Test
    void aDeposedOwnersDeleteRecordsNeverReachesTheManifest() throws Exception {
        PartitionLog old = fiveSegments(Map.of());
        open(1, SMALL_SEGMENTS);
        byte[] manifest = Files.readAllBytes(dir().resolve(PartitionLog.MANIFEST));
        assertThat(old.isFenced()).isFalse();
        assertThatThrownBy(() -> old.deleteRecordsBefore(30)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(Files.readAllBytes(dir().resolve(PartitionLog.MANIFEST))).isEqualTo(manifest);
        assertThat(old.logStartOffset()).isZero();
    }

    @Test
    void recoveryRemovesWhatRetentionRenamedAsideBeforeARestart() throws Exception {
        PartitionLog log = fiveSegments(Map.of("retention.ms", Long.toString((long) (2.5 * HOUR)), "file.delete.delay.ms", "3600000"));
        assertThat(log.enforceRetention(reaper)).isEqualTo(2);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> !files(LogSegment.DELETED_SUFFIX).isEmpty());
        log.close();
        PartitionLog reopened = open(1, SMALL_SEGMENTS);
        assertThat(files(LogSegment.DELETED_SUFFIX)).isEmpty();
        assertThat(reopened.logStartOffset()).isEqualTo(20);
    }
}
