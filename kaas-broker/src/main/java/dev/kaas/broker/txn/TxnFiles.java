package dev.kaas.broker.txn;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.EpochFence;
import dev.kaas.common.fs.Json;
import dev.kaas.broker.group.GroupFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.utils.Crc32C;
import org.jboss.logging.Logger;

/**
 * The state of one transaction slot on the shared volume, fenced by the slot epoch.
 *
 * <pre>
 * __cluster/txn_state/slot-NN/fences/{epoch:08x}     {"epoch":e,"owner":b}, one per epoch, written first on
 *                                                     takeover; the highest holds the slot (EpochFence)
 * __cluster/txn_state/slot-NN/fence                  the same holder in the single-file form
 * __cluster/txn_state/slot-NN/state.{epoch:08x}.json {"slot":n,"epoch":e,"generation":g,"transactions":[…]}: a snapshot
 *                                                     of every id of the slot
 * __cluster/txn_state/slot-NN/journal.{epoch:08x}.{g:08x}.log   what changed since that snapshot: records of
 *                                                     [length:int32][crc32c:int32][{"put":{…}} or {"remove":id}]
 * </pre>
 *
 * <p>A write appends the ids that changed to the journal and fsyncs it (one fdatasync, as an
 * append to Apache's {@code __transaction_state} with flush.messages=1); an owner's first write
 * and every {@link #COMPACT_RECORDS} records after, it writes a snapshot instead, which names the
 * journal generation that follows it. Loading reads the newest snapshot at or below our epoch
 * and replays its journal up to the first torn or corrupt record (never acknowledged: a record
 * counts once fsynced).
 *
 * <p>Transactional ids never become file names: they are strings inside the JSON, so any id
 * (with {@code /}, {@code ..}, NUL, 32767 bytes) is safe. A write goes to the owner's own epoch's
 * files and counts only if the fence still shows that epoch after it; a deposed owner's late
 * writes land in files of its dead epoch, which the next owner, having written its own snapshot
 * when it took over, never reads again. Files of earlier epochs are removed after that snapshot.
 *
 * <p>The file is trusted only after validation: unknown states, negative or oversized fields
 * make it unreadable (the slot does not load, and the broker logs why) rather than half-loaded.
 */
public final class TxnFiles implements TxnStore {
    private static final Logger LOG = Logger.getLogger(TxnFiles.class);
    private static final Pattern STATE = Pattern.compile("state\\.([0-9a-f]{8})\\.json");
    private static final Pattern JOURNAL = Pattern.compile("journal\\.([0-9a-f]{8})\\.([0-9a-f]{8})\\.log");
    /** Journal records after which the next write is a snapshot instead (bounds a takeover's replay). */
    static final int COMPACT_RECORDS = 1_000;
    /** Largest journal record read back: a garbage length must not allocate gigabytes. */
    static final int MAX_RECORD_BYTES = 64 * 1024 * 1024;
    /** More partitions than one transaction can name in a request of the largest allowed size. */
    static final int MAX_PARTITIONS = 1_000_000;

    record PartitionRow(String topic, int partition) {
    }

    record TxnRow(String transactionalId, long producerId, long lastProducerId, short producerEpoch, short lastProducerEpoch,
                  int timeoutMs, String state, List<PartitionRow> partitions, long startTimestamp, long lastUpdateTimestamp) {
    }

    /** A snapshot; {@code generation} names the journal that follows it (null in files written before journals: 0). */
    record SlotFile(int slot, int epoch, Integer generation, List<TxnRow> transactions) {
    }

    /** One journal record: an id's new state, or its removal. */
    record JournalRecord(TxnRow put, String remove) {
    }

    private final Path dir;
    private final int slot;
    private final int epoch;
    private final int broker;
    private final Disk disk;
    private final EpochFence fence;
    private boolean olderRemoved;
    /** What the files hold once the last save returned; null before this owner's first save. */
    private Map<String, TxnMetadata> saved;
    private FileChannel journal;
    private long journalEnd;
    private int journalRecords;
    private int generation;
    /** Files our last snapshot superseded, removed once the fence confirms we still own the slot. */
    private final List<Path> superseded = new ArrayList<>();

    public TxnFiles(Path dataDir, int slot, int epoch, int broker) {
        this(dataDir, slot, epoch, broker, Disk.SYSTEM);
    }

    /** As {@link #TxnFiles(Path, int, int, int)}, writing through {@code disk} (the durability tests' seam). */
    TxnFiles(Path dataDir, int slot, int epoch, int broker, Disk disk) {
        this.disk = disk;
        this.dir = slotDir(dataDir, slot);
        this.slot = slot;
        this.epoch = epoch;
        this.broker = broker;
        this.fence = GroupFiles.slotFence(disk, dir);
    }

    static Path slotDir(Path dataDir, int slot) {
        return dataDir.resolve("__cluster").resolve("txn_state").resolve(String.format("slot-%02d", slot));
    }

