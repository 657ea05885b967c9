package dev.kaas.broker.storage;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.EpochFence;
import dev.kaas.common.fs.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.jboss.logging.Logger;

/**
 * The log of one partition incarnation, opened by its current leader.
 *
 * <p>Directory {@code <data>/<topic>-<topicId>/<partition>/}:
 * <pre>
 * {epoch:08x}-{baseOffset:020d}.log|.index|.timeindex  segments (see {@link LogSegment})
 * leader-epochs/{epoch:08x}    the fence, one file per epoch: {"epoch":n,"owner":broker}; written first on
 *                              takeover, the highest epoch holds it (see EpochFence)
 * leader-epoch                 the same holder in the single-file form older kaas versions read
 * manifest.json                topic, topic ID, partition, log start offset
 * recovery-checkpoint          offset below which every byte is known flushed and valid
 * producer-state.json          producer windows and open transactions as of an offset (snapshot)
 * cleaner-offset-checkpoint    compacted topics: where the dirty part of the log begins (a hint)
 * *.cleaned, *.{end}.swap      compaction in flight: a cleaned segment being written, and one
 *                              committed to replace the segments in [its base, end) (see {@link LogCleaner})
 * </pre>
 *
 * <p>Transactions: a producer's transactional batches open its transaction here, a COMMIT or
 * ABORT control batch written by {@link #appendMarker} closes it, and an abort is recorded in the
 * marker's segment's {@link TxnIndex}. The last stable offset is the first offset of the oldest
 * transaction still open or whose marker is not yet below the high watermark (Apache keeps
 * completed-but-unreplicated transactions unstable the same way), capped by the high watermark.
 *
 * <p>Takeover ({@link #open}): write the fence with the new epoch, then recover: segments past
 * the recovery checkpoint are scanned and truncated at the first torn or corrupt batch, indexes
 * rebuilt, the producer window rebuilt from the snapshot plus the scanned tail, recovered bytes
 * fsynced, and a new segment named with the new epoch begins.
 *
 * <p>Acknowledgement ("acknowledged means durable and owned"): with {@code flush.messages=1}
 * (the kaas default) an append is acknowledged only after an fsync that covers it and a fresh
 * re-read of the fence still showing this log's epoch. Concurrent appends share one fsync
 * (group commit). The high watermark advances only past records that passed both checks.
 *
 * <p>Threading: {@link #append} runs only on the partition's serial executor (one at a time,
 * in request order); fsyncs run on the flush executor; {@link #read} and the lookups may run
 * concurrently on any worker thread. None of this may run on a Vert.x event loop.
 */
public final class PartitionLog {
    private static final Logger LOG = Logger.getLogger(PartitionLog.class);
    static final String FENCE = "leader-epoch";
    static final String MANIFEST = "manifest.json";
    static final String CHECKPOINT = "recovery-checkpoint";
    static final String PRODUCER_STATE = "producer-state.json";
    /** The offset below which the last compaction pass left the log clean (Apache's cleaner-offset-checkpoint, per partition). */
    static final String CLEANER_CHECKPOINT = "cleaner-offset-checkpoint";
    /** Suffix of a cleaned segment's files while the cleaner writes them; recovery deletes them. */
    static final String CLEANED = ".cleaned";
    /** {@code X.log.{end:020d}.swap}: a cleaned segment committed to replace every segment in [X's base, end). */
    private static final java.util.regex.Pattern INDEX_FILE = java.util.regex.Pattern.compile(
            "([0-9a-f]{8})-([0-9]{20})\\.(index|timeindex|txnindex)");
    private static final java.util.regex.Pattern SWAP = java.util.regex.Pattern.compile(
            "([0-9a-f]{8}-[0-9]{20})\\.(log|index|timeindex|txnindex)\\.([0-9]{20})\\.swap");

    public record AppendResult(long baseOffset, long lastOffset, long logAppendTime, long logStartOffset) {
    }

    public record TimestampAndOffset(long timestamp, long offset, int leaderEpoch) {
    }

    /** One entry of the leader-epoch history: {@code epoch} wrote this log from {@code startOffset} up to the next entry's start. */
    public record EpochStart(int epoch, long startOffset) {
    }

    /** Apache's answer for one epoch ({@code LeaderEpochFileCache.endOffsetFor}): the epoch found and where it ends. */
    public record EpochEnd(int epoch, long endOffset) {
    }

    record Fence(int leaderEpoch, int broker) {
    }

    record Manifest(String topic, String topicId, int partition, long logStartOffset) {
    }

    /**
     * The producer window as of {@code offset}, written by the owner of {@code leaderEpoch}. A
     * deposed owner may still write one after its successor took over, so recovery trusts it only
     * when {@code offset} is within that epoch's part of the log. Older files have no epoch (null).
     * {@code forgetful}: the window was rebuilt after the log's head was deleted, so it may lack
     * producers (null in older files: it lacks none).
     */
    record ProducerSnapshot(long offset, Integer leaderEpoch, List<ProducerStateTable.Entry> producers, Boolean forgetful) {
        ProducerSnapshot(long offset, Integer leaderEpoch, List<ProducerStateTable.Entry> producers) {
            this(offset, leaderEpoch, producers, null);
        }
    }

    /** A segment file as named on the volume: the leader epoch it was written under and its base offset. */
    private record SegmentFile(Path path, int epoch, long baseOffset) {
    }

    private final Path dir;
    private final TopicPartition tp;
    private final String topicId;
    private final int leaderEpoch;
    private final int brokerId;
    /** The topic's effective configuration; replaced whole when the topic's overrides change (AlterConfigs). */
    private volatile LogConfig config;
    private final LongSupplier clock;
    private final Executor flushExecutor;
    private final Disk disk;
    private volatile LogObserver observer = LogObserver.NONE;
    private final EpochFence fence;
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
    private final ProducerStateTable producers = new ProducerStateTable();
    /**
     * Transactions not yet stable: first offset → offset of the marker that ended it, or
     * {@code Long.MAX_VALUE} while open. Put by the writer before the offsets are published;
     * readers drop entries whose marker fell below the high watermark.
     */
    private final ConcurrentSkipListMap<Long, Long> unstable = new ConcurrentSkipListMap<>();
    /** The closed transactions still in {@link #unstable}: marker offset → first offset, so each is dropped once, in order. */
    private final ConcurrentSkipListMap<Long, Long> completing = new ConcurrentSkipListMap<>();

    private final Object flushLock = new Object();
    private final PriorityQueue<Waiter> waiters = new PriorityQueue<>((a, b) -> Long.compare(a.offset, b.offset));
    private boolean flushing;
    private volatile LogSegment active;
    private volatile long logEndOffset;
    private volatile long highWatermark;
    /** Everything below it was covered by a completed fsync and fence check (whatever flush.messages says). */
    private volatile long flushedOffset;
    private volatile long logStartOffset;
    private volatile boolean fenced;
    private volatile boolean closed;
    /**
     * Held by a compaction pass from its view of the segments to its last swap, and by retention
     * and close while they change the segment set: the cleaner never swaps segments retention
     * retired, and close never closes segments under a swap. The writer only ever tries it.
     */
    private final java.util.concurrent.locks.ReentrantLock cleaning = new java.util.concurrent.locks.ReentrantLock();
    /** Set first by close and abandon: a compaction pass stops at its next step. */
    private volatile boolean closing;
    private volatile long cleanerCheckpoint = -1;
    /**
     * An fsync failed: what it should have covered may not be on the volume (after a failed
     * write-back a later fsync can succeed without the lost bytes, leaving a hole later appends
     * would sit beyond). Nothing more is appended or acknowledged here; the partition is closed,
     * cut back to {@link #durableBase}/{@link #durableBytes}, and opened again.
     */
    private volatile boolean failed;
    /** The segment (by base offset) and byte length a completed fsync last covered; segments before it were flushed whole when rolled. */
    private volatile long durableBase;
    private volatile int durableBytes;
    private volatile Runnable onStorageFailure = () -> { };
    private long unflushedMessages;
    private long lastFlushMs;
    private volatile Runnable onHighWatermark = () -> { };

    private record Waiter(long offset, CompletableFuture<Void> future, RoundTimes times) {
    }

    private PartitionLog(Path dir, TopicPartition tp, String topicId, int leaderEpoch, int brokerId, LogConfig config,
                         LongSupplier clock, Executor flushExecutor, Disk disk) {
        this.disk = disk;
        this.fence = new EpochFence(disk, dir, FENCE, b -> {
            Fence f = readJson(b, Fence.class);
            return new EpochFence.Holder(f.leaderEpoch(), f.broker());
        }, h -> Json.bytes(new Fence((int) h.epoch(), h.owner())));
        this.dir = dir;
        this.tp = tp;
        this.topicId = topicId;
        this.leaderEpoch = leaderEpoch;
        this.brokerId = brokerId;
        this.config = config;
        this.clock = clock;
        this.flushExecutor = flushExecutor;
    }

    /**
     * Longest topic-name part of a partition directory's name: a file name has at most 255 bytes,
     * and "-" plus the 22-character topic ID follow it. Legal topic names are ASCII, up to 249.
     */
    static final int MAX_NAME_PART = 255 - 1 - 22;

    /**
     * The directory of a partition incarnation: names are not identities, so the topic ID is part
     * of it, and it is what makes the directory unique; the name part is only for people reading
     * the volume, cut to {@link #MAX_NAME_PART} characters so every legal topic name fits.
     */
    public static Path directory(Path dataDir, String topic, String topicId, int partition) {
        String name = topic.length() <= MAX_NAME_PART ? topic : topic.substring(0, MAX_NAME_PART);
        return dataDir.resolve(name + "-" + topicId).resolve(Integer.toString(partition));
    }

