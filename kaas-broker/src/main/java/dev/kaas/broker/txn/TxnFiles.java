package dev.kaas.broker.txn;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.EpochFence;
import dev.kaas.common.fs.Json;
import dev.kaas.broker.group.GroupFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.jboss.logging.Logger;

/**
 * The state of one transaction slot on the shared volume, fenced by the slot epoch.
 *
 * <pre>
 * __cluster/txn_state/slot-NN/fences/{epoch:08x}     {"epoch":e,"owner":b}, one per epoch, written first on
 *                                                     takeover; the highest holds the slot (EpochFence)
 * __cluster/txn_state/slot-NN/fence                  the same holder in the single-file form
 * __cluster/txn_state/slot-NN/state.{epoch:08x}.json {"slot":n,"epoch":e,"transactions":[…]}: every id of the slot
 * </pre>
 *
 * <p>Transactional ids never become file names: they are strings inside the JSON, so any id
 * (with {@code /}, {@code ..}, NUL, 32767 bytes) is safe. A write replaces the owner's own
 * epoch file (temp, fsync, rename) and counts only if the fence still shows that epoch after
 * it; a deposed owner's late writes land in a file of its dead epoch, which the next owner, having
 * loaded the newest file at or below its own epoch when it took over, never reads again. Files
 * of earlier epochs are removed after the owner's first durable write.
 *
 * <p>The file is trusted only after validation: unknown states, negative or oversized fields
 * make it unreadable (the slot does not load, and the broker logs why) rather than half-loaded.
 */
public final class TxnFiles implements TxnStore {
    private static final Logger LOG = Logger.getLogger(TxnFiles.class);
    private static final Pattern STATE = Pattern.compile("state\\.([0-9a-f]{8})\\.json");
    /** More partitions than one transaction can name in a request of the largest allowed size. */
    static final int MAX_PARTITIONS = 1_000_000;

    record PartitionRow(String topic, int partition) {
    }

    record TxnRow(String transactionalId, long producerId, long lastProducerId, short producerEpoch, short lastProducerEpoch,
                  int timeoutMs, String state, List<PartitionRow> partitions, long startTimestamp, long lastUpdateTimestamp) {
    }

    record SlotFile(int slot, int epoch, List<TxnRow> transactions) {
    }

    private final Path dir;
    private final int slot;
    private final int epoch;
    private final int broker;
    private final Disk disk;
    private final EpochFence fence;
    private boolean olderRemoved;

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
        List<TxnMetadata> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (TxnRow r : f.transactions() == null ? List.<TxnRow>of() : f.transactions()) {
            TxnMetadata m = validated(r, newest);
            if (!seen.add(m.transactionalId())) {
                throw new IOException("transactional id listed twice in " + newest);
            }
            out.add(m);
        }
        LOG.debugf("transaction slot loaded slot=%d epoch=%d from=%s transactions=%d", slot, epoch, newest.getFileName(), out.size());
        return out;
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

    @Override
    public void save(Collection<TxnMetadata> all) throws IOException {
        List<TxnRow> rows = new ArrayList<>(all.size());
        for (TxnMetadata m : all) {
            rows.add(new TxnRow(m.transactionalId(), m.producerId(), m.lastProducerId(), m.producerEpoch(), m.lastProducerEpoch(),
                    m.timeoutMs(), m.state().apacheName(),
                    m.partitions().stream().map(tp -> new PartitionRow(tp.topic(), tp.partition())).toList(),
                    m.startTimestamp(), m.lastUpdateTimestamp()));
        }
        AtomicFiles.write(disk, dir.resolve(String.format("state.%08x.json", epoch)), Json.bytes(new SlotFile(slot, epoch, rows)));
        if (!fence.holds(epoch, broker)) {
            throw new NotCoordinatorException("transaction slot " + slot + " taken over (ours was epoch " + epoch + ")");
        }
        if (!olderRemoved) {
            // Our own file now holds everything; the older epochs' are never read again.
            for (var e : stateFiles()) {
                if (e.epoch < epoch) {
                    disk.delete(e.path);
                }
            }
            olderRemoved = true;
        }
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
