package dev.kaas.broker.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter.BatchRetention;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.CloseableIterator;
import org.jboss.logging.Logger;

/**
 * Log compaction ({@code cleanup.policy=compact}), one cleaner thread's worth: Apache 3.7's
 * {@code LogCleaner.Cleaner} on kaas's segments. The only place kaas decodes records it stores.
 *
 * <p>A pass over one log ({@link #clean}): take the segment set (retention and close wait for the
 * pass, see {@link PartitionLog#beginCleaning}); find the dirty range ({@link Compaction#range});
 * map every key in it to its latest offset ({@link OffsetMap}, bounded memory: a full map ends
 * the range early); then rewrite every segment from the log start up to the end of what was
 * mapped, group by group ({@link Compaction#group}), as kafka-clients'
 * {@link MemoryRecords#filterTo} does, which keeps offsets (compaction never renumbers), rebuilds
 * batches with valid CRCs, and sets a batch's delete horizon when it first keeps a tombstone.
 * Compressed batches go through {@code filterTo} itself; uncompressed ones, the common case, are
 * walked in place ({@link RecordScan}) and written to the same bytes {@code filterTo} would write.
 * The copy decides the dirty part's records from what the key map recorded while it was built
 * ({@link OffsetMap#latest}), without hashing their keys a second time.
 * Each group's cleaned segment replaces its sources atomically
 * ({@link PartitionLog#replaceSegments}); the pass ends by recording the first dirty offset.
 *
 * <p>What is kept, as Apache: a keyed record whose offset is the latest for its key (or past what
 * the map covers); a tombstone until its batch's delete horizon ({@code delete.retention.ms} after
 * the pass that first kept it); records of aborted transactions never; a transaction marker until
 * its transaction's data is gone and, for markers, its delete horizon passed; and, for every
 * producer the partition still knows, the batch holding its last sequence (empty if need be), so
 * its idempotence state survives a reopen.
 *
 * <p>Threading: one instance per cleaner thread (it owns the map and buffers). The writer is
 * used only to take the producers' view; everything else runs on the cleaner thread, never on
 * the writer or an event loop. I/O, read and written, is throttled to
 * {@code log.cleaner.io.max.bytes.per.second}.
 */
public final class LogCleaner {
    private static final Logger LOG = Logger.getLogger(LogCleaner.class);

    /**
     * What one pass did. {@code bytesRead} is what the cleaning read (Apache's "MB of log
     * processed"), {@code mapBytesRead} what building the key map read; {@code elapsedMs} covers both.
     */
    public record Stats(long bytesRead, long mapBytesRead, long bytesWritten, long recordsRead, long recordsKept,
                        int segmentsCleaned, long firstDirty, long endOffset, long elapsedMs) {
    }

    /**
     * One cleaner thread's settings (Apache's {@code log.cleaner.*}, the memory its share of the
     * broker's): {@code loadFactor} is {@code log.cleaner.io.buffer.load.factor}, the share of the
     * key map's slots filled before a pass stops adding keys.
     */
    public record Settings(int dedupeBufferBytes, int ioBufferBytes, double ioMaxBytesPerSecond, double loadFactor) {
        public Settings(int dedupeBufferBytes, int ioBufferBytes, double ioMaxBytesPerSecond) {
            this(dedupeBufferBytes, ioBufferBytes, ioMaxBytesPerSecond, 0.9);
        }
    }

    /** A log this cleaner cannot clean (a batch larger than any buffer it may use): Apache marks it uncleanable. */
    public static final class Uncleanable extends IllegalStateException {
        Uncleanable(String message) {
            super(message);
        }
    }

    /** Thrown inside a pass when its log closes, is deposed or fails. */
    static final class Aborted extends RuntimeException {
        Aborted(String message) {
            super(message, null, false, false);
        }
    }

    /** How a pass waits; a test's makes throttling instant. */
    interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    private final Settings settings;
    private final LongSupplier clock;
    private final Sleeper sleeper;
    private final BufferSupplier decompression = BufferSupplier.create();
    private final RecordScan scan = new RecordScan();
    /**
     * Whether uncompressed batches are walked in place and the dirty part's records decided by the
     * map's bits; false cleans as Apache does, every batch through kafka-clients and every record
     * by its key (a test's reference).
     */
    boolean inPlace = true;
    /** Batches cleaned in place so far (a test's check that the walk ran). */
    long walkedBatches;
    /** Per record of the batch being cleaned in place, whether it stays. */
    private boolean[] kept = new boolean[64];
    private OffsetMap map;
    private ByteBuffer readBuffer;
    private ByteBuffer writeBuffer;
    private long throttleWindowStart;
    private long throttleWindowBytes;
    /** Set once new settings replaced this cleaner's ({@link #retire}). */
    private volatile boolean retired;