    /** Takes the partition over under {@code leaderEpoch}: fence first, then recover. Blocking. */
    public static PartitionLog open(Path dir, TopicPartition tp, String topicId, int leaderEpoch, int brokerId,
                                    LogConfig config, LongSupplier clock, Executor flushExecutor) throws IOException {
        return open(dir, tp, topicId, leaderEpoch, brokerId, config, clock, flushExecutor, Disk.SYSTEM);
    }

    /** As {@link #open(Path, TopicPartition, String, int, int, LogConfig, LongSupplier, Executor)}, through {@code disk}. */
    public static PartitionLog open(Path dir, TopicPartition tp, String topicId, int leaderEpoch, int brokerId,
                                    LogConfig config, LongSupplier clock, Executor flushExecutor, Disk disk) throws IOException {
        Files.createDirectories(dir);
        PartitionLog log = new PartitionLog(dir, tp, topicId, leaderEpoch, brokerId, config, clock, flushExecutor, disk);
        log.writeFence();
        log.recover();
        return log;
    }

    /**
     * Claims the partition's fence for this epoch (a file per epoch, see {@link EpochFence}: a
     * paused opener with an older epoch cannot take it back). Throws when a newer epoch holds it.
     */
    private void writeFence() throws IOException {
        // Visible at once (that fences the old owner); durable with the rest of the open's names at its end.
        EpochFence.Holder refused = fence.claimDeferringSync(leaderEpoch, brokerId);
        if (refused != null) {
            throw new NotLeaderOrFollowerException("partition " + tp + " is fenced by epoch " + refused.epoch()
                    + " of broker " + refused.owner() + "; this broker's epoch is " + leaderEpoch);
        }
    }

    /**
     * Rebuilds the log from the segment files. Their names are the leader-epoch history (Apache's
     * leader-epoch cache, kept in the names): an epoch starts at the lowest base offset among its
     * segments, and a later epoch's start ends every earlier epoch there. Bytes a deposed leader
     * appended after its successor began lie at or past its epoch's end: they are cut off, never
     * served, and never cost a later epoch any of its records.
     */
    private void recover() throws IOException {
        // Before any segment (and its transaction index) is opened: a deposed owner still closing
        // persists its indexes and then its snapshot, so a snapshot read first never claims aborts
        // past the indexes read after it (see TxnIndex).
        ProducerSnapshot snapshot = AtomicFiles.read(dir.resolve(PRODUCER_STATE)).map(b -> readJson(b, ProducerSnapshot.class)).orElse(null);
        Manifest manifest = AtomicFiles.read(dir.resolve(MANIFEST)).map(b -> readJson(b, Manifest.class)).orElse(null);
        long checkpoint = AtomicFiles.read(dir.resolve(CHECKPOINT))
                .map(b -> Long.parseLong(new String(b, StandardCharsets.UTF_8).trim())).orElse(0L);
        completeSwaps();
        cleanerCheckpoint = AtomicFiles.read(dir.resolve(CLEANER_CHECKPOINT))
                .map(b -> parseLong(new String(b, StandardCharsets.UTF_8).trim())).orElse(-1L);
        List<SegmentFile> files = listSegments();
        EpochHistory history = new EpochHistory(files);
        if (history.latestEpoch() > leaderEpoch) {
            throw new NotLeaderOrFollowerException("partition " + tp + " has segments of epoch " + history.latestEpoch()
                    + ", newer than " + leaderEpoch);
        }
        List<SegmentFile> live = new ArrayList<>();
        for (SegmentFile f : files) {
            if (f.baseOffset() >= history.endOf(f.epoch())) {
                LOG.warnf("deleting segment a deposed leader began after its epoch ended file=%s epochEnd=%d partition=%s",
                        f.path().getFileName(), history.endOf(f.epoch()), tp);
                deleteSegmentFiles(f.path());
            } else {
                live.add(f);
            }
        }
        // Along base offsets the live segments' epochs never decrease: an earlier epoch's segment
        // past a later epoch's start would be past its own end.
        live.sort((a, b) -> Long.compare(a.baseOffset(), b.baseOffset()));
        int recovered = 0;
        LogSegment previous = null;
        for (int i = 0; i < live.size(); i++) {
            SegmentFile f = live.get(i);
            if (previous != null && previous.tornInside() && previous.leaderEpoch() == f.epoch()) {
                // As Apache: the same writer never wrote past a hole, so what follows it in its epoch goes.
                LOG.warnf("deleting segment after a truncated one of the same epoch file=%s partition=%s", f.path().getFileName(), tp);
                deleteSegmentFiles(f.path());
                continue;
            }
            long nextBase = i + 1 < live.size() ? live.get(i + 1).baseOffset() : Long.MAX_VALUE;
            boolean trusted = nextBase <= checkpoint;
            LogSegment s = LogSegment.open(disk, f.path(), !trusted, config.indexIntervalBytes(), history.endOf(f.epoch()));
            if (!trusted) {
                recovered++;
            }
            if (s.truncatedBytes() > 0) {
                LOG.warnf("recovery truncated %d bytes file=%s %s partition=%s", s.truncatedBytes(), f.path().getFileName(),
                        s.tornInside() ? "torn or corrupt" : "past the epoch's end", tp);
            }
            // Compaction leaves gaps: a cleaned segment ends at its last kept batch.
            if (previous != null && (s.baseOffset() < previous.nextOffset() || s.baseOffset() > previous.nextOffset() && !config.compacted())) {
                // Only a volume that lost fsynced bytes leaves a gap; later epochs' acknowledged records stay.
                LOG.errorf("gap in the log: file=%s starts at %d, the previous segment ends at %d partition=%s",
                        f.path().getFileName(), s.baseOffset(), previous.nextOffset(), tp);
            }
            s.flush();
            if (i + 1 < live.size()) {
                s.seal();
            }
            segments.put(s.baseOffset(), s);
            previous = s;
        }
        long end = segments.isEmpty() ? (manifest == null ? 0 : manifest.logStartOffset()) : segments.lastEntry().getValue().nextOffset();
        logStartOffset = segments.isEmpty() ? end : segments.firstKey();
        if (manifest != null) {
            logStartOffset = Math.max(logStartOffset, Math.min(manifest.logStartOffset(), end));
        }
        rebuildProducerState(snapshot, end, history);
        LogSegment last = segments.isEmpty() ? null : segments.lastEntry().getValue();
        if (last == null || last.leaderEpoch() != leaderEpoch) {
            if (last != null && !last.isEmpty()) {
                // No longer active: its indexes are written now, as at a roll, never later by a close
                // that may come after compaction put another segment's files under its names.
                last.seal();
            }
            // This file is the history's record that this epoch starts at `end`: durable before any append.
            LogSegment fresh = LogSegment.create(disk, dir, leaderEpoch, end, config.indexIntervalBytes());
            if (last != null && last.isEmpty()) {
                // Superseded at the same base offset by the new segment, once that one is durable.
                disk.fsyncDirectory(dir);
                segments.remove(last.baseOffset());
                last.deleteFiles();
            }
            segments.put(end, fresh);
            last = fresh;
        }
        active = last;
        logEndOffset = end;
        highWatermark = end;
        flushedOffset = end;
        // Recovery flushed every segment it kept, and the new one is empty.
        durableBase = active.baseOffset();
        durableBytes = active.size();
        lastFlushMs = clock.getAsLong();
        // The manifest rarely changes between owners; rewriting it anyway would cost two fsyncs per
        // partition on every takeover, which is what bounds taking over thousands at once.
        Manifest now = new Manifest(tp.topic(), topicId, tp.partition(), logStartOffset);
        if (!now.equals(manifest)) {
            AtomicFiles.replace(disk, dir.resolve(MANIFEST), Json.bytes(now));
        }
        manifestStart = logStartOffset;
        // One fsync each for the fence's directory and this one: the claim, the new segment and
        // the manifest are durable before anything is appended under this epoch.
        fence.syncDirectories();
        LOG.infof("partition opened partition=%s epoch=%d logStart=%d logEnd=%d segments=%d recoveredSegments=%d",
                tp, leaderEpoch, logStartOffset, end, segments.size(), recovered);
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Finishes what a compaction pass left when its process stopped: a cleaned segment not yet
     * committed ({@code .cleaned}) is deleted; one committed ({@code .swap}) replaces every segment
     * in its range, as the pass would have. Idempotent: a crash in here is finished by the next open.
     */
    private void completeSwaps() throws IOException {
        List<Path> cleaned = new ArrayList<>();
        java.util.TreeMap<String, java.util.regex.Matcher> swaps = new java.util.TreeMap<>();
        List<java.util.regex.Matcher> swapFiles = new ArrayList<>();
        try (var list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                String name = p.getFileName().toString();
                java.util.regex.Matcher m = SWAP.matcher(name);
                if (name.endsWith(CLEANED)) {
                    cleaned.add(p);
                } else if (m.matches()) {
                    swapFiles.add(m);
                    if (m.group(2).equals("log")) {
                        swaps.put(m.group(1), m);
                    }
                }
            }
        }
        boolean changed = !cleaned.isEmpty() || !swapFiles.isEmpty();
        for (Path p : cleaned) {
            disk.delete(p);
        }
        for (java.util.regex.Matcher m : swapFiles) {
            java.util.regex.Matcher log = swaps.get(m.group(1));
            if (log == null || !log.group(3).equals(m.group(3))) {
                // An index whose log was already moved into place, or of another pass: rebuilt if needed.
                disk.delete(dir.resolve(m.group()));
            }
        }
        for (java.util.regex.Matcher m : swaps.values()) {
            long[] parsed = LogSegment.parseName(m.group(1) + ".log");
            long end = Long.parseLong(m.group(3));
            for (SegmentFile f : listSegments()) {
                if (f.baseOffset() >= parsed[1] && f.baseOffset() < end) {
                    deleteSegmentFiles(f.path());
                }
            }
            // Indexes of sources whose log was already renamed aside: they would be taken for the cleaned segment's.
            try (var list = Files.list(dir)) {
                for (Path p : (Iterable<Path>) list::iterator) {
                    java.util.regex.Matcher idx = INDEX_FILE.matcher(p.getFileName().toString());
                    if (idx.matches()) {
                        long base = Long.parseLong(idx.group(2));
                        if (base >= parsed[1] && base < end) {
                            disk.delete(p);
                        }
                    }
                }
            }
            for (String ext : List.of("index", "timeindex", "txnindex", "log")) {
                Path from = dir.resolve(m.group(1) + "." + ext + "." + m.group(3) + ".swap");
                if (Files.exists(from)) {
                    disk.move(from, dir.resolve(m.group(1) + "." + ext));
                }
            }
            LOG.infof("completed a compaction swap left by a stopped process partition=%s segment=%s end=%d", tp, m.group(1), end);
        }
        if (changed) {
            disk.fsyncDirectory(dir);
        }
    }