    /** Takeover, step one: the fence with our epoch. Refuses when a newer owner already fenced. */
    public void acquire() throws IOException {
        Files.createDirectories(dir);
        EpochFence.Holder refused = fence.claim(epoch, broker);
        if (refused != null) {
            throw new NotCoordinatorException("transaction slot " + slot + " held by epoch " + refused.epoch() + " of broker "
                    + refused.owner() + "; ours is epoch " + epoch);
        }
    }

    @Override
    public Collection<TxnMetadata> load() throws IOException {
        Path newest = null;
        int newestEpoch = -1;
        for (var e : stateFiles()) {
            if (e.epoch <= epoch && e.epoch > newestEpoch) {
                newest = e.path;
                newestEpoch = e.epoch;
            }
        }
        if (newest == null) {
            return List.of();
        }
        SlotFile f = Json.read(Files.readAllBytes(newest), SlotFile.class);
        Map<String, TxnMetadata> state = new LinkedHashMap<>();
        for (TxnRow r : f.transactions() == null ? List.<TxnRow>of() : f.transactions()) {
            TxnMetadata m = validated(r, newest);
            if (state.put(m.transactionalId(), m) != null) {
                throw new IOException("transactional id listed twice in " + newest);
            }
        }
        int replayed = 0;
        if (f.generation() != null) {
            Path journalFile = dir.resolve(journalName(newestEpoch, f.generation()));
            if (!Files.exists(journalFile)) {
                // Created before the snapshot naming it: gone means files were removed under us; refuse rather than load too little.
                throw new IOException("journal " + journalFile.getFileName() + " named by " + newest.getFileName() + " is missing");
            }
            replayed = replay(journalFile, state);
        }
        LOG.debugf("transaction slot loaded slot=%d epoch=%d from=%s transactions=%d journalRecords=%d", slot, epoch,
                newest.getFileName(), state.size(), replayed);
        return List.copyOf(state.values());
    }

