package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The partition side of transactions: open transactions bound the last stable offset, markers
 * close them (an abort into the transaction index), stale markers are refused, and recovery
 * rebuilds both from the log after a crash, whatever byte the log was cut at.
 */
class TransactionalLogTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final String TOPIC_ID = "BBBBBBBBBBBBBBBBBBBBBB";
    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final AtomicLong clock = new AtomicLong(NOW);
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

    private PartitionLog open(Path dir, int epoch) throws IOException {
        PartitionLog log = PartitionLog.open(dir, TP, TOPIC_ID, epoch, 1, LogConfig.from(Map.of()), clock::get, flusher);
        opened.add(log);
        return log;
    }

    private static MemoryRecords txn(long pid, short epoch, int seq, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(NOW, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withTransactionalRecords(CompressionType.NONE, pid, epoch, seq, records);
    }

    private static MemoryRecords plain(String value) {
        return MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(NOW, value.getBytes(StandardCharsets.UTF_8)));
    }

    private static void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    private static void appendDurably(PartitionLog log, MemoryRecords records, VerificationGuards.Ticket verified) throws Exception {
        var r = log.append(records, verified);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    private static long markDurably(PartitionLog log, long pid, short epoch, int coordinatorEpoch, boolean commit) throws Exception {
        long offset = log.appendMarker(pid, epoch, coordinatorEpoch, commit);
        log.awaitDurable(offset + 1).get(10, TimeUnit.SECONDS);
        return offset;
    }

    @Test
    void theLastStableOffsetIsTheOldestOpenTransactionsFirstOffset() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, txn(7L, (short) 0, 0, "a", "b"));   // 0-1, producer 7 opens at 0
        appendDurably(log, plain("c"));                       // 2
        appendDurably(log, txn(8L, (short) 0, 0, "d"));        // 3, producer 8 opens at 3
        assertThat(log.highWatermark()).isEqualTo(4);
        assertThat(log.lastStableOffset()).isEqualTo(0);

        long commit = markDurably(log, 7L, (short) 0, 0, true);   // 4
        assertThat(commit).isEqualTo(4);
        assertThat(log.lastStableOffset()).as("producer 8's transaction is still open").isEqualTo(3);

        long abort = markDurably(log, 8L, (short) 0, 0, false);   // 5
        assertThat(log.lastStableOffset()).isEqualTo(6).isEqualTo(log.highWatermark());
        assertThat(log.abortedTransactions(0, 6)).containsExactly(new PartitionLog.AbortedTransaction(8L, 3));
        assertThat(log.abortedTransactions(abort + 1, 6)).as("nothing aborted at or after the marker").isEmpty();
        assertThat(log.abortedTransactions(0, 3)).as("a range ending before the aborted data").isEmpty();
    }

    /**
     * A roll between an aborted transaction's data and its marker puts the index entry in a later
     * segment than the data, past the fetch's upper bound: it must still be returned, or a
     * READ_COMMITTED consumer takes the aborted records for committed ones.
     */
    @Test
    void anAbortWhoseMarkerIsInALaterSegmentIsStillReported() throws Exception {
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(Map.of("segment.bytes", "150")), clock::get, flusher);
        opened.add(log);
        appendDurably(log, txn(7L, (short) 0, 0, "aborted-1", "aborted-2"));  // 0-1, producer 7
        appendDurably(log, txn(8L, (short) 0, 0, "open"));                     // 2, producer 8 stays open
        markDurably(log, 7L, (short) 0, 0, false);                              // 3, in a later segment
        assertThat(log.segmentCount()).as("the marker went to a new segment").isGreaterThan(1);
        long lso = log.lastStableOffset();
        assertThat(lso).isEqualTo(2);
        assertThat(log.abortedTransactions(0, lso)).containsExactly(new PartitionLog.AbortedTransaction(7L, 0));
    }

    /** Closed transactions are forgotten as the high watermark passes their markers, read or not. */
    @Test
    void aPartitionNobodyReadsDoesNotKeepAnEntryPerTransaction() throws Exception {
        PartitionLog log = open(dir(), 0);
        for (int t = 0; t < 200; t++) {
            appendDurably(log, txn(7L, (short) 0, t, "v" + t));
            markDurably(log, 7L, (short) 0, 0, t % 2 == 0);
        }
        assertThat(log.unstableTransactions()).isZero();
        assertThat(log.lastStableOffset()).isEqualTo(log.highWatermark());
    }

    /** Markers are fsynced before they count even where data is acknowledged from the page cache. */
    @Test
    void aMarkerIsDurableBeforeItCountsWhateverFlushMessagesSays() throws Exception {
        dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
        Map<String, String> pageCache = Map.of("flush.messages", "100000", "flush.ms", "100000000");
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, 0, 1, LogConfig.from(pageCache), clock::get, flusher, disk);
        opened.add(log);
        log.append(txn(7L, (short) 0, 0, "a"));
        long marker = log.appendMarker(7L, (short) 0, 0, false);
        log.awaitFlushed(marker + 1, null).get(10, TimeUnit.SECONDS);
        disk.powerLoss();

        PartitionLog after = PartitionLog.open(dir(), TP, TOPIC_ID, 1, 1, LogConfig.from(pageCache), clock::get, flusher, disk);
        opened.add(after);
        assertThat(after.logEndOffset()).isEqualTo(marker + 1);
        assertThat(after.lastStableOffset()).isEqualTo(marker + 1);
        assertThat(after.abortedTransactions(0, marker + 1)).containsExactly(new PartitionLog.AbortedTransaction(7L, 0));
    }

    @Test
    void aTransactionStaysUnstableUntilItsMarkerIsDurable() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, txn(7L, (short) 0, 0, "a"));
        long marker = log.appendMarker(7L, (short) 0, 0, false);
        // Written, not yet fsynced: a consumer below it could not tell the abort yet.
        assertThat(log.highWatermark()).isEqualTo(marker);
        assertThat(log.lastStableOffset()).isEqualTo(0);
        log.awaitDurable(marker + 1).get(10, TimeUnit.SECONDS);
        assertThat(log.lastStableOffset()).isEqualTo(marker + 1);
    }

    @Test
    void staleMarkersAreRefusedAndWriteNothing() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, txn(7L, (short) 2, 0, "a"));
        markDurably(log, 7L, (short) 2, 5, true);
        long end = log.logEndOffset();

        assertThatThrownBy(() -> log.appendMarker(7L, (short) 1, 5, true)).isInstanceOf(InvalidProducerEpochException.class);
        assertThatThrownBy(() -> log.appendMarker(7L, (short) 2, 4, false)).isInstanceOf(TransactionCoordinatorFencedException.class);
        assertThat(log.logEndOffset()).isEqualTo(end);
        // A data batch of the old epoch after the marker: the producer was fenced there.
        assertThatThrownBy(() -> log.append(txn(7L, (short) 1, 1, "zombie"))).isInstanceOf(InvalidProducerEpochException.class);
    }

    /** KIP-890: the first transactional batch of a transaction here waits for the coordinator; the later ones do not. */
    @Test
    void aTransactionOpensOnlyWithAConfirmedVerification() throws Exception {
        PartitionLog log = open(dir(), 0);
        VerificationGuards.Ticket first = required(log, txn(7L, (short) 0, 0, "a"));
        assertThat(first.asks()).isTrue();
        assertThat(log.logEndOffset()).as("nothing written before the coordinator answered").isZero();
        // A second request of the producer meanwhile queues behind the first and shares its verification.
        VerificationGuards.Ticket second = required(log, txn(7L, (short) 0, 1, "b"));
        assertThat(second.asks()).isFalse();
        assertThat(second.previous()).isNotDone();

        first.outcome().complete(Errors.NONE);
        appendDurably(log, txn(7L, (short) 0, 0, "a"), first);
        log.verificationDone(7L, first);
        assertThat(second.previous()).as("its turn").isDone();
        assertThat(log.lastStableOffset()).isZero();
        // A third one while the second still waits: behind it, though the transaction is open now.
        VerificationGuards.Ticket third = required(log, txn(7L, (short) 0, 2, "c"));
        appendDurably(log, txn(7L, (short) 0, 1, "b"), second);
        log.verificationDone(7L, second);
        appendDurably(log, txn(7L, (short) 0, 2, "c"), third);
        log.verificationDone(7L, third);

        // The verification is over: the transaction's later batches and plain writers go straight through.
        appendDurably(log, txn(7L, (short) 0, 3, "d"), VerificationGuards.Ticket.UNVERIFIED);
        appendDurably(log, plain("e"), VerificationGuards.Ticket.UNVERIFIED);
        assertThat(log.logEndOffset()).isEqualTo(5);
    }

    /**
     * KAFKA-14402: the verification began, the transaction was aborted, and only then did the
     * late produce come: the marker voided the verification, so it opens nothing. Fails if the
     * marker does not clear the guard, or if the guard is not checked.
     */
    @Test
    void aVerificationThatRacedTheAbortMarkerOpensNoTransaction() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, plain("before"), VerificationGuards.Ticket.UNVERIFIED);
        VerificationGuards.Ticket verifying = required(log, txn(7L, (short) 0, 0, "late"));
        // The coordinator confirmed (the partition was in the transaction), but the transaction's abort got here first.
        long abort = markDurably(log, 7L, (short) 0, 0, false);
        verifying.outcome().complete(Errors.NONE);
        assertThatThrownBy(() -> log.append(txn(7L, (short) 0, 0, "late"), verifying))
                .isInstanceOf(org.apache.kafka.common.errors.InvalidTxnStateException.class);
        log.verificationDone(7L, verifying);
        assertThat(log.logEndOffset()).isEqualTo(abort + 1);
        assertThat(log.lastStableOffset()).as("no transaction holds the LSO").isEqualTo(log.highWatermark());
        // Its retry starts over with a verification of its own.
        assertThat(required(log, txn(7L, (short) 0, 0, "late")).asks()).isTrue();
    }

    /**
     * A request of another producer epoch (the instance that fenced a zombie, or the zombie) is
     * verified on its own, and a refusal is not handed to requests that come after it.
     */
    @Test
    void otherEpochsAndLaterRequestsAfterARefusalAskForThemselves() throws Exception {
        PartitionLog log = open(dir(), 0);
        VerificationGuards.Ticket zombie = required(log, txn(7L, (short) 0, 0, "z"));
        VerificationGuards.Ticket fencer = required(log, txn(7L, (short) 1, 0, "f"));
        assertThat(fencer.asks()).isTrue();
        zombie.outcome().complete(Errors.PRODUCER_FENCED);
        fencer.outcome().complete(Errors.NONE);
        appendDurably(log, txn(7L, (short) 1, 0, "f"), fencer);
        log.verificationDone(7L, fencer);

        VerificationGuards.Ticket refused = required(log, txn(8L, (short) 0, 0, "a"));
        refused.outcome().complete(Errors.INVALID_TXN_STATE);
        VerificationGuards.Ticket after = required(log, txn(8L, (short) 0, 0, "a"));
        assertThat(after.asks()).as("not the refusal of the one before").isTrue();
    }

    /** A refused verification opens nothing, for the request that asked and for those behind it. */
    @Test
    void aRefusedVerificationOpensNothing() throws Exception {
        PartitionLog log = open(dir(), 0);
        VerificationGuards.Ticket first = required(log, txn(7L, (short) 0, 0, "a"));
        first.outcome().complete(Errors.INVALID_TXN_STATE);
        assertThatThrownBy(() -> log.append(txn(7L, (short) 0, 0, "a"), first))
                .isInstanceOf(org.apache.kafka.common.errors.InvalidTxnStateException.class);
        log.verificationDone(7L, first);
        assertThat(log.logEndOffset()).isZero();
    }

    private static VerificationGuards.Ticket required(PartitionLog log, MemoryRecords records) {
        return org.assertj.core.api.Assertions.catchThrowableOfType(() -> log.append(records, VerificationGuards.Ticket.UNVERIFIED),
                VerificationGuards.Required.class).ticket();
    }

    @Test
    void aMarkerWithoutAnOpenTransactionIsWrittenButClosesNothing() throws Exception {
        PartitionLog log = open(dir(), 0);
        long marker = markDurably(log, 9L, (short) 0, 0, false);
        assertThat(log.lastStableOffset()).isEqualTo(marker + 1);
        assertThat(log.abortedTransactions(0, marker + 1)).isEmpty();
    }

    @Test
    void aMarkerOfABumpedEpochFencesTheProducersOlderEpoch() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, txn(7L, (short) 0, 0, "a"));
        // The coordinator's timeout abort carries epoch + 1.
        markDurably(log, 7L, (short) 1, 0, false);
        assertThatThrownBy(() -> log.append(txn(7L, (short) 0, 1, "late"))).isInstanceOf(InvalidProducerEpochException.class);
        appendDurably(log, txn(7L, (short) 1, 0, "next"));
    }

    @Test
    void aTakeoverRebuildsOpenTransactionsAndTheAbortIndexFromTheLog() throws Exception {
        PartitionLog old = open(dir(), 0);
        appendDurably(old, txn(7L, (short) 0, 0, "a"));     // 0
        markDurably(old, 7L, (short) 0, 0, false);           // 1 abort
        appendDurably(old, txn(8L, (short) 0, 0, "b"));     // 2 open
        appendDurably(old, plain("c"));                     // 3

        // The old owner never closed (a crash): no snapshot, the successor scans the log.
        PartitionLog next = open(dir(), 1);
        assertThat(next.highWatermark()).isEqualTo(4);
        assertThat(next.lastStableOffset()).isEqualTo(2);
        assertThat(next.abortedTransactions(0, 4)).containsExactly(new PartitionLog.AbortedTransaction(7L, 0));
        markDurably(next, 8L, (short) 0, 0, true);
        assertThat(next.lastStableOffset()).isEqualTo(5);
    }

    @Test
    void aCleanCloseCarriesOpenTransactionsAndAbortsInItsSnapshot() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, txn(7L, (short) 0, 0, "a"));     // 0
        markDurably(log, 7L, (short) 0, 3, false);           // 1
        appendDurably(log, txn(8L, (short) 0, 0, "b"));     // 2 open
        log.close();
        opened.remove(log);

        PartitionLog reopened = open(dir(), 1);
        assertThat(reopened.lastStableOffset()).isEqualTo(2);
        assertThat(reopened.abortedTransactions(0, 3)).containsExactly(new PartitionLog.AbortedTransaction(7L, 0));
        // The coordinator epoch came back with the snapshot: an older coordinator's marker is refused.
        assertThatThrownBy(() -> reopened.appendMarker(7L, (short) 0, 2, true)).isInstanceOf(TransactionCoordinatorFencedException.class);
    }

    /**
     * A crash while the ABORT marker was being written, at every byte of it: recovery either
     * finds the whole marker (the transaction is aborted and indexed) or cuts it off (the
     * transaction is open again, so the coordinator's resend decides it), never anything between.
     */
    @Test
    void recoveryWithTheLastBatchCutAtEveryByteNeverHalfDecidesATransaction() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, plain("before"));                // 0
        appendDurably(log, txn(7L, (short) 0, 0, "a", "b")); // 1-2
        Path segment = segmentFile(dir());
        long markerStart = Files.size(segment);
        markDurably(log, 7L, (short) 0, 0, false);           // 3
        long markerEnd = Files.size(segment);
        byte[] whole = Files.readAllBytes(segment);
        log.abandon();
        opened.remove(log);

        for (long cut = markerStart; cut <= markerEnd; cut++) {
            Path copy = tmp.resolve("cut-" + cut).resolve("0");
            copyDir(dir(), copy);
            try (FileChannel ch = FileChannel.open(segmentFile(copy), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            assertThat(Files.readAllBytes(segmentFile(copy))).hasSize((int) cut);
            PartitionLog recovered = open(copy, 1);
            if (cut == markerEnd) {
                assertThat(recovered.highWatermark()).isEqualTo(4);
                assertThat(recovered.lastStableOffset()).isEqualTo(4);
                assertThat(recovered.abortedTransactions(0, 4)).containsExactly(new PartitionLog.AbortedTransaction(7L, 1));
            } else {
                assertThat(recovered.highWatermark()).as("cut at %d", cut).isEqualTo(3);
                assertThat(recovered.lastStableOffset()).as("cut at %d: the transaction is open again", cut).isEqualTo(1);
                assertThat(recovered.abortedTransactions(0, 3)).isEmpty();
            }
            recovered.abandon();
        }
        assertThat(whole).hasSize((int) markerEnd);
    }

    /** The same for a crash inside the transaction's first batch: it either opened the transaction whole or never happened. */
    @Test
    void recoveryWithTheFirstTransactionalBatchCutAtEveryByteOpensTheTransactionOnlyWhole() throws Exception {
        PartitionLog log = open(dir(), 0);
        appendDurably(log, plain("before"));                 // 0
        Path segment = segmentFile(dir());
        long batchStart = Files.size(segment);
        appendDurably(log, txn(7L, (short) 0, 0, "a", "b")); // 1-2
        long batchEnd = Files.size(segment);
        log.abandon();
        opened.remove(log);

        for (long cut = batchStart; cut <= batchEnd; cut++) {
            Path copy = tmp.resolve("cut-data-" + cut).resolve("0");
            copyDir(dir(), copy);
            try (FileChannel ch = FileChannel.open(segmentFile(copy), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            PartitionLog recovered = open(copy, 1);
            if (cut == batchEnd) {
                assertThat(recovered.highWatermark()).isEqualTo(3);
                assertThat(recovered.lastStableOffset()).as("the transaction is open").isEqualTo(1);
            } else {
                assertThat(recovered.highWatermark()).as("cut at %d", cut).isEqualTo(1);
                assertThat(recovered.lastStableOffset()).as("cut at %d: no transaction", cut).isEqualTo(1);
                // Nothing of the producer's transaction survived: its next batch may open one afresh.
                recovered.append(txn(7L, (short) 0, 0, "again"));
            }
            recovered.abandon();
        }
    }

    private static Path segmentFile(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).sorted().findFirst().orElseThrow();
        }
    }

    private static void copyDir(Path from, Path to) throws IOException {
        try (var walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }
}