    public LogCleaner(Settings settings, LongSupplier clock) {
        this(settings, clock, Thread::sleep);
    }

    LogCleaner(Settings settings, LongSupplier clock, Sleeper sleeper) {
        // Apache's check: a map with fewer usable slots could end a pass before its first key.
        if (settings.dedupeBufferBytes() / 24 * settings.loadFactor() <= 1) {
            throw new IllegalArgumentException("log.cleaner.dedupe.buffer.size of " + settings.dedupeBufferBytes()
                    + " bytes per cleaner thread is too small: each key takes 24 bytes");
        }
        this.settings = settings;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    /**
     * How dirty {@code log} is now, from what any thread may read (the segment map, the bounds):
     * the cleaner threads pick the log with the highest ratio among those worth cleaning.
     */
    public static Optional<Double> dirtiness(PartitionLog log, long nowMs) {
        LogConfig config = log.config();
        if (!config.compacted() || log.cleaningStopped()) {
            return Optional.empty();
        }
        PartitionLog.CleaningView view = new PartitionLog.CleaningView(log.segments(), log.logStartOffset(),
                log.logEndOffset(), log.lastStableOffset(), log.cleanerCheckpointHint(), Map.of());
        Compaction.Range r = range(view, config, nowMs);
        return r.worthCleaning(config.minCleanableRatio()) ? Optional.of(r.needNow() ? 1.0 + r.cleanableRatio() : r.cleanableRatio())
                : Optional.empty();
    }

    private static Compaction.Range range(PartitionLog.CleaningView view, LogConfig config, long nowMs) {
        return Compaction.range(describe(view.segments()), view.checkpoint(), view.logStartOffset(), view.logEndOffset(),
                view.lastStableOffset(), config.minCompactionLagMs(), config.maxCompactionLagMs(), nowMs);
    }

    private static List<Compaction.Segment> describe(List<LogSegment> segments) {
        List<Compaction.Segment> out = new ArrayList<>(segments.size());
        for (LogSegment s : segments) {
            out.add(new Compaction.Segment(s.leaderEpoch(), s.baseOffset(), s.size(), s.maxTimestamp()));
        }
        return out;
    }

    /**
     * One compaction pass over {@code log}, if it is worth one. Blocking; runs on a cleaner thread.
     *
     * @param writer the partition's serial executor (the producers' view is taken there)
     * @param reaper where the replaced segments are deleted after {@code file.delete.delay.ms}
     * @return what the pass did; empty when it had nothing to do or could not start
     */
    public Optional<Stats> clean(PartitionLog log, Executor writer, ScheduledExecutorService reaper) throws IOException, InterruptedException {
        if (retired || !log.config().compacted() || !log.beginCleaning(1000)) {
            return Optional.empty();
        }
        try {
            PartitionLog.CleaningView view = null;
            CompletableFuture<PartitionLog.CleaningView> asked = CompletableFuture.supplyAsync(log::cleaningView, writer);
            // In short steps: a close queued on the writer ahead of the view waits for this pass to let go.
            for (int waited = 0; view == null && waited < 300; waited++) {
                checkStop(log);
                try {
                    view = asked.get(100, TimeUnit.MILLISECONDS);
                } catch (TimeoutException notYet) {
                    // Poll again.
                } catch (ExecutionException e) {
                    LOG.debugf("no compaction view partition=%s: %s", log.topicPartition(), e.toString());
                    return Optional.empty();
                }
            }
            if (view == null) {
                return Optional.empty();
            }
            return pass(log, view, reaper);
        } catch (Aborted e) {
            LOG.debugf("compaction pass stopped partition=%s: %s", log.topicPartition(), e.getMessage());
            return Optional.empty();
        } finally {
            log.endCleaning();
        }
    }

    private Optional<Stats> pass(PartitionLog log, PartitionLog.CleaningView view, ScheduledExecutorService reaper)
            throws IOException, InterruptedException {
        // One reading for the whole pass: AlterConfigs may change the policy or the horizons meanwhile.
        LogConfig config = log.config();
        if (!config.compacted()) {
            return Optional.empty();
        }
        long started = clock.getAsLong();
        Compaction.Range range = range(view, config, started);
        if (range.checkpointReset()) {
            log.writeCleanerCheckpoint(range.firstDirty());
        }
        if (!range.worthCleaning(config.minCleanableRatio())) {
            return Optional.empty();
        }
        LOG.infof("compacting partition=%s dirty=[%d, %d) dirtyRatio=%.3f", log.topicPartition(), range.firstDirty(),
                range.firstUncleanable(), range.cleanableRatio());
        ensureBuffers();
        // read by cleaning, written, records read, records kept, read by mapping
        long[] io = new long[5];
        List<LogSegment> segments = view.segments();
        TxnTracker mapTxns = new TxnTracker(null);
        mapTxns.addAborted(log.abortedTxnEntries(range.firstDirty(), range.firstUncleanable()));
        // The key map holds at most one key per offset of the segments it maps: it is sized to them.
        long mapEnd = range.firstDirty();
        for (int i = 0; i + 1 < segments.size() && segments.get(i).baseOffset() < range.firstUncleanable(); i++) {
            mapEnd = Math.max(mapEnd, segments.get(i + 1).baseOffset());
        }
        map.plan(range.firstDirty(), mapEnd);
        for (int i = 0; i + 1 < segments.size(); i++) {
            LogSegment s = segments.get(i);
            long next = segments.get(i + 1).baseOffset();
            if (s.baseOffset() >= range.firstUncleanable()) {
                break;
            }
            if (next > range.firstDirty() && mapSegment(log, s, range.firstDirty(), mapTxns, io)) {
                LOG.debugf("offset map full partition=%s segment=%d", log.topicPartition(), s.baseOffset());
                break;
            }
        }
        long endOffset = map.latestOffset() + 1;
        if (endOffset <= range.firstDirty()) {
            // Nothing but empty batches in the dirty range: it is clean as it stands.
            log.writeCleanerCheckpoint(range.firstUncleanable());
            return Optional.empty();
        }
        List<LogSegment> toClean = new ArrayList<>();
        List<Long> ends = new ArrayList<>();
        for (int i = 0; i + 1 < segments.size(); i++) {
            LogSegment s = segments.get(i);
            if (s.baseOffset() >= endOffset || s.baseOffset() >= range.firstUncleanable()) {
                break;
            }
            toClean.add(s);
            ends.add(segments.get(i + 1).baseOffset());
        }
        TxnTracker txns = new TxnTracker(null);
        long now = clock.getAsLong();
        int cleanedSegments = 0;
        for (List<Integer> group : Compaction.group(describe(toClean), config.segmentBytes(), endOffset)) {
            List<LogSegment> sources = new ArrayList<>(group.size());
            group.forEach(i -> sources.add(toClean.get(i)));
            long groupEnd = ends.get(group.get(group.size() - 1));
            cleanGroup(log, config, sources, groupEnd, view.producers(), txns, now, reaper, io);
            cleanedSegments += sources.size();
        }
        log.writeCleanerCheckpoint(endOffset);
        Stats stats = new Stats(io[0], io[4], io[1], io[2], io[3], cleanedSegments, range.firstDirty(), endOffset,
                clock.getAsLong() - started);
        LOG.infof("compacted partition=%s segments=%d read=%dB mapRead=%dB written=%dB records=%d kept=%d dirtyFrom=%d cleanTo=%d in %dms",
                log.topicPartition(), cleanedSegments, stats.bytesRead(), stats.mapBytesRead(), stats.bytesWritten(),
                stats.recordsRead(), stats.recordsKept(), range.firstDirty(), endOffset, stats.elapsedMs());
        return Optional.of(stats);
    }

    private void ensureBuffers() {
        if (map == null) {
            map = new OffsetMap(settings.dedupeBufferBytes());
        }
        if (readBuffer == null || readBuffer.capacity() != settings.ioBufferBytes()) {
            readBuffer = ByteBuffer.allocate(settings.ioBufferBytes());
            writeBuffer = ByteBuffer.allocate(settings.ioBufferBytes());
        }
    }

    /**
     * Apache's {@code buildOffsetMapForSegment}: records of {@code s} from {@code start} on, except
     * those of aborted transactions, go into the map.
     *
     * @return true when the map filled up inside this segment
     */
    private boolean mapSegment(PartitionLog log, LogSegment s, long start, TxnTracker txns, long[] io) throws IOException, InterruptedException {
        int limit = s.size();
        int position = s.positionOf(start, limit);
        // One slot always stays empty, whatever the load factor: a full map's probe for a new key would never end.
        // A planned map is at most half full, so this is Apache's bound unless the segments hold offsets they should not.
        int maxEntries = (int) Math.min(map.capacity() - 1L, (long) (map.slots() * settings.loadFactor()));
        while (position < limit) {
            checkStop(log);
            MemoryRecords records = readChunk(s, position, limit);
            throttle(log, records.sizeInBytes());
            int before = position;
            int at = 0;
            for (MutableRecordBatch batch : records.batches()) {
                if (batch.isControlBatch()) {
                    txns.onControlBatchRead(batch);
                } else if (!txns.onBatchRead(batch) && mapBatch(records.buffer(), at, batch, start, maxEntries)) {
                    return true;
                }
                if (batch.lastOffset() >= start) {
                    map.updateLatestOffset(batch.lastOffset());
                }
                at += batch.sizeInBytes();
            }
            position += records.validBytes();
            io[4] += records.validBytes();
            if (position == before) {
                growBuffers(log, s, position);
            }
        }
        return false;
    }

    /**
     * The keys of one data batch (at {@code at} in {@code chunk}) from {@code start} on into the map.
     *
     * @return true when the map filled up before the batch's last key
     */
    private boolean mapBatch(ByteBuffer chunk, int at, RecordBatch batch, long start, int maxEntries) {
        if (inPlace && RecordScan.walkable(batch)) {
            scan.open(chunk, at, batch);
            while (scan.next()) {
                if (scan.keyLength >= 0 && scan.offset >= start) {
                    if (map.size() >= maxEntries) {
                        return true;
                    }
                    map.put(scan.bytes(), scan.keyStart, scan.keyLength, scan.offset);
                }
            }
            return false;
        }
        try (CloseableIterator<Record> it = batch.streamingIterator(decompression)) {
            while (it.hasNext()) {
                Record r = it.next();
                if (r.hasKey() && r.offset() >= start) {
                    if (map.size() >= maxEntries) {
                        return true;
                    }
                    map.put(r.key(), r.offset());
                }
            }
        }
        return false;
    }

    /** Cleans {@code sources} (all of {@code [first base, end)}) into one new segment and swaps it in. */
    private void cleanGroup(PartitionLog log, LogConfig config, List<LogSegment> sources, long end,
                            Map<Long, PartitionLog.LastRecord> producers, TxnTracker txns, long now, ScheduledExecutorService reaper,
                            long[] io) throws IOException, InterruptedException {
        LogSegment first = sources.get(0);
        LogSegment cleaned = LogSegment.createStaged(log.disk(), log.directory(), first.leaderEpoch(), first.baseOffset(),
                config.indexIntervalBytes(), PartitionLog.CLEANED);
        txns.cleanedIndex = cleaned.txnIndex();
        boolean swapped = false;
        try {
            for (int i = 0; i < sources.size(); i++) {
                LogSegment s = sources.get(i);
                long upper = i + 1 < sources.size() ? sources.get(i + 1).baseOffset() : end;
                txns.addAborted(log.abortedTxnEntries(s.baseOffset(), upper));
                cleanInto(log, config, s, cleaned, producers, txns, now, io);
            }
            checkStop(log);
            log.replaceSegments(cleaned, sources, end, reaper);
            swapped = true;
        } finally {
            txns.cleanedIndex = null;
            if (!swapped) {
                discard(cleaned);
            }
        }
    }

    /**
     * A cleaned segment whose swap did not complete: deleted while not yet committed; once committed
     * (a {@code .swap} or its final name) left as it is, for the reopen that finishes the swap.
     */
    private static void discard(LogSegment cleaned) {
        try {
            if (cleaned.file().getFileName().toString().endsWith(PartitionLog.CLEANED)) {
                cleaned.deleteFiles();
            } else {
                // Nothing after the in-memory swap throws, so it is not in the log: only its descriptor goes
                // (its indexes were written at the commit; writing them again changes nothing).
                cleaned.close();
            }
        } catch (IOException e) {
            LOG.debugf("discarding a cleaned segment: %s", e.toString());
        }
    }

    /** Apache's {@code cleanInto}: the records of {@code source} worth keeping, appended to {@code dest}. */
    private void cleanInto(PartitionLog log, LogConfig config, LogSegment source, LogSegment dest,
                           Map<Long, PartitionLog.LastRecord> producers, TxnTracker txns, long now, long[] io)
            throws IOException, InterruptedException {
        Keep keep = new Keep(now, config.deleteRetentionMs(), producers, txns);
        int limit = source.size();
        int position = 0;
        while (position < limit) {
            checkStop(log);
            MemoryRecords records = readChunk(source, position, limit);
            throttle(log, records.sizeInBytes());
            int read = filterChunk(log, records, keep, config.maxMessageBytes(), dest, now, io);
            position += read;
            if (records.sizeInBytes() > 0 && read == 0) {
                growBuffers(log, source, position);
            }
        }
        restoreBuffers();
    }

    /**
     * Apache's {@code MemoryRecords.filterTo} over one chunk of whole batches, appending what is kept
     * to {@code dest}: uncompressed batches walked in place ({@link #walk}), the others through
     * kafka-clients, which decompresses and recompresses.
     *
     * @return the bytes of the batches read
     */
    private int filterChunk(PartitionLog log, MemoryRecords records, Keep keep, int maxBatchBytes, LogSegment dest, long now,
                            long[] io) throws IOException, InterruptedException {
        ByteBuffer chunk = records.buffer();
        ByteBuffer out = writeBuffer;
        out.clear();
        int at = 0;
        for (MutableRecordBatch batch : records.batches()) {
            int size = batch.sizeInBytes();
            if (inPlace && RecordScan.walkable(batch) && batch.timestampType() == TimestampType.CREATE_TIME) {
                out = walk(log, batch, chunk, at, keep, out, dest, now, io);
            } else {
                ByteBuffer one = chunk.duplicate();
                one.limit(at + size).position(at);
                MemoryRecords.FilterResult result = MemoryRecords.readableRecords(one.slice())
                        .filterTo(log.topicPartition(), keep, out, maxBatchBytes, decompression);
                io[2] += result.messagesRead();
                io[3] += result.messagesRetained();
                // Grown by kafka-clients when a rebuilt batch did not fit: holds everything written so far.
                out = result.outputBuffer();
            }
            io[0] += size;
            at += size;
        }
        flush(log, out, dest, now, io);
        return at;
    }

    /**
     * One uncompressed batch, as {@code filterTo} cleans it, without decoding its records: the
     * records to keep are decided in a first walk, then the batch is left out, written as it was
     * (everything kept, no delete horizon to set), written as an empty batch (a producer's last),
     * or rebuilt from the kept records' bytes as kafka-clients' builder would: the same base offset
     * and last offset delta, the base timestamp the first kept record's (or the delete horizon),
     * timestamp deltas from it, the record attributes zero, key, value and headers as they were.
     * The one difference: kafka-clients decodes and encodes key, value and headers again, so a
     * record written with over-long varints or a header key that is not UTF-8 comes out of its
     * rebuild canonical (the key replaced by U+FFFD); here it keeps its own bytes.
     *
     * @return the buffer to write on into
     */
    private ByteBuffer walk(PartitionLog log, MutableRecordBatch batch, ByteBuffer chunk, int at, Keep keep, ByteBuffer out,
                            LogSegment dest, long now, long[] io) throws IOException, InterruptedException {
        walkedBatches++;
        BatchRetention retention = keep.checkBatchRetention(batch).batchRetention;
        if (retention == BatchRetention.DELETE) {
            return out;
        }
        scan.open(chunk, at, batch);
        int read = 0;
        int retained = 0;
        boolean tombstone = false;
        long firstTimestamp = RecordBatch.NO_TIMESTAMP;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        long lastKept = -1;
        String unbuildable = null;
        while (scan.next()) {
            if (read == kept.length) {
                kept = java.util.Arrays.copyOf(kept, read * 2);
            }
            boolean stays = keep.shouldRetain(batch, scan);
            kept[read++] = stays;
            if (stays) {
                if (retained++ == 0) {
                    firstTimestamp = scan.timestamp;
                }
                maxTimestamp = Math.max(maxTimestamp, scan.timestamp);
                tombstone |= !scan.hasValue;
                // What kafka-clients' builder refuses when it rebuilds a batch, refused the same.
                if (scan.timestamp < 0 && scan.timestamp != RecordBatch.NO_TIMESTAMP) {
                    unbuildable = "Invalid negative timestamp " + scan.timestamp;
                } else if (scan.offset <= lastKept) {
                    unbuildable = "Illegal offset " + scan.offset + " following previous offset " + lastKept;
                }
                lastKept = scan.offset;
            }
        }
        io[2] += read;
        io[3] += retained;
        int size = batch.sizeInBytes();
        if (retained == 0) {
            if (retention == BatchRetention.RETAIN_EMPTY) {
                out = room(log, out, DefaultRecordBatch.RECORD_BATCH_OVERHEAD, dest, now, io);
                DefaultRecordBatch.writeEmptyHeader(out, batch.magic(), batch.producerId(), batch.producerEpoch(),
                        batch.baseSequence(), batch.baseOffset(), batch.lastOffset(), batch.partitionLeaderEpoch(),
                        batch.timestampType(), batch.maxTimestamp(), batch.isTransactional(), false);
            }
            return out;
        }
        boolean setHorizon = tombstone && batch.deleteHorizonMs().isEmpty();
        if (retained == read && !setHorizon) {
            out = room(log, out, size, dest, now, io);
            out.put(chunk.array(), chunk.arrayOffset() + at, size);
            return out;
        }
        if (unbuildable != null) {
            throw new IllegalArgumentException(unbuildable + " in the batch at offset " + batch.baseOffset());
        }
        long horizon = setHorizon ? keep.currentTime + keep.deleteRetentionMs : batch.deleteHorizonMs().orElse(RecordBatch.NO_TIMESTAMP);
        long base = horizon >= 0 ? horizon : firstTimestamp;
        // A record grows by at most 9 bytes of timestamp delta and 4 of length.
        out = room(log, out, size + 13 * retained, dest, now, io);
        int start = out.position();
        out.position(start + DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        byte[] bytes = chunk.array();
        scan.open(chunk, at, batch);
        for (int i = 0; scan.next(); i++) {
            if (!kept[i]) {
                continue;
            }
            long timestampDelta = scan.timestamp - base;
            int offsetDelta = (int) (scan.offset - batch.baseOffset());
            int tail = scan.recordEnd - scan.tailStart;
            ByteUtils.writeVarint(1 + ByteUtils.sizeOfVarlong(timestampDelta) + ByteUtils.sizeOfVarint(offsetDelta) + tail, out);
            out.put((byte) 0);
            ByteUtils.writeVarlong(timestampDelta, out);
            ByteUtils.writeVarint(offsetDelta, out);
            out.put(bytes, scan.tailStart, tail);
        }
        int written = out.position() - start;
        out.position(start);
        DefaultRecordBatch.writeHeader(out, batch.baseOffset(), (int) (batch.lastOffset() - batch.baseOffset()), written,
                RecordBatch.MAGIC_VALUE_V2, CompressionType.NONE, TimestampType.CREATE_TIME, base, maxTimestamp,
                batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.isTransactional(), false, horizon >= 0,
                batch.partitionLeaderEpoch(), retained);
        out.position(start + written);
        return out;
    }

    /** {@code out}, or once it is flushed to {@code dest} a buffer with {@code needed} bytes free. */
    private ByteBuffer room(PartitionLog log, ByteBuffer out, int needed, LogSegment dest, long now, long[] io)
            throws IOException, InterruptedException {
        if (out.remaining() >= needed) {
            return out;
        }
        flush(log, out, dest, now, io);
        return writeBuffer.capacity() >= needed ? writeBuffer : ByteBuffer.allocate(needed);
    }

    /** Appends what {@code out} holds to {@code dest} and empties it. */
    private void flush(PartitionLog log, ByteBuffer out, LogSegment dest, long now, long[] io) throws IOException, InterruptedException {
        if (out.position() > 0) {
            out.flip();
            dest.append(out, now);
            io[1] += out.limit();
            throttle(log, out.limit());
        }
        out.clear();
        writeBuffer.clear();
    }

    /**
     * What a pass keeps, as Apache's cleaner decides it, for kafka-clients' {@code filterTo} and
     * for the in-place {@link #walk} alike: one per cleaned segment.
     */
    private final class Keep extends RecordFilter {
        private final Map<Long, PartitionLog.LastRecord> producers;
        private final TxnTracker txns;
        private boolean discardBatchRecords;

        Keep(long now, long deleteRetentionMs, Map<Long, PartitionLog.LastRecord> producers, TxnTracker txns) {
            super(now, deleteRetentionMs);
            this.producers = producers;
            this.txns = txns;
        }

        @Override
        protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
            // Markers ride on the tombstone horizon, and go only once their transaction's data has.
            boolean canDiscard = batch.isControlBatch() ? txns.onControlBatchRead(batch) : txns.onBatchRead(batch);
            discardBatchRecords = batch.isControlBatch()
                    ? canDiscard && batch.deleteHorizonMs().isPresent() && batch.deleteHorizonMs().getAsLong() <= currentTime
                    : canDiscard;
            BatchRetention retention;
            if (batch.hasProducerId() && isLastOfProducer(batch, producers)) {
                // The producer's last sequence (or epoch): without it a reopen would not know the producer.
                retention = BatchRetention.RETAIN_EMPTY;
            } else if (discardBatchRecords) {
                retention = BatchRetention.DELETE;
            } else {
                retention = BatchRetention.DELETE_EMPTY;
            }
            return new BatchRetentionResult(retention, canDiscard && batch.isControlBatch());
        }

        @Override
        protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
            if (discardBatchRecords) {
                return false;
            }
            if (batch.isControlBatch() || record.offset() > map.latestOffset()) {
                return true;
            }
            if (!record.hasKey()) {
                return false;
            }
            int known = inPlace ? map.latest(record.offset()) : -1;
            boolean latest = known >= 0 ? known == 1 : record.offset() >= map.get(record.key());
            return latestKept(batch, latest, record.hasValue());
        }

        /** {@link #shouldRetainRecord} for the record {@code scan} is on (a data batch's). */
        boolean shouldRetain(RecordBatch batch, RecordScan scan) {
            if (discardBatchRecords) {
                return false;
            }
            if (scan.offset > map.latestOffset()) {
                return true;
            }
            if (scan.keyLength < 0) {
                return false;
            }
            // The dirty part's records by the bits the key map kept; the rest (the part cleaned before) by their keys.
            int known = map.latest(scan.offset);
            boolean latest = known >= 0 ? known == 1 : scan.offset >= map.get(scan.bytes(), scan.keyStart, scan.keyLength);
            return latestKept(batch, latest, scan.hasValue);
        }

        private boolean latestKept(RecordBatch batch, boolean latest, boolean hasValue) {
            return latest && (hasValue || batch.deleteHorizonMs().isEmpty() || currentTime < batch.deleteHorizonMs().getAsLong());
        }
    }