    /**
     * Applies the journal records that follow a snapshot, up to the first torn or corrupt one: a
     * record counts only once fsynced, so what follows a bad one was never acknowledged.
     */
    private static int replay(Path journal, Map<String, TxnMetadata> state) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(journal));
        int n = 0;
        while (b.remaining() >= 8) {
            int length = b.getInt();
            int crc = b.getInt();
            if (length <= 0 || length > MAX_RECORD_BYTES || length > b.remaining()) {
                break;
            }
            byte[] body = new byte[length];
            b.get(body);
            if ((int) Crc32C.compute(body, 0, length) != crc) {
                break;
            }
            // Past its CRC a record is whole: one that does not parse is damage, not a torn tail.
            JournalRecord r = Json.read(body, JournalRecord.class);
            if (r.put() != null) {
                TxnMetadata m = validated(r.put(), journal);
                state.put(m.transactionalId(), m);
            } else if (r.remove() != null) {
                state.remove(r.remove());
            }
            n++;
        }
        return n;
    }

    private static TxnMetadata validated(TxnRow r, Path file) throws IOException {
        TxnState state = r.state() == null ? null : TxnState.forApacheName(r.state());
        List<PartitionRow> parts = r.partitions() == null ? List.of() : r.partitions();
        if (r.transactionalId() == null || r.transactionalId().isEmpty() || state == null || r.producerId() < 0
                || r.timeoutMs() <= 0 || parts.size() > MAX_PARTITIONS) {
            throw new IOException("invalid transaction entry in " + file + ": " + r.transactionalId() + " state " + r.state());
        }
        List<TopicPartition> tps = new ArrayList<>(parts.size());
        for (PartitionRow p : parts) {
            if (p == null || p.topic() == null || p.partition() < 0) {
                throw new IOException("invalid partition in transaction " + r.transactionalId() + " of " + file);
            }
            tps.add(new TopicPartition(p.topic(), p.partition()));
        }
        return new TxnMetadata(r.transactionalId(), r.producerId(), r.lastProducerId(), r.producerEpoch(), r.lastProducerEpoch(),
                r.timeoutMs(), state, tps, r.startTimestamp(), r.lastUpdateTimestamp());
    }

    private static TxnRow row(TxnMetadata m) {
        return new TxnRow(m.transactionalId(), m.producerId(), m.lastProducerId(), m.producerEpoch(), m.lastProducerEpoch(),
                m.timeoutMs(), m.state().apacheName(),
                m.partitions().stream().map(tp -> new PartitionRow(tp.topic(), tp.partition())).toList(),
                m.startTimestamp(), m.lastUpdateTimestamp());
    }

    /**
     * Makes {@code all} the slot's durable state. The first write of an owner, and every
     * {@link #COMPACT_RECORDS} records after, is a snapshot (the whole slot, temp + fsync + rename)
     * that starts a new journal generation; otherwise only what changed since the last write is
     * appended to the journal and fsynced, one fdatasync per write. Either way the fence is
     * re-read afterwards.
     */
    @Override
    public void save(Collection<TxnMetadata> all) throws IOException {
        Map<String, TxnMetadata> next = new LinkedHashMap<>();
        all.forEach(m -> next.put(m.transactionalId(), m));
        if (saved == null || journal == null || journalRecords >= COMPACT_RECORDS) {
            snapshot(next);
        } else {
            List<JournalRecord> changes = new ArrayList<>();
            // (A change too large for one record goes into a snapshot instead; see append.)
            next.forEach((id, m) -> {
                if (!m.equals(saved.get(id))) {
                    changes.add(new JournalRecord(row(m), null));
                }
            });
            saved.keySet().forEach(id -> {
                if (!next.containsKey(id)) {
                    changes.add(new JournalRecord(null, id));
                }
            });
            if (!append(changes)) {
                snapshot(next);
            }
        }
        saved = next;
        if (!fence.holds(epoch, broker)) {
            throw new NotCoordinatorException("transaction slot " + slot + " taken over (ours was epoch " + epoch + ")");
        }
        removeSuperseded();
    }

    private void snapshot(Map<String, TxnMetadata> state) throws IOException {
        int generation = saved == null ? nextFreeGeneration() : this.generation + 1;
        if (journal != null) {
            journal.close();
            journal = null;
        }
        // The journal exists (and its name is durable) before the snapshot that names it: a reader
        // that finds the snapshot always finds its journal, so a missing one is an error, not "empty".
        Path path = dir.resolve(journalName(epoch, generation));
        FileChannel next = disk.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        try {
            next.force(true);
            disk.fsyncDirectory(dir);
            List<TxnRow> rows = state.values().stream().map(TxnFiles::row).toList();
            AtomicFiles.write(disk, dir.resolve(String.format("state.%08x.json", epoch)), Json.bytes(new SlotFile(slot, epoch, generation, rows)));
        } catch (IOException | RuntimeException e) {
            next.close();
            throw e;
        }
        if (saved != null) {
            superseded.add(dir.resolve(journalName(epoch, this.generation)));
        }
        journal = next;
        journalEnd = 0;
        journalRecords = 0;
        this.generation = generation;
    }

    /**
     * Removes what our snapshot superseded: our previous journal generation and, after our first
     * snapshot, every older epoch's files. Only once the fence showed us still the owner after the
     * write: a deposed owner deleting a journal its successor is about to replay would lose
     * acknowledged records.
     */
    private void removeSuperseded() throws IOException {
        for (Path p : superseded) {
            disk.delete(p);
        }
        superseded.clear();
        if (olderRemoved) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                String name = p.getFileName().toString();
                Matcher s = STATE.matcher(name);
                Matcher j = JOURNAL.matcher(name);
                if ((s.matches() && Integer.parseUnsignedInt(s.group(1), 16) < epoch)
                        || (j.matches() && (Integer.parseUnsignedInt(j.group(1), 16) < epoch
                        || (Integer.parseUnsignedInt(j.group(1), 16) == epoch && Integer.parseUnsignedInt(j.group(2), 16) != generation)))) {
                    disk.delete(p);
                }
            }
        }
        olderRemoved = true;
    }

    /** A generation no journal of our epoch has used: a second instance of the same epoch never writes into an old one's names. */
    private int nextFreeGeneration() throws IOException {
        int next = 0;
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Matcher j = JOURNAL.matcher(p.getFileName().toString());
                if (j.matches() && Integer.parseUnsignedInt(j.group(1), 16) == epoch) {
                    next = Math.max(next, Integer.parseUnsignedInt(j.group(2), 16) + 1);
                }
            }
        }
        return next;
    }

    /** Appends and fsyncs the records; false (nothing written) when one is larger than replay accepts. */
    private boolean append(List<JournalRecord> changes) throws IOException {
        if (changes.isEmpty()) {
            return true;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (JournalRecord r : changes) {
            byte[] body = Json.bytes(r);
            if (body.length > MAX_RECORD_BYTES) {
                return false;
            }
            ByteBuffer head = ByteBuffer.allocate(8).putInt(body.length).putInt((int) Crc32C.compute(body, 0, body.length));
            out.write(head.array());
            out.write(body);
        }
        ByteBuffer buf = ByteBuffer.wrap(out.toByteArray());
        try {
            while (buf.hasRemaining()) {
                journalEnd += journal.write(buf, journalEnd);
            }
            journal.force(false);
        } catch (IOException | RuntimeException e) {
            // A record may be torn here, and replay stops at a torn record: the next write starts a new generation.
            close();
            journal = null;
            throw e;
        }
        journalRecords += changes.size();
        return true;
    }

    /** Closes the journal (the slot moved away or the broker stops); nothing is written. */
    public void close() {
        if (journal != null) {
            try {
                journal.close();
            } catch (IOException e) {
                LOG.debugf("closing the journal of transaction slot %d: %s", slot, e.toString());
            }
        }
    }

    private static String journalName(int epoch, int generation) {
        return String.format("journal.%08x.%08x.log", epoch, generation);
    }

    private record StateFile(Path path, int epoch) {
    }

    private List<StateFile> stateFiles() throws IOException {
        List<StateFile> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Matcher m = STATE.matcher(p.getFileName().toString());
                if (m.matches()) {
                    out.add(new StateFile(p, Integer.parseUnsignedInt(m.group(1), 16)));
                }
            }
        }
        return out;
    }
}