    private List<SegmentFile> listSegments() throws IOException {
        List<SegmentFile> files = new ArrayList<>();
        try (var list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                if (p.getFileName().toString().endsWith(LogSegment.DELETED_SUFFIX)) {
                    // Retired by retention before a restart; the delay was for readers of the old process.
                    disk.delete(p);
                    continue;
                }
                long[] parsed = LogSegment.parseName(p.getFileName().toString());
                if (parsed != null) {
                    files.add(new SegmentFile(p, (int) parsed[0], parsed[1]));
                }
            }
        }
        return files;
    }

    /** The leader-epoch history the segment names spell: where each epoch starts and ends. */
    private static final class EpochHistory {
        private final java.util.TreeMap<Integer, Long> starts = new java.util.TreeMap<>();

        EpochHistory(List<SegmentFile> files) {
            for (SegmentFile f : files) {
                starts.merge(f.epoch(), f.baseOffset(), Math::min);
            }
        }

        int latestEpoch() {
            return starts.isEmpty() ? -1 : starts.lastKey();
        }

        /** First offset not written under {@code epoch}: the lowest start of any later epoch. */
        long endOf(int epoch) {
            long end = Long.MAX_VALUE;
            for (long start : starts.tailMap(epoch, false).values()) {
                end = Math.min(end, start);
            }
            return end;
        }
    }

    private void rebuildProducerState(ProducerSnapshot snapshot, long end, EpochHistory history) throws IOException {
        long from = logStartOffset;
        boolean ownEpochsPart = snapshot != null && snapshot.leaderEpoch() != null
                && snapshot.offset() <= history.endOf(snapshot.leaderEpoch());
        if (ownEpochsPart && snapshot.offset() <= end && snapshot.offset() >= logStartOffset) {
            producers.restore(snapshot.producers());
            producers.forgetful(Boolean.TRUE.equals(snapshot.forgetful()));
            from = snapshot.offset();
        } else {
            // Retention or DeleteRecords took producers' last batches along; the scan cannot see them.
            producers.forgetful(logStartOffset > 0);
        }
        producers.active().forEach(a -> {
            if (a.txnFirstOffset() >= 0) {
                unstable.put(a.txnFirstOffset(), Long.MAX_VALUE);
            }
        });
        ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
        for (LogSegment s : segments.tailMap(segments.floorKey(from) == null ? from : segments.floorKey(from)).values()) {
            // The aborts from here on are rebuilt from the markers themselves (see TxnIndex).
            s.txnIndex().truncateFrom(from);
            int pos = s.positionOf(from, s.size());
            while (pos + BatchHeader.SIZE <= s.size()) {
                header.clear();
                s.readFully(header, pos);
                header.flip();
                long pid = BatchHeader.producerId(header, 0);
                if (pid != RecordBatch.NO_PRODUCER_ID && !BatchHeader.isControl(header, 0)) {
                    int firstSeq = BatchHeader.baseSequence(header, 0);
                    int delta = BatchHeader.lastOffsetDelta(header, 0);
                    long opened = producers.update(pid, BatchHeader.producerEpoch(header, 0), firstSeq,
                            firstSeq == RecordBatch.NO_SEQUENCE ? firstSeq : incrementSequence(firstSeq, delta),
                            BatchHeader.baseOffset(header, 0), BatchHeader.lastOffset(header, 0), BatchHeader.maxTimestamp(header, 0),
                            BatchHeader.isTransactional(header, 0));
                    if (opened >= 0) {
                        unstable.put(opened, Long.MAX_VALUE);
                    }
                } else if (pid != RecordBatch.NO_PRODUCER_ID) {
                    recoverMarker(s, pos, BatchHeader.totalSize(header, 0));
                }
                pos += BatchHeader.totalSize(header, 0);
            }
        }
    }

    /** A marker met by the recovery scan: closes the producer's transaction, and an abort goes back into the index. */
    private void recoverMarker(LogSegment s, int pos, int total) throws IOException {
        ByteBuffer batch = ByteBuffer.allocate(total);
        s.readFully(batch, pos);
        batch.flip();
        for (RecordBatch b : MemoryRecords.readableRecords(batch).batches()) {
            Iterator<Record> records = b.iterator();
            if (!records.hasNext()) {
                continue;
            }
            Record r = records.next();
            ControlRecordType type = ControlRecordType.parse(r.key());
            if (type != ControlRecordType.COMMIT && type != ControlRecordType.ABORT) {
                continue;
            }
            EndTransactionMarker marker = EndTransactionMarker.deserialize(r);
            ProducerStateTable.CompletedTxn done = producers.completeTxn(b.producerId(), b.producerEpoch(),
                    marker.coordinatorEpoch(), b.baseOffset(), type == ControlRecordType.ABORT);
            if (done != null) {
                if (done.aborted()) {
                    s.txnIndex().add(new TxnIndex.AbortedTxn(done.producerId(), done.firstOffset(), done.lastOffset(),
                            stableOffsetAfter(done)));
                }
                // Recovered bytes are durable and end up below the high watermark: stable at once.
                unstable.remove(done.firstOffset());
            }
        }
    }

    /** Records a transaction a marker closed on the append path: unstable until its marker is below the high watermark; an abort goes into the index. */
    private void finish(LogSegment markerSegment, ProducerStateTable.CompletedTxn done) {
        if (done == null) {
            return;
        }
        if (done.aborted()) {
            markerSegment.txnIndex().add(new TxnIndex.AbortedTxn(done.producerId(), done.firstOffset(), done.lastOffset(),
                    stableOffsetAfter(done)));
        }
        completing.put(done.lastOffset(), done.firstOffset());
        unstable.put(done.firstOffset(), done.lastOffset());
    }

    /** Apache's {@code lastStableOffset(completedTxn)}: the oldest other open transaction's start, else just past the marker. */
    private long stableOffsetAfter(ProducerStateTable.CompletedTxn done) {
        for (var e : unstable.entrySet()) {
            if (e.getKey() != done.firstOffset() && e.getValue() == Long.MAX_VALUE) {
                return e.getKey();
            }
        }
        return done.lastOffset() + 1;
    }

    private void deleteSegmentFiles(Path log) throws IOException {
        String base = log.getFileName().toString().replace(".log", "");
        for (String ext : new String[] {".log", ".index", ".timeindex", ".txnindex"}) {
            disk.delete(log.resolveSibling(base + ext));
        }
    }

    static int incrementSequence(int seq, int increment) {
        return seq > Integer.MAX_VALUE - increment ? increment - (Integer.MAX_VALUE - seq) - 1 : seq + increment;
    }

    /**
     * Validates every batch, then assigns offsets and writes them. Nothing is written when any
     * batch is invalid. Runs on the partition's serial executor.
     */
    public AppendResult append(MemoryRecords records) throws IOException {
        return append(records, VerificationGuards.Ticket.DISABLED);
    }

    /**
     * As {@link #append(MemoryRecords)}, for a client's produce: a transactional batch that would
     * open the producer's transaction here, or that comes while the producer has a verification
     * open here, needs the coordinator's word first ({@link VerificationGuards}).
     * {@link VerificationGuards.Ticket#UNVERIFIED} then makes the append throw
     * {@link VerificationGuards.Required}, with nothing written; the append with the ticket it
     * carries must be followed by {@link #verificationDone}.
     */
    public AppendResult append(MemoryRecords records, VerificationGuards.Ticket verified) throws IOException {
        ensureWritable();
        // One reading of the topic's config for the whole append: AlterConfigs may replace it meanwhile.
        LogConfig c = config;
        long now = clock.getAsLong();
        ByteBuffer buffer = records.buffer();
        int count = 0;
        List<MutableRecordBatch> batches = new ArrayList<>();
        for (MutableRecordBatch batch : records.batches()) {
            batches.add(batch);
        }
        if (batches.isEmpty()) {
            throw new InvalidRecordException("Produce request for " + tp + " contains no record batches");
        }
        int totalBytes = 0;
        long[] maxTimestamps = new long[batches.size()];
        for (int i = 0; i < batches.size(); i++) {
            MutableRecordBatch batch = batches.get(i);
            if (batch.magic() < RecordBatch.MAGIC_VALUE_V2) {
                throw new UnsupportedForMessageFormatException("kaas stores only v2 record batches, got magic " + batch.magic());
            }
            // Recovery refuses batches over MAX_BATCH_BYTES, so none may be acknowledged, whatever max.message.bytes says.
            int maxBytes = Math.min(c.maxMessageBytes(), LogSegment.MAX_BATCH_BYTES);
            if (batch.sizeInBytes() > maxBytes) {
                throw new RecordTooLargeException("The record batch size in the append to " + tp + " is " + batch.sizeInBytes()
                        + " bytes which exceeds the maximum configured value of " + maxBytes + ".");
            }
            try {
                batch.ensureValid();
            } catch (CorruptRecordException e) {
                throw new CorruptRecordException("Record batch for " + tp + " is corrupt: " + e.getMessage());
            }
            int n = batch.countOrNull() == null ? -1 : batch.countOrNull();
            if (n <= 0 || batch.lastOffset() - batch.baseOffset() + 1 != n) {
                throw new InvalidRecordException("Record batch for " + tp + " has inconsistent record count " + n
                        + " and last offset delta " + (batch.lastOffset() - batch.baseOffset()));
            }
            if (batch.isControlBatch()) {
                throw new InvalidRecordException("Clients may not write control batches (" + tp + ")");
            }
            if (batch.hasProducerId() && batch.baseSequence() < 0) {
                throw new InvalidRecordException("Invalid sequence number " + batch.baseSequence() + " in record batch with producerId "
                        + batch.producerId() + " in topic partition " + tp);
            }
            if (batch.isTransactional() && !batch.hasProducerId()) {
                throw new InvalidRecordException("Transactional record batch for " + tp + " has no producer id");
            }
            ByteBuffer batchBytes = buffer.duplicate();
            batchBytes.position(buffer.position() + totalBytes).limit(buffer.position() + totalBytes + batch.sizeInBytes());
            maxTimestamps[i] = RecordValidator.validate((DefaultRecordBatch) batch, batchBytes, c, now).maxTimestamp();
            count += n;
            totalBytes += batch.sizeInBytes();
        }
        // Idempotence: the Java producer sends one batch per partition per request; so does Apache's check.
        MutableRecordBatch first = batches.get(0);
        if (first.hasProducerId()) {
            for (MutableRecordBatch batch : batches) {
                if (batch.isTransactional()) {
                    producers.queueIfVerifying(batch.producerId(), batch.producerEpoch(), verified, now);
                }
            }
            for (MutableRecordBatch batch : batches) {
                ProducerStateTable.BatchMeta dup = producers.check(batch.producerId(), batch.producerEpoch(),
                        batch.baseSequence(), batch.lastSequence());
                if (dup == null) {
                    producers.checkTransactional(batch.producerId(), batch.isTransactional());
                    if (batch.isTransactional()) {
                        producers.checkVerified(batch.producerId(), batch.producerEpoch(), verified, now);
                    }
                }
                if (dup != null) {
                    if (batches.size() == 1) {
                        return new AppendResult(dup.firstOffset(), dup.lastOffset(), c.logAppendTime() ? dup.timestamp() : RecordBatch.NO_TIMESTAMP, logStartOffset);
                    }
                    throw new InvalidRecordException("Duplicate batch inside a multi-batch produce for " + tp);
                }
            }
        }
        maybeRoll(totalBytes, now);
        long base = logEndOffset;
        long next = base;
        for (int i = 0; i < batches.size(); i++) {
            MutableRecordBatch batch = batches.get(i);
            batch.setLastOffset(next + (int) (batch.lastOffset() - batch.baseOffset()));
            batch.setPartitionLeaderEpoch(leaderEpoch);
            if (c.logAppendTime()) {
                batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, now);
            } else {
                // As Apache: the header's max timestamp is the records' (rewritten, with the CRC, only when it differs).
                batch.setMaxTimestamp(TimestampType.CREATE_TIME, maxTimestamps[i]);
            }
            next += (int) (batch.lastOffset() - batch.baseOffset()) + 1;
        }
        // Exactly the validated batches: bytes after the last whole batch are not part of the request's records (Apache trims them too).
        ByteBuffer toWrite = buffer.duplicate();
        toWrite.limit(buffer.position() + totalBytes);
        LogSegment segment = active;
        segment.append(toWrite, now);
        for (MutableRecordBatch batch : batches) {
            if (batch.hasProducerId()) {
                long opened = producers.update(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.lastSequence(),
                        batch.baseOffset(), batch.lastOffset(), batch.maxTimestamp(), batch.isTransactional());
                if (opened >= 0) {
                    // Before the offsets are published: no reader may see them stable first.
                    unstable.put(opened, Long.MAX_VALUE);
                }
            }
        }
        publish(next, count, c);
        return new AppendResult(base, next - 1, c.logAppendTime() ? now : RecordBatch.NO_TIMESTAMP, logStartOffset);
    }

    /**
     * Retention (Apache 3.7's {@code deleteOldSegments}, see {@link Retention}): detaches the
     * segments the topic's limits and the log start offset no longer keep, advances the log start
     * offset to the first segment left, and hands the files to {@code reaper}, which renames them
     * aside ({@code .deleted}) after checking this broker still owns the partition and deletes
     * them after {@code file.delete.delay.ms}, so reads in flight finish. When every segment goes,
     * a new active segment is rolled first. Runs on the partition's writer.
     *
     * @return how many segments were retired
     */
    public int enforceRetention(ScheduledExecutorService reaper) throws IOException {
        if (closed || fenced || failed) {
            return 0;
        }
        // A compaction pass holds the segments it cleans; this check comes round again.
        if (!cleaning.tryLock()) {
            return 0;
        }
        try {
            return retireOldSegments(reaper);
        } finally {
            cleaning.unlock();
        }
    }

    private int retireOldSegments(ScheduledExecutorService reaper) throws IOException {
        long now = clock.getAsLong();
        List<LogSegment> all = new ArrayList<>(segments.values());
        List<Retention.Segment> view = new ArrayList<>(all.size());
        for (LogSegment s : all) {
            long largest = s.maxTimestamp();
            if (largest < 0) {
                // As Apache: a segment without record timestamps is as old as its file.
                largest = Files.exists(s.file()) ? Files.getLastModifiedTime(s.file()).toMillis() : now;
            }
            view.add(new Retention.Segment(s.baseOffset(), s.nextOffset(), s.size(), largest));
        }
        LogConfig c = config;
        Retention.Decision d = Retention.decide(view, logStartOffset, highWatermark, logEndOffset, c.retentionMs(),
                c.retentionBytes(), c.deletePolicy(), now);
        if (d.count() == 0) {
            return 0;
        }
        if (d.count() == all.size()) {
            roll();
        }
        List<LogSegment> retired = List.copyOf(all.subList(0, d.count()));
        synchronized (flushLock) {
            retired.forEach(s -> segments.remove(s.baseOffset()));
        }
        long start = Math.max(logStartOffset, segments.firstKey());
        logStartOffset = start;
        LOG.infof("retention retired %d segments partition=%s reason=%s logStart=%d", retired.size(), tp, d.reason(), start);
        reaper.execute(() -> retire(retired, start, reaper));
        return retired.size();
    }

    /** Off the writer: aside only while still the owner (a deposed owner's successor may need the files), then gone after the delay. */
    private void retire(List<LogSegment> retired, long start, ScheduledExecutorService reaper) {
        try {
            if (!fence.holds(leaderEpoch, brokerId)) {
                fenced = true;
                retired.forEach(PartitionLog::closeQuietly);
                return;
            }
            // The segment names are the epoch history; with the oldest gone, a deposed owner's late
            // roll could name a segment below this start that recovery would take for live data.
            // The manifest keeps the start, so recovery keeps such bytes below it, unread.
            writeManifest(start);
            if (!fence.holds(leaderEpoch, brokerId)) {
                fenced = true;
                retired.forEach(PartitionLog::closeQuietly);
                return;
            }
            List<Path> moved = new ArrayList<>();
            for (LogSegment s : retired) {
                moved.addAll(s.renameAside());
            }
            deleteLater(retired, moved, reaper);
        } catch (IOException | RuntimeException e) {
            // Not renamed (the manifest or a rename failed): close them rather than hold their
            // descriptors until restart; their files stay and are retired again after a reopen.
            retired.forEach(PartitionLog::closeQuietly);
            LOG.warnf("could not retire segments partition=%s: %s", tp, e.toString());
        }
    }

    private static void closeQuietly(LogSegment s) {
        try {
            s.close();
        } catch (IOException e) {
            LOG.debugf("closing a retired segment: %s", e.toString());
        }
    }

    private final Object manifestLock = new Object();
    private long manifestStart = -1;

    /**
     * Records {@code start} as the log start offset in the manifest (temp, fsync, rename); never
     * lowers it. Retention and DeleteRecords both write it, from different threads.
     */
    private void writeManifest(long start) throws IOException {
        synchronized (manifestLock) {
            if (start <= manifestStart) {
                return;
            }
            AtomicFiles.write(disk, dir.resolve(MANIFEST), Json.bytes(new Manifest(tp.topic(), topicId, tp.partition(), start)));
            manifestStart = start;
        }
    }

    /**
     * DeleteRecords (Apache's {@code UnifiedLog.maybeIncrementLogStartOffset}): moves the log start
     * offset up to {@code offset} ({@code -1}: the high watermark), durably and while owned: the
     * manifest that records it is fsynced, then the fence is read again. Segments below it go
     * with the next {@link #enforceRetention}. Runs on the partition's writer.
     *
     * @return the log start offset now (Apache's low watermark)
     * @throws OffsetOutOfRangeException above the high watermark
     */
    public long deleteRecordsBefore(long offset) throws IOException {
        ensureWritable();
        long hw = highWatermark;
        long target = offset == -1 ? hw : offset;
        if (target < 0 || target > hw) {
            throw new OffsetOutOfRangeException("Cannot increment the log start offset to " + offset + " of partition " + tp
                    + " since it is larger than the high watermark " + hw);
        }
        if (target <= logStartOffset) {
            return logStartOffset;
        }
        // The manifest is one file for every epoch: a deposed owner must not write it. Checked
        // before (so a known successor's is never touched) and after (the Fencing rule's ack).
        checkFence();
        writeManifest(target);
        checkFence();
        // Only now: a write that failed (a full volume) must not have hidden anything.
        logStartOffset = target;
        return target;
    }

    /**
     * The request that held {@code ticket} was appended or refused: the producer's next request
     * may go. Runs on the partition's serial executor, right after that request's append.
     */
    public void verificationDone(long producerId, VerificationGuards.Ticket ticket) {
        producers.verificationDone(producerId, ticket);
    }

    /** Makes appended offsets up to {@code next} part of the log; with page-cache acknowledgement, visible at once. */
    private void publish(long next, int count, LogConfig c) {
        boolean flushNow;
        synchronized (flushLock) {
            logEndOffset = next;
            unflushedMessages += count;
            flushNow = !c.syncEveryAppend() && unflushedMessages >= c.flushMessages();
        }
        if (!c.syncEveryAppend()) {
            // Page-cache acknowledgement, as Apache with flush.messages > 1: visible at once.
            highWatermark = next;
            dropStable(next);
            onHighWatermark.run();
            if (flushNow) {
                requestFlush(next);
            }
        }
    }

    /**
     * Writes a transaction marker (a COMMIT or ABORT control batch) for {@code producerId} and
     * closes its transaction here. Runs on the partition's serial executor; the caller awaits
     * {@link #awaitDurable} for its offset before counting it written, as for any append.
     *
     * @return the marker's offset
     * @throws org.apache.kafka.common.errors.InvalidProducerEpochException          marker older than the producer
     * @throws org.apache.kafka.common.errors.TransactionCoordinatorFencedException  marker from a deposed coordinator
     */
    public long appendMarker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) throws IOException {
        ensureWritable();
        producers.checkMarker(producerId, producerEpoch, coordinatorEpoch);
        long now = clock.getAsLong();
        long offset = logEndOffset;
        MemoryRecords marker = MemoryRecords.withEndTransactionMarker(offset, now, leaderEpoch, producerId, producerEpoch,
                new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch));
        maybeRoll(marker.sizeInBytes(), now);
        LogSegment segment = active;
        segment.append(marker.buffer().duplicate(), now);
        finish(segment, producers.completeTxn(producerId, producerEpoch, coordinatorEpoch, offset, !commit));
        publish(offset + 1, 1, config);
        return offset;
    }

    /**
     * The last stable offset: below it no transaction is undecided, so READ_COMMITTED consumers
     * may read up to it. Never above the high watermark. Any thread.
     */
    public long lastStableOffset() {
        long hw = highWatermark;
        dropStable(hw);
        Map.Entry<Long, Long> oldest = unstable.firstEntry();
        // An open transaction that began below the log start offset holds nothing below it (Apache
        // drops such transactions from its producer state when the log start advances).
        return oldest == null ? hw : Math.min(Math.max(oldest.getKey(), logStartOffset), hw);
    }

    /**
     * Forgets the closed transactions whose marker is below {@code hw}: durable and visible, so
     * consumers below it can tell commit from abort. Called as the high watermark moves (so a
     * partition nobody reads does not keep one entry per transaction) and by readers; any thread,
     * each entry removed once.
     */
    private void dropStable(long hw) {
        for (Map.Entry<Long, Long> e = completing.firstEntry(); e != null && e.getKey() < hw; e = completing.firstEntry()) {
            if (completing.remove(e.getKey(), e.getValue())) {
                unstable.remove(e.getValue(), e.getKey());
            }
        }
    }

    /** Transactions open or not yet stable (for tests: this must not grow with the number of transactions). */
    int unstableTransactions() {
        return unstable.size();
    }

    /** One aborted transaction as a READ_COMMITTED fetch reports it. */
    public record AbortedTransaction(long producerId, long firstOffset) {
    }

    /**
     * The aborted transactions overlapping {@code [fetchOffset, upperBound)}, from the transaction
     * indexes of the segments from the one holding {@code fetchOffset} on (Apache's
     * {@code collectAbortedTransactions}). Any thread.
     */
    public List<AbortedTransaction> abortedTransactions(long fetchOffset, long upperBound) {
        List<TxnIndex.AbortedTxn> found = new ArrayList<>();
        Long from = segments.floorKey(fetchOffset);
        // Every later segment too: an abort's marker (and so its entry) may lie in a segment past
        // the upper bound while its data is inside it; an entry whose stable offset reaches the bound ends the search.
        for (LogSegment s : segments.tailMap(from == null ? fetchOffset : from).values()) {
            if (s.txnIndex().collect(fetchOffset, upperBound, found)) {
                break;
            }
        }
        return found.stream().map(t -> new AbortedTransaction(t.producerId(), t.firstOffset())).toList();
    }

    /** A producer this partition knows (KIP-664 DescribeProducers). */
    public record ProducerView(long producerId, short epoch, int lastSequence, long lastTimestamp, int coordinatorEpoch,
                               long currentTxnStartOffset) {
    }

    /** The producers this partition knows, with their open transaction's first offset (-1 without). Run on the writer. */
    public List<ProducerView> producers() {
        return producers.active().stream().map(a -> new ProducerView(a.producerId(), a.epoch(), a.lastSequence(),
                a.lastTimestamp(), a.coordinatorEpoch(), a.txnFirstOffset())).toList();
    }

    private void maybeRoll(int incomingBytes, long now) throws IOException {
        LogSegment s = active;
        boolean full = !s.isEmpty() && (long) s.size() + incomingBytes > config.segmentBytes();
        boolean old = !s.isEmpty() && s.firstAppendMs() >= 0 && now - s.firstAppendMs() > config.segmentMs();
        if (!full && !old) {
            return;
        }
        roll();
    }

    /** Seals the active segment and starts the next at the log end, under this epoch. Writer only. */
    private void roll() throws IOException {
        LogSegment s = active;
        // Everything in the old segment becomes durable before the checkpoint moves past it.
        fsync(s);
        s.seal();
        LogSegment next = LogSegment.create(disk, dir, leaderEpoch, logEndOffset, config.indexIntervalBytes());
        disk.fsyncDirectory(dir);
        synchronized (flushLock) {
            segments.put(next.baseOffset(), next);
            active = next;
            // The old segment was flushed whole above and the new one's name is durable.
            markDurable(next.baseOffset(), 0);
        }
        AtomicFiles.write(disk, dir.resolve(CHECKPOINT), Long.toString(next.baseOffset()).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Completes once every offset below {@code endOffset} is durable and still owned. With
     * {@code flush.messages > 1} it completes at once (page-cache acknowledgement, as Apache).
     */
    public CompletableFuture<Void> awaitDurable(long endOffset) {
        return awaitDurable(endOffset, null);
    }

    /**
     * As {@link #awaitDurable(long)}, with the group commit run by the partition's own writer
     * when it next runs out of appends, instead of on a flush thread. Appends that arrive during
     * the fsync queue on the writer and share the next one; the writer's thread, already running,
     * does the fsync, so an acknowledgement costs no wake-up of another thread. Call it from the
     * writer's task that appended.
     */
    public CompletableFuture<Void> awaitDurable(long endOffset, SerialExecutor writer) {
        return awaitDurable(endOffset, writer, null);
    }

    /**
     * When the group commit that acknowledged an append ran (a traced request's fsync and fence
     * check spans). Told on the flush's thread before the append's future completes; must not block.
     */
    @FunctionalInterface
    public interface RoundTimes {
        /**
         * @param fsyncStart when the fsync started (System.nanoTime)
         * @param fsyncEnd   when it returned, and the fence check started
         * @param fenceEnd   when the fence check returned
         * @param appends    the waiting appends the round acknowledged
         */
        void round(long fsyncStart, long fsyncEnd, long fenceEnd, int appends);
    }

    /**
     * As {@link #awaitDurable(long, SerialExecutor)}, telling {@code times} (null: nobody) of the
     * group commit that covers the offsets; with {@code flush.messages > 1} there is none to tell of.
     */
    public CompletableFuture<Void> awaitDurable(long endOffset, SerialExecutor writer, RoundTimes times) {
        if (!config.syncEveryAppend()) {
            // Page-cache acknowledgement. An append published while flush.messages was still 1 (AlterConfigs
            // changed it in between) did not move the high watermark: it becomes visible with its answer.
            raiseHighWatermark(endOffset);
            return fenced ? CompletableFuture.failedFuture(notLeader()) : CompletableFuture.completedFuture(null);
        }
        if (endOffset <= highWatermark) {
            return fenced ? CompletableFuture.failedFuture(notLeader()) : CompletableFuture.completedFuture(null);
        }
        return awaitFlush(endOffset, writer, times);
    }

    private void raiseHighWatermark(long endOffset) {
        boolean advanced = false;
        synchronized (flushLock) {
            if (endOffset > highWatermark && endOffset <= logEndOffset) {
                highWatermark = endOffset;
                advanced = true;
            }
        }
        if (advanced) {
            dropStable(endOffset);
            notifyHighWatermark();
        }
    }

    /**
     * Completes once every offset below {@code endOffset} is fsynced and still owned, whatever
     * {@code flush.messages} says: transaction markers are written with acks=all durability, as
     * Apache's coordinator writes them, because nothing sends a marker again once its transaction
     * completed. Call it from the writer's task that appended.
     */
    public CompletableFuture<Void> awaitFlushed(long endOffset, SerialExecutor writer) {
        if (endOffset <= flushedOffset) {
            return fenced ? CompletableFuture.failedFuture(notLeader()) : CompletableFuture.completedFuture(null);
        }
        return awaitFlush(endOffset, writer, null);
    }

    private CompletableFuture<Void> awaitFlush(long endOffset, SerialExecutor writer, RoundTimes times) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (flushLock) {
            if (closed || fenced) {
                // close() already settled the waiters it found; nobody would settle this one.
                return CompletableFuture.failedFuture(notLeader());
            }
            if (failed) {
                return CompletableFuture.failedFuture(storageFailure());
            }
            waiters.add(new Waiter(endOffset, f, times));
            if (!flushing) {
                flushing = true;
                scheduleFlush(writer);
            }
        }
        return f;
    }

    private void scheduleFlush(SerialExecutor writer) {
        if (writer == null) {
            flushExecutor.execute(this::flushLoop);
        } else {
            writer.whenIdle(() -> {
                if (flushRound()) {
                    // Waiters that came from another thread during the fsync: the next round, after the queued appends.
                    scheduleFlush(writer);
                }
            });
        }
    }

    private void requestFlush(long endOffset) {
        synchronized (flushLock) {
            if (flushing || failed) {
                return;
            }
            flushing = true;
        }
        flushExecutor.execute(this::flushLoop);
    }

    /** Group commit on a flush thread: rounds until no waiter is left. */
    private void flushLoop() {
        while (flushRound()) {
            // Appends written during the last fsync: the next one covers them.
        }
    }

    /**
     * One group commit: one fsync covers every append written before it started, then the fence
     * check, then the waiters it covers complete. Waiters are completed outside {@code flushLock}:
     * their callbacks build and send responses, and the partition's writer must not wait on that
     * to publish its next append.
     *
     * @return true when waiters remain and another round is due ({@code flushing} stays set)
     */
    private boolean flushRound() {
        long target;
        LogSegment segment;
        int bytes;
        synchronized (flushLock) {
            target = logEndOffset;
            segment = active;
            // Read before the force: every byte written so far is below it and covered.
            bytes = segment.size();
            unflushedMessages = 0;
        }
        Throwable failure = null;
        long fsyncNanos = -1;
        long fenceNanos = -1;
        long start = 0;
        long flushed = 0;
        try {
            if (closed) {
                // close() acknowledged or failed every waiter it found; a round after it proves nothing.
                failure = notLeader();
            } else if (failed) {
                // A later fsync can succeed without the bytes an earlier one lost: it proves nothing.
                failure = storageFailure();
            } else {
                start = System.nanoTime();
                segment.flush();
                flushed = System.nanoTime();
                fsyncNanos = flushed - start;
                checkFence();
                fenceNanos = System.nanoTime() - flushed;
            }
        } catch (Throwable t) {
            failure = t;
        }
        List<Waiter> done = new ArrayList<>();
        boolean more;
        boolean advanced = false;
        boolean newlyFailed = false;
        synchronized (flushLock) {
            if (failure == null && failed) {
                // Another fsync (a roll's, a marker's round) failed while this one ran.
                failure = storageFailure();
            }
            if (failure == null) {
                markDurable(segment.baseOffset(), bytes);
                lastFlushMs = clock.getAsLong();
                // Whatever flush.messages says now: an append published while it switched (AlterConfigs) is
                // visible once durable and owned, which this round proved.
                if (target > highWatermark) {
                    highWatermark = target;
                    advanced = true;
                }
                flushedOffset = Math.max(flushedOffset, target);
                while (!waiters.isEmpty() && waiters.peek().offset() <= target) {
                    done.add(waiters.poll());
                }
            } else {
                if (failure instanceof IOException && !closed && !failed) {
                    // Before anyone hears of the failure: no append may slip in behind it.
                    failed = true;
                    newlyFailed = true;
                }
                done.addAll(waiters);
                waiters.clear();
            }
            more = failure == null && !waiters.isEmpty();
            if (!more) {
                // Cleared under the lock, so an awaitDurable after this starts the next loop.
                flushing = false;
            }
        }
        if (advanced) {
            // Before anyone hears of the new high watermark: what it made stable is no longer tracked.
            dropStable(target);
        }
        for (Waiter w : done) {
            if (failure == null) {
                if (w.times() != null) {
                    tellTimes(w.times(), start, flushed, flushed + fenceNanos, done.size());
                }
                w.future().complete(null);
            } else {
                w.future().completeExceptionally(failure);
            }
        }
        if (failure != null) {
            if (!(failure instanceof NotLeaderOrFollowerException)) {
                LOG.errorf(failure, "flush failed partition=%s", tp);
            }
            if (newlyFailed) {
                storageFailed();
            }
            return false;
        }
        if (advanced) {
            // Every round, not only when the loop runs dry: consumers waiting in Fetch see the new high watermark now.
            notifyHighWatermark();
        }
        // After the acknowledgements, which must not wait on the metrics; and never into the flush loop.
        try {
            observer.groupCommit(fsyncNanos, fenceNanos, done.size());
        } catch (Throwable e) {
            LOG.debugf(e, "log observer failed partition=%s", tp);
        }
        return more;
    }

    private void tellTimes(RoundTimes times, long fsyncStart, long fsyncEnd, long fenceEnd, int appends) {
        try {
            times.round(fsyncStart, fsyncEnd, fenceEnd, appends);
        } catch (Throwable e) {
            // A trace is never worth an acknowledgement.
            LOG.debugf(e, "round times not taken partition=%s", tp);
        }
    }

    /** Who sees this log's group commits (the broker's metrics); {@link LogObserver#NONE} until set. */
    public void observe(LogObserver observer) {
        this.observer = observer;
    }

    private org.apache.kafka.common.errors.KafkaStorageException storageFailure() {
        return new org.apache.kafka.common.errors.KafkaStorageException("partition " + tp + " is being reopened after a failed fsync");
    }

    /**
     * An fsync outside the group commit (a roll's, a close's): a failure stops the partition as a
     * failed group commit does, since a later fsync could succeed without these bytes.
     */
    private void fsync(LogSegment s) throws IOException {
        try {
            s.flush();
        } catch (IOException e) {
            boolean newly;
            synchronized (flushLock) {
                newly = !failed && !closed;
                failed = true;
            }
            if (newly) {
                storageFailed();
            }
            throw e;
        }
    }

    /** Under {@code flushLock}: a completed fsync covered {@code bytes} of the segment at {@code base}; never moves back. */
    private void markDurable(long base, int bytes) {
        if (base > durableBase) {
            durableBase = base;
            durableBytes = bytes;
        } else if (base == durableBase && bytes > durableBytes) {
            durableBytes = bytes;
        }
    }

    /**
     * An fsync failed (a full volume on NFS reports it here, not at the write) and {@link #failed}
     * is set: have the partition reopened. Called once.
     */
    private void storageFailed() {
        LOG.errorf("partition=%s stops taking appends after a failed fsync; it is cut back to offset %d and reopened",
                tp, flushedOffset);
        try {
            onStorageFailure.run();
        } catch (RuntimeException e) {
            LOG.warnf(e, "storage-failure listener failed partition=%s", tp);
        }
    }

    /** Called once when an fsync fails; the broker reopens the partition (any thread, must not block). */
    public void onStorageFailure(Runnable listener) {
        this.onStorageFailure = listener;
    }

    /** An fsync failed here: this incarnation takes nothing more and is to be replaced. */
    public boolean isFailed() {
        return failed;
    }

    /** A listener that throws must not end the round's caller before it schedules the next round. */
    private void notifyHighWatermark() {
        try {
            onHighWatermark.run();
        } catch (RuntimeException e) {
            LOG.warnf(e, "high-watermark listener failed partition=%s", tp);
        }
    }

    /** Periodic {@code flush.ms} enforcement for logs that do not sync every append. */
    public void maybeTimedFlush() {
        if (config.syncEveryAppend() || closed || fenced || failed) {
            return;
        }
        boolean due;
        synchronized (flushLock) {
            due = unflushedMessages > 0 && clock.getAsLong() - lastFlushMs >= config.flushMs();
        }
        if (due) {
            requestFlush(logEndOffset);
        }
    }

    /** Re-reads the fence from the volume; a newer epoch there means this log was taken over. */
    private void checkFence() throws IOException {
        if (!fence.holds(leaderEpoch, brokerId)) {
            fenced = true;
            throw notLeader();
        }
    }

    private NotLeaderOrFollowerException notLeader() {
        return new NotLeaderOrFollowerException("This broker no longer leads " + tp + " (epoch " + leaderEpoch + " fenced)");
    }

    private void ensureWritable() {
        if (fenced || closed) {
            throw notLeader();
        }
        if (failed) {
            throw storageFailure();
        }
    }

    /**
     * Reads whole batches starting with the one that contains {@code offset}, below
     * {@code maxOffset} (exclusive, the high watermark or LSO), at most {@code maxBytes}; with
     * {@code minOneBatch} the first batch is returned whole even when larger (KIP-74).
     */
    public MemoryRecords read(long offset, int maxBytes, boolean minOneBatch, long maxOffset) throws IOException {
        if (offset >= maxOffset) {
            return MemoryRecords.EMPTY;
        }
        Map.Entry<Long, LogSegment> e = segments.floorEntry(offset);
        if (e == null) {
            e = segments.firstEntry();
        }
        while (e != null) {
            LogSegment s = e.getValue();
            int limit = s.size();
            int start = s.positionOf(offset, limit);
            if (start < limit) {
                return readFrom(s, start, limit, maxBytes, minOneBatch, maxOffset);
            }
            e = segments.higherEntry(e.getKey());
        }
        return MemoryRecords.EMPTY;
    }

    private MemoryRecords readFrom(LogSegment s, int start, int limit, int maxBytes, boolean minOneBatch, long maxOffset) throws IOException {
        int want = Math.min(limit - start, Math.max(maxBytes, 0));
        ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
        if (want < BatchHeader.SIZE || minOneBatch) {
            s.readFully(header, start);
            header.flip();
            int firstSize = BatchHeader.totalSize(header, 0);
            if (BatchHeader.lastOffset(header, 0) >= maxOffset) {
                return MemoryRecords.EMPTY;
            }
            if (firstSize > want) {
                if (!minOneBatch) {
                    return MemoryRecords.EMPTY;
                }
                want = firstSize;
            }
        }
        ByteBuffer chunk = ByteBuffer.allocate(want);
        s.readFully(chunk, start);
        chunk.flip();
        int pos = 0;
        while (pos + BatchHeader.SIZE <= want) {
            int total = BatchHeader.totalSize(chunk, pos);
            if (pos + total > want || BatchHeader.lastOffset(chunk, pos) >= maxOffset) {
                break;
            }
            pos += total;
        }
        chunk.limit(pos);
        return MemoryRecords.readableRecords(chunk.slice());
    }

    /**
     * As {@link #read}, but answers with the region of the segment file instead of a copy, for a
     * zero-copy send. Only batch headers are read (one positional read each) to find where the
     * region ends: below {@code maxOffset}, within {@code maxBytes} (the first batch whole when
     * {@code minOneBatch}).
     */
    public BaseRecords readSlice(long offset, int maxBytes, boolean minOneBatch, long maxOffset) throws IOException {
        if (offset >= maxOffset) {
            return MemoryRecords.EMPTY;
        }
        Map.Entry<Long, LogSegment> e = segments.floorEntry(offset);
        if (e == null) {
            e = segments.firstEntry();
        }
        ByteBuffer header = ByteBuffer.allocate(27);
        while (e != null) {
            LogSegment s = e.getValue();
            int limit = s.size();
            int start = s.positionOf(offset, limit);
            if (start < limit) {
                int end = start;
                while (end + BatchHeader.SIZE <= limit) {
                    header.clear();
                    s.readFully(header, end);
                    header.flip();
                    int total = BatchHeader.totalSize(header, 0);
                    if (BatchHeader.lastOffset(header, 0) >= maxOffset) {
                        break;
                    }
                    boolean first = end == start;
                    if ((long) end - start + total > maxBytes && !(first && minOneBatch)) {
                        break;
                    }
                    end += total;
                    if (end - start >= maxBytes) {
                        break;
                    }
                }
                return end == start ? MemoryRecords.EMPTY : new FileSlice(s.channel(), start, end - start);
            }
            e = segments.higherEntry(e.getKey());
        }
        return MemoryRecords.EMPTY;
    }

    /** ListOffsets by timestamp: the first record whose timestamp is {@code >= timestamp}, below {@code maxOffset}. */
    public Optional<TimestampAndOffset> offsetForTimestamp(long timestamp, long maxOffset) throws IOException {
        for (LogSegment s : segments.values()) {
            if (s.maxTimestamp() < timestamp) {
                continue;
            }
            int pos = s.timeSearchStart(timestamp);
            ByteBuffer header = ByteBuffer.allocate(BatchHeader.SIZE);
            int limit = s.size();
            while (pos + BatchHeader.SIZE <= limit) {
                header.clear();
                s.readFully(header, pos);
                header.flip();
                int total = BatchHeader.totalSize(header, 0);
                if (BatchHeader.baseOffset(header, 0) >= maxOffset) {
                    return Optional.empty();
                }
                if (BatchHeader.maxTimestamp(header, 0) >= timestamp) {
                    ByteBuffer batch = ByteBuffer.allocate(total);
                    s.readFully(batch, pos);
                    batch.flip();
                    for (RecordBatch b : MemoryRecords.readableRecords(batch).batches()) {
                        for (Record r : b) {
                            long ts = b.timestampType() == TimestampType.LOG_APPEND_TIME ? b.maxTimestamp() : r.timestamp();
                            if (ts >= timestamp && r.offset() >= logStartOffset && r.offset() < maxOffset) {
                                return Optional.of(new TimestampAndOffset(ts, r.offset(), b.partitionLeaderEpoch()));
                            }
                        }
                    }
                }
                pos += total;
            }
        }
        return Optional.empty();
    }

    /** KIP-734: the first record carrying the largest timestamp, if any. */
    public Optional<TimestampAndOffset> maxTimestamp() throws IOException {
        long best = segments.values().stream().mapToLong(LogSegment::maxTimestamp).max().orElse(-1);
        return best < 0 ? Optional.empty() : offsetForTimestamp(best, Long.MAX_VALUE);
    }

    /**
     * The leader-epoch history the segment names spell, oldest first: consecutive segments of one
     * epoch are one entry, starting at the first one's base offset. Always ends with this log's own
     * epoch: {@link #open} begins a segment named with it before the log is published, and every
     * later segment (a roll) carries it too, so the history changes only by a new log's takeover.
     *
     * <p>Threading: reads only the segment map, which the writer changes by adding a segment of this
     * log's epoch on a roll (a weakly consistent view of it gives the same history). No I/O, no lock:
     * any thread may call it, event loops included.
     */
    public List<EpochStart> epochHistory() {
        List<EpochStart> history = new ArrayList<>();
        for (LogSegment s : segments.values()) {
            if (history.isEmpty() || history.get(history.size() - 1).epoch() != s.leaderEpoch()) {
                history.add(new EpochStart(s.leaderEpoch(), s.baseOffset()));
            }
        }
        if (history.isEmpty() || history.get(history.size() - 1).epoch() != leaderEpoch) {
            // Not reachable through open(), which names the active segment with this epoch; kept so
            // the history never lacks the epoch this log answers for (Apache assigns it on becoming leader).
            history.add(new EpochStart(leaderEpoch, logEndOffset));
        }
        return history;
    }

    /**
     * Where {@code requestedEpoch} ends in this log, as Apache's {@code UnifiedLog.endOffsetForEpoch}
     * answers OffsetForLeaderEpoch: empty where Apache's cache answers UNDEFINED_EPOCH_OFFSET.
     */
    public Optional<EpochEnd> endOffsetForEpoch(int requestedEpoch) {
        List<EpochStart> history = epochHistory();
        return endOffsetFor(history, requestedEpoch, logEndOffset);
    }

    /**
     * Apache's {@code LeaderEpochFileCache.endOffsetFor} over a history sorted by epoch: the latest
     * epoch ends at the log end; any other ends where the first later epoch starts, and is answered
     * with the largest known epoch not above it; an epoch below every known one gets itself and the
     * first known start (Apache's "smaller than any known epoch" case); -1 or an epoch above every
     * known one has no answer.
     */
    static Optional<EpochEnd> endOffsetFor(List<EpochStart> history, int requestedEpoch, long logEndOffset) {
        if (requestedEpoch == RecordBatch.NO_PARTITION_LEADER_EPOCH || history.isEmpty()) {
            return Optional.empty();
        }
        EpochStart latest = history.get(history.size() - 1);
        if (latest.epoch() == requestedEpoch) {
            return Optional.of(new EpochEnd(requestedEpoch, logEndOffset));
        }
        EpochStart floor = null;
        for (EpochStart e : history) {
            if (e.epoch() > requestedEpoch) {
                return Optional.of(new EpochEnd(floor == null ? requestedEpoch : floor.epoch(), e.startOffset()));
            }
            floor = e;
        }
        return Optional.empty();
    }

    /** Leader epoch a record at {@code offset} was written under, from the segment names (the epoch history). */
    public int epochForOffset(long offset) {
        Map.Entry<Long, LogSegment> e = segments.floorEntry(offset);
        return e == null ? -1 : e.getValue().leaderEpoch();
    }

    /** A producer's last batch here, which compaction keeps (Apache's {@code lastRecordsOfActiveProducers}); {@code lastDataOffset} -1: markers only. */
    record LastRecord(long lastDataOffset, short epoch) {
    }

    /** What a compaction pass starts from ({@link LogCleaner}): the segments, the bounds, and the producers' last batches. */
    record CleaningView(List<LogSegment> segments, long logStartOffset, long logEndOffset, long lastStableOffset,
                        long checkpoint, Map<Long, LastRecord> producers) {
    }

    /** Runs on the partition's writer, which owns the producer table; with {@link #beginCleaning} held. */
    CleaningView cleaningView() {
        Map<Long, LastRecord> last = new java.util.HashMap<>();
        for (ProducerStateTable.Entry e : producers.snapshot()) {
            long lastData = e.batches().isEmpty() ? -1 : e.batches().get(e.batches().size() - 1).lastOffset();
            last.put(e.producerId(), new LastRecord(lastData, e.epoch()));
        }
        return new CleaningView(List.copyOf(segments.values()), logStartOffset, logEndOffset, lastStableOffset(),
                cleanerCheckpoint, last);
    }

    /** Takes the segment set for a compaction pass; false when the log is closing or retention holds it past the wait. */
    boolean beginCleaning(long waitMs) throws InterruptedException {
        if (cleaningStopped() || !cleaning.tryLock(waitMs, TimeUnit.MILLISECONDS)) {
            return false;
        }
        if (cleaningStopped()) {
            cleaning.unlock();
            return false;
        }
        return true;
    }

    void endCleaning() {
        cleaning.unlock();
    }

    /** For tests: a compaction pass holds the segment set. */
    boolean cleaningHeld() {
        return cleaning.isLocked();
    }

    /** A compaction pass must stop: the log is closing, deposed or failed. */
    boolean cleaningStopped() {
        return closing || closed || fenced || failed;
    }

    Disk disk() {
        return disk;
    }

    /** The first dirty offset the last compaction pass recorded, -1 for none. */
    long cleanerCheckpointHint() {
        return cleanerCheckpoint;
    }

    /** The aborted transactions whose data overlaps {@code [from, upperBound)}, whole (Apache's {@code collectAbortedTransactions}). */
    List<TxnIndex.AbortedTxn> abortedTxnEntries(long from, long upperBound) {
        List<TxnIndex.AbortedTxn> found = new ArrayList<>();
        Long floor = segments.floorKey(from);
        for (LogSegment s : segments.tailMap(floor == null ? from : floor).values()) {
            if (s.txnIndex().collect(from, upperBound, found)) {
                break;
            }
        }
        return found;
    }

    /**
     * Puts a cleaned segment in place of {@code sources}, which held every offset in
     * {@code [cleaned's base, end)}; the caller holds {@link #beginCleaning}. In order: the cleaned
     * files are made durable; the fence is read (a deposed owner's pass must not touch a
     * successor's files); renaming the cleaned log to {@code .{end}.swap} commits the swap (from
     * here a crash is finished by recovery, see {@link #completeSwaps}); the sources are renamed
     * aside; the cleaned files take their final names. Readers in flight keep the sources' open
     * files, which are closed and deleted after {@code file.delete.delay.ms} on {@code reaper}.
     */
    void replaceSegments(LogSegment cleaned, List<LogSegment> sources, long end, ScheduledExecutorService reaper) throws IOException {
        for (LogSegment s : sources) {
            if (segments.get(s.baseOffset()) != s) {
                throw new IllegalStateException("segment " + s.baseOffset() + " of " + tp + " changed under a compaction pass");
            }
        }
        cleaned.seal();
        cleaned.flush();
        disk.fsyncDirectory(dir);
        checkFence();
        String swap = String.format(".%020d.swap", end);
        cleaned.rename(CLEANED, swap);
        disk.fsyncDirectory(dir);
        // Committed. Read the fence again before touching the sources' names: an owner deposed while
        // it committed leaves the swap to its successor's recovery, which may already have done it
        // and put other files under these names.
        checkFence();
        for (LogSegment s : sources) {
            if (!s.stillAt(s.file())) {
                fenced = true;
                throw notLeader();
            }
        }
        String tag = "." + Long.toString(clock.getAsLong(), 36) + Long.toString(System.nanoTime() & 0xffffff, 36);
        List<Path> moved = new ArrayList<>();
        try {
            for (LogSegment s : sources) {
                moved.addAll(s.renameAside(tag));
            }
            cleaned.rename(swap, "");
            disk.fsyncDirectory(dir);
        } catch (IOException | RuntimeException e) {
            // Committed but half done on the volume: only a reopen's recovery finishes it (completeSwaps).
            boolean newly;
            synchronized (flushLock) {
                newly = !failed && !closed;
                failed = true;
            }
            if (newly) {
                LOG.errorf("partition=%s: a compaction swap failed after its commit (%s); the partition is reopened to finish it",
                        tp, e.toString());
                storageFailed();
            }
            throw e;
        }
        synchronized (flushLock) {
            // The cleaned segment first: a reader between the two steps finds one or the other, both whole.
            segments.put(cleaned.baseOffset(), cleaned);
            for (LogSegment s : sources) {
                if (s.baseOffset() != cleaned.baseOffset()) {
                    segments.remove(s.baseOffset(), s);
                }
            }
        }
        deleteLater(sources, moved, reaper);
    }

    /**
     * After {@code file.delete.delay.ms} (reads in flight finish on the open files), closes the
     * segments renamed aside and deletes their files ({@code moved}). At stop, nothing is left
     * to wait: the next open deletes the {@code .deleted} files.
     */
    private void deleteLater(List<LogSegment> aside, List<Path> moved, ScheduledExecutorService reaper) {
        try {
            reaper.schedule(() -> {
                aside.forEach(PartitionLog::closeQuietly);
                for (Path p : moved) {
                    try {
                        disk.delete(p);
                    } catch (IOException e) {
                        LOG.warnf("could not delete a segment file renamed aside file=%s: %s", p, e.toString());
                    }
                }
            }, config.fileDeleteDelayMs(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            aside.forEach(PartitionLog::closeQuietly);
        }
    }

    /** Records where the log's dirty part begins, for the next pass and the next owner (a hint: a wrong one only costs a pass). */
    void writeCleanerCheckpoint(long offset) throws IOException {
        AtomicFiles.write(disk, dir.resolve(CLEANER_CHECKPOINT), Long.toString(offset).getBytes(StandardCharsets.UTF_8));
        cleanerCheckpoint = offset;
    }

    /** Relinquish: persist the producer window and a recovery checkpoint, then close. */
    public void close() throws IOException {
        if (closed) {
            return;
        }
        // A compaction pass notices within one chunk of I/O; a swap it is in finishes first.
        closing = true;
        cleaning.lock();
        try {
            closeSegments();
        } finally {
            cleaning.unlock();
        }
    }

    private void closeSegments() throws IOException {
        if (closed) {
            return;
        }
        if (failed) {
            closeFailed();
            return;
        }
        boolean durable = false;
        try {
            if (!fenced) {
                for (LogSegment s : segments.values()) {
                    fsync(s);
                }
            }
        } catch (IOException e) {
            LOG.errorf("partition=%s: fsync failed while closing: %s", tp, e.toString());
        }
        if (failed) {
            // Failed before or during these fsyncs (here or in a group commit on another thread).
            closeFailed();
            return;
        }
        closed = true;
        try {
            if (!fenced) {
                checkFenceQuietly();
                durable = !fenced;
            }
        } finally {
            // Appends queued ahead of the close on the writer have their group commit here: what the
            // closing fsync covered, with the fence still held after it, is acknowledged, not failed.
            List<Waiter> pending;
            long end;
            synchronized (flushLock) {
                pending = new ArrayList<>(waiters);
                waiters.clear();
                end = logEndOffset;
                if (durable && config.syncEveryAppend() && end > highWatermark) {
                    highWatermark = end;
                }
            }
            for (Waiter w : pending) {
                if (durable && w.offset() <= end) {
                    w.future().complete(null);
                } else {
                    w.future().completeExceptionally(notLeader());
                }
            }
        }
        if (!fenced) {
            for (LogSegment s : segments.values()) {
                // Below the snapshot's offset, recovery trusts the indexes instead of the markers.
                s.txnIndex().persist();
            }
            AtomicFiles.write(disk, dir.resolve(PRODUCER_STATE),
                    Json.bytes(new ProducerSnapshot(logEndOffset, leaderEpoch, producers.snapshot(), producers.forgetful() ? Boolean.TRUE : null)));
            AtomicFiles.write(disk, dir.resolve(CHECKPOINT), Long.toString(logEndOffset).getBytes(StandardCharsets.UTF_8));
        }
        for (LogSegment s : segments.values()) {
            s.close();
        }
        LOG.infof("partition closed partition=%s epoch=%d logEnd=%d", tp, leaderEpoch, logEndOffset);
    }

    /**
     * Close after a failed fsync: fail whatever waits, persist nothing, and cut the active segment
     * back to what a completed fsync covered (segments before it were flushed whole when rolled),
     * so the next open recovers exactly the durable log: no bytes the volume may have dropped, no
     * hole for later appends to sit beyond, and a producer window without the failed batches, so
     * their retries are written again rather than answered as duplicates.
     */
    private void closeFailed() {
        closed = true;
        synchronized (flushLock) {
            waiters.forEach(w -> w.future().completeExceptionally(new org.apache.kafka.common.errors.KafkaStorageException(
                    "fsync failed on partition " + tp)));
            waiters.clear();
        }
        LogSegment last = active;
        int keep = last.baseOffset() == durableBase ? durableBytes : 0;
        try {
            if (!fence.holds(leaderEpoch, brokerId)) {
                // A successor owns the files now; what it recovered is its business.
                fenced = true;
            } else if (last.size() > keep) {
                last.channel().truncate(keep);
                last.flush();
                LOG.warnf("partition=%s cut back to %d bytes of segment %d after a failed fsync (%d bytes not durable)",
                        tp, keep, last.baseOffset(), last.size() - keep);
            }
        } catch (IOException e) {
            // The next open scans the tail anyway; it cannot tell bytes the volume dropped, so say so.
            LOG.errorf("partition=%s could not be cut back after a failed fsync: %s", tp, e.toString());
        }
        for (LogSegment s : segments.values()) {
            closeQuietly(s);
        }
        LOG.infof("partition closed after a failed fsync partition=%s epoch=%d", tp, leaderEpoch);
    }

    private void checkFenceQuietly() {
        try {
            checkFence();
        } catch (Exception e) {
            fenced = true;
        }
    }

    /** Topic delete: close without persisting anything; the caller removes the directory. */
    public void abandon() {
        closing = true;
        cleaning.lock();
        try {
            abandonSegments();
        } finally {
            cleaning.unlock();
        }
    }

    private void abandonSegments() {
        closed = true;
        synchronized (flushLock) {
            waiters.forEach(w -> w.future().completeExceptionally(notLeader()));
            waiters.clear();
        }
        for (LogSegment s : segments.values()) {
            try {
                s.close();
            } catch (IOException e) {
                LOG.debugf(e, "closing an abandoned segment partition=%s", tp);
            }
        }
    }

    public void onHighWatermark(Runnable listener) {
        this.onHighWatermark = listener;
    }

    public TopicPartition topicPartition() {
        return tp;
    }

    public String topicId() {
        return topicId;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public LogConfig config() {
        return config;
    }

    /**
     * Applies the topic's configuration as it is now (IncrementalAlterConfigs, a KafkaTopic edit):
     * the next append, roll, flush decision, retention check and compaction pass obey it, with no
     * reopen, as Apache applies a topic config change to its logs. Any thread.
     *
     * @return true when the effective configuration changed
     */
    public boolean updateConfig(LogConfig next) {
        if (next.equals(config)) {
            return false;
        }
        config = next;
        LOG.infof("topic config changed partition=%s config=%s", tp, next);
        return true;
    }

    public long logEndOffset() {
        return logEndOffset;
    }

    public long highWatermark() {
        return highWatermark;
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    public boolean isFenced() {
        return fenced;
    }

    public Path directory() {
        return dir;
    }

    /** Bytes of all segments' logs (DescribeLogDirs' partition size, as Apache's {@code UnifiedLog.size}). */
    public long sizeInBytes() {
        long total = 0;
        for (LogSegment s : segments.values()) {
            total += s.size();
        }
        return total;
    }

    /** Segments held, one descriptor each. */
    public int segmentCount() {
        return segments.size();
    }

    List<LogSegment> segments() {
        return List.copyOf(segments.values());
    }

    private static <T> T readJson(byte[] bytes, Class<T> type) {
        try {
            return Json.read(bytes, type);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