    private static boolean isLastOfProducer(RecordBatch batch, Map<Long, PartitionLog.LastRecord> producers) {
        PartitionLog.LastRecord last = producers.get(batch.producerId());
        if (last == null) {
            return false;
        }
        if (last.lastDataOffset() >= 0) {
            return batch.lastOffset() == last.lastDataOffset();
        }
        return batch.isControlBatch() && batch.producerEpoch() == last.epoch();
    }

    /** The whole batches of {@code s} from {@code position}, at most one read buffer's worth. */
    private MemoryRecords readChunk(LogSegment s, int position, int limit) throws IOException {
        readBuffer.clear();
        readBuffer.limit(Math.min(readBuffer.capacity(), limit - position));
        long p = position;
        while (readBuffer.hasRemaining()) {
            int n = s.channel().read(readBuffer, p);
            if (n < 0) {
                break;
            }
            p += n;
        }
        readBuffer.flip();
        return MemoryRecords.readableRecords(readBuffer);
    }

    /** A batch larger than the buffer: double it, up to the largest batch a log may hold. */
    private void growBuffers(PartitionLog log, LogSegment s, int position) {
        int max = Math.max(log.config().maxMessageBytes(), settings.ioBufferBytes());
        max = Math.min(Math.max(max, BatchHeader.SIZE), LogSegment.MAX_BATCH_BYTES);
        if (readBuffer.capacity() >= max) {
            throw new Uncleanable("segment " + s.baseOffset() + " of " + log.topicPartition()
                    + " holds a batch at position " + position + " larger than " + max + " bytes");
        }
        int size = (int) Math.min((long) readBuffer.capacity() * 2, max);
        readBuffer = ByteBuffer.allocate(size);
        writeBuffer = ByteBuffer.allocate(size);
    }

