package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.storage.PartitionLog.EpochEnd;
import dev.kaas.broker.storage.PartitionLog.EpochStart;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader-epoch history a partition's segment names spell, and Apache's end-offset lookup over
 * it ({@code LeaderEpochFileCache.endOffsetFor}), which OffsetForLeaderEpoch answers from.
 */
class EpochHistoryTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
    /** Small enough that every batch after a segment's first rolls a new segment. */
    private static final Map<String, String> ROLL_EVERY_BATCH = Map.of("segment.bytes", "100");

    @TempDir
    Path tmp;

    private final Queue<Runnable> flushes = new ArrayDeque<>();
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
    }

    private PartitionLog open(int epoch) throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("orders-" + TOPIC_ID).resolve("0"), TP, TOPIC_ID, epoch, 1,
                LogConfig.from(ROLL_EVERY_BATCH), () -> 1_700_000_000_000L, flushes::add);
        opened.add(log);
        return log;
    }

    /** Takes over under {@code epoch}, appends {@code batches} one-record batches, and hands over (close). */
    private PartitionLog leadFor(int epoch, int batches) throws IOException {
        PartitionLog log = open(epoch);
        for (int i = 0; i < batches; i++) {
            log.append(MemoryRecords.withRecords(CompressionType.NONE,
                    new SimpleRecord(1_700_000_000_000L, ("e" + epoch + "-" + i).getBytes(StandardCharsets.UTF_8))));
        }
        return log;
    }

    @Test
    void consecutiveSegmentsOfOneEpochAreOneEntryStartingAtTheFirst() throws Exception {
        // Given epochs 1, 3 and 5, each rolling a segment per batch
        leadFor(1, 3).close();
        leadFor(3, 2).close();

        // When epoch 5 leads and appends
        PartitionLog log = leadFor(5, 1);

        // Then six segments spell three epochs
        assertThat(log.segmentCount()).isEqualTo(6);
        assertThat(log.epochHistory()).containsExactly(new EpochStart(1, 0), new EpochStart(3, 3), new EpochStart(5, 5));
        assertThat(log.endOffsetForEpoch(1)).contains(new EpochEnd(1, 3));
        assertThat(log.endOffsetForEpoch(3)).contains(new EpochEnd(3, 5));
        assertThat(log.endOffsetForEpoch(5)).contains(new EpochEnd(5, 6));
    }

    @Test
    void theNewLeadersEpochIsInTheHistoryBeforeItsFirstAppend() throws Exception {
        // Given epoch 1 wrote offsets 0 and 1
        leadFor(1, 2).close();

        // When epoch 4 takes over and has appended nothing yet
        PartitionLog log = open(4);

        // Then epoch 4 starts at the log end, and ends there too for now
        assertThat(log.epochHistory()).containsExactly(new EpochStart(1, 0), new EpochStart(4, 2));
        assertThat(log.endOffsetForEpoch(4)).contains(new EpochEnd(4, 2));
        assertThat(log.endOffsetForEpoch(1)).contains(new EpochEnd(1, 2));
    }

    @Test
    void anEpochThatWroteNothingLeavesNoEntryAsInApachesCache() throws Exception {
        // Given epoch 1 wrote two records and epoch 3 took over and handed over without writing
        leadFor(1, 2).close();
        leadFor(3, 0).close();

        // When epoch 5 takes over at the same offset
        PartitionLog log = leadFor(5, 1);

        // Then epoch 3 is not in the history (Apache's assign drops an entry a later epoch starts at too)
        assertThat(log.epochHistory()).containsExactly(new EpochStart(1, 0), new EpochStart(5, 2));
        assertThat(log.endOffsetForEpoch(3)).contains(new EpochEnd(1, 2));
    }

    @Test
    void endOffsetForAnswersAsApachesLeaderEpochCache() {
        List<EpochStart> history = List.of(new EpochStart(2, 10), new EpochStart(4, 20), new EpochStart(7, 35));
        long logEnd = 50;

        assertThat(PartitionLog.endOffsetFor(history, -1, logEnd)).as("UNDEFINED_EPOCH").isEmpty();
        assertThat(PartitionLog.endOffsetFor(history, 1, logEnd)).as("below every known epoch: itself and the first start")
                .contains(new EpochEnd(1, 10));
        assertThat(PartitionLog.endOffsetFor(history, 2, logEnd)).contains(new EpochEnd(2, 20));
        assertThat(PartitionLog.endOffsetFor(history, 3, logEnd)).as("unknown: the largest known below it")
                .contains(new EpochEnd(2, 20));
        assertThat(PartitionLog.endOffsetFor(history, 4, logEnd)).contains(new EpochEnd(4, 35));
        assertThat(PartitionLog.endOffsetFor(history, 6, logEnd)).contains(new EpochEnd(4, 35));
        assertThat(PartitionLog.endOffsetFor(history, 7, logEnd)).as("latest: the log end").contains(new EpochEnd(7, 50));
        assertThat(PartitionLog.endOffsetFor(history, 8, logEnd)).as("above every known epoch").isEmpty();
        assertThat(PartitionLog.endOffsetFor(List.of(), 3, logEnd)).isEqualTo(Optional.empty());
    }
}