    private void restoreBuffers() {
        if (readBuffer.capacity() > settings.ioBufferBytes()) {
            readBuffer = ByteBuffer.allocate(settings.ioBufferBytes());
            writeBuffer = ByteBuffer.allocate(settings.ioBufferBytes());
        }
    }

    private void checkStop(PartitionLog log) {
        if (log.cleaningStopped()) {
            throw new Aborted("partition " + log.topicPartition() + " closed, deposed or failed");
        }
        if (retired) {
            throw new Aborted("the cleaner's settings changed");
        }
    }

    /**
     * Stops this cleaner for good: a pass in progress ends at its next step, as Apache's
     * reconfiguration shuts its cleaner threads down before it starts new ones with new settings.
     * Any thread.
     */
    public void retire() {
        retired = true;
    }

    /**
     * Apache's {@code Throttler}: keeps the pass's read and write rate under the limit by
     * sleeping, in short steps so a closing log stops the pass quickly.
     */
    private void throttle(PartitionLog log, long bytes) throws InterruptedException {
        double rate = settings.ioMaxBytesPerSecond();
        if (rate <= 0 || Double.isInfinite(rate) || rate >= Double.MAX_VALUE / 2) {
            return;
        }
        long now = clock.getAsLong();
        if (throttleWindowStart == 0 || now - throttleWindowStart > 1000) {
            throttleWindowStart = now;
            throttleWindowBytes = 0;
        }
        throttleWindowBytes += bytes;
        long due = throttleWindowStart + (long) (throttleWindowBytes * 1000.0 / rate);
        while (now < due) {
            checkStop(log);
            sleeper.sleep(Math.min(100, due - now));
            now = clock.getAsLong();
        }
    }

    /**
     * Apache's {@code CleanedTransactionMetadata}: which transactional batches belong to aborted
     * transactions (they are dropped), and which markers may go (a COMMIT whose transaction has no
     * data left in the segments read; an ABORT whose data was all dropped). An ABORT kept while its
     * data remains goes back into the cleaned segment's transaction index.
     */
    static final class TxnTracker {
        private final java.util.Set<Long> ongoingCommitted = new java.util.HashSet<>();
        private final Map<Long, OngoingAbort> ongoingAborted = new HashMap<>();
        private final PriorityQueue<TxnIndex.AbortedTxn> aborted =
                new PriorityQueue<>((a, b) -> Long.compare(a.firstOffset(), b.firstOffset()));
        TxnIndex cleanedIndex;

        private static final class OngoingAbort {
            final TxnIndex.AbortedTxn txn;
            boolean sawBatch;

            OngoingAbort(TxnIndex.AbortedTxn txn) {
                this.txn = txn;
            }
        }

        TxnTracker(TxnIndex cleanedIndex) {
            this.cleanedIndex = cleanedIndex;
        }

        void addAborted(List<TxnIndex.AbortedTxn> txns) {
            aborted.addAll(txns);
        }

        /** @return true when the control batch may be discarded */
        boolean onControlBatchRead(RecordBatch control) {
            consumeAbortedUpTo(control.lastOffset());
            Iterator<Record> it = control.iterator();
            if (!it.hasNext()) {
                // Emptied by an earlier pass.
                return true;
            }
            ControlRecordType type = ControlRecordType.parse(it.next().key());
            long pid = control.producerId();
            if (type == ControlRecordType.ABORT) {
                OngoingAbort a = ongoingAborted.remove(pid);
                if (a != null && a.sawBatch) {
                    if (cleanedIndex != null) {
                        cleanedIndex.add(a.txn);
                    }
                    return false;
                }
                return true;
            }
            if (type == ControlRecordType.COMMIT) {
                return !ongoingCommitted.remove(pid);
            }
            return false;
        }

        /** @return true when the batch belongs to an aborted transaction */
        boolean onBatchRead(RecordBatch batch) {
            consumeAbortedUpTo(batch.lastOffset());
            if (!batch.isTransactional()) {
                return false;
            }
            OngoingAbort a = ongoingAborted.get(batch.producerId());
            if (a != null) {
                a.sawBatch = true;
                return true;
            }
            ongoingCommitted.add(batch.producerId());
            return false;
        }

        private void consumeAbortedUpTo(long offset) {
            while (!aborted.isEmpty() && aborted.peek().firstOffset() <= offset) {
                TxnIndex.AbortedTxn t = aborted.poll();
                ongoingAborted.putIfAbsent(t.producerId(), new OngoingAbort(t));
            }
        }
    }
}
