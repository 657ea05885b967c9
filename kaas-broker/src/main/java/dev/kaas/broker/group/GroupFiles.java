package dev.kaas.broker.group;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.EpochFence;
import dev.kaas.common.fs.IdFileNames;
import dev.kaas.common.fs.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import dev.kaas.broker.group.GroupStore.PendingTxnOffsets;
import org.jboss.logging.Logger;

/**
 * Committed offsets of one group slot on the shared volume, fenced by the slot epoch.
 *
 * <pre>
 * __cluster/groups/slot-NN/fences/{epoch:08x}            {"epoch":e,"owner":b}, one per epoch, written first on
 *                                                         takeover; the highest holds the slot (EpochFence)
 * __cluster/groups/slot-NN/fence                         the same holder in the form older kaas versions read
 * __cluster/groups/slot-NN/{encodedGroupId}.{epoch:08x}.json   {"groupId":…,"protocolType":…,"offsets":[…],
 *                                                         "pending":[{"producerId":…,"producerEpoch":…,"offsets":[…]}]}
 * </pre>
 *
 * <p>Group ids are encoded by {@link IdFileNames} (any string, never a path). A write names the
 * file with the writer's epoch and counts only if, after its fsync, the fence still shows that
 * epoch; a deposed owner's late writes land in files of a dead epoch that the new owner, which
 * read the newest file at or below its own epoch when it took over, never merges.
 */
public final class GroupFiles implements GroupStore {
    private static final Logger LOG = Logger.getLogger(GroupFiles.class);

    record Fence(int epoch, int broker) {
    }

    record OffsetRow(String topic, int partition, long offset, int leaderEpoch, String metadata, long commitTimestamp, long expireTimestamp) {
    }

    /** Transactional offsets of one producer awaiting the marker; absent in files older than transactions. */
    record PendingRow(long producerId, short producerEpoch, List<OffsetRow> offsets) {
    }

    record GroupFile(String groupId, String protocolType, List<OffsetRow> offsets, List<PendingRow> pending) {
    }

    private final Path dir;
    private final int epoch;
    private final int broker;
    private final Disk disk;
    private final EpochFence fence;

    public GroupFiles(Path dataDir, int slot, int epoch, int broker) {
        this(dataDir, slot, epoch, broker, Disk.SYSTEM);
    }

    /** As {@link #GroupFiles(Path, int, int, int)}, writing through {@code disk} (the durability tests' seam). */
    GroupFiles(Path dataDir, int slot, int epoch, int broker, Disk disk) {
        this.disk = disk;
        this.dir = dataDir.resolve("__cluster").resolve("groups").resolve(String.format("slot-%02d", slot));
        this.epoch = epoch;
        this.broker = broker;
        this.fence = slotFence(disk, dir);
    }

    /** The fence of a coordinator slot's directory (group or transaction): {@code {"epoch":e,"broker":b}} per epoch. */
    public static EpochFence slotFence(Disk disk, Path dir) {
        return new EpochFence(disk, dir, "fence", b -> {
            try {
                Fence f = Json.read(b, Fence.class);
                return new EpochFence.Holder(f.epoch(), f.broker());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, h -> Json.bytes(new Fence((int) h.epoch(), h.owner())));
    }

    /** Takeover, step one: the fence with our epoch (a file per epoch, see EpochFence). Refuses when a newer owner already fenced. */
    public void acquire() throws IOException {
        Files.createDirectories(dir);
        EpochFence.Holder refused = fence.claim(epoch, broker);
        if (refused != null) {
            throw new NotCoordinatorException("group slot held by epoch " + refused.epoch() + " of broker " + refused.owner()
                    + "; ours is epoch " + epoch);
        }
    }

    @Override
    public Map<String, StoredGroup> loadAll() throws IOException {
        Map<String, Path> newest = new HashMap<>();
        Map<String, Integer> newestEpoch = new HashMap<>();
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                String[] parts = p.getFileName().toString().split("\\.");
                if (parts.length != 3 || !parts[2].equals("json")) {
                    continue;
                }
                int e = Integer.parseInt(parts[1], 16);
                if (e <= epoch && e >= newestEpoch.getOrDefault(parts[0], -1)) {
                    newest.put(parts[0], p);
                    newestEpoch.put(parts[0], e);
                }
            }
        }
        Map<String, StoredGroup> out = new HashMap<>();
        for (var e : newest.entrySet()) {
            GroupFile f = Json.read(Files.readAllBytes(e.getValue()), GroupFile.class);
            if (!IdFileNames.encode(f.groupId()).equals(e.getKey())) {
                LOG.warnf("ignoring group file whose id does not match its name file=%s", e.getValue());
                continue;
            }
            Map<Long, PendingTxnOffsets> pending = new HashMap<>();
            for (PendingRow p : f.pending() == null ? List.<PendingRow>of() : f.pending()) {
                pending.put(p.producerId(), new PendingTxnOffsets(p.producerEpoch(), offsets(p.offsets())));
            }
            out.put(f.groupId(), new StoredGroup(f.groupId(), f.protocolType(), offsets(f.offsets()), pending));
        }
        return out;
    }

    private static Map<TopicPartition, CommittedOffset> offsets(List<OffsetRow> rows) {
        Map<TopicPartition, CommittedOffset> offsets = new LinkedHashMap<>();
        for (OffsetRow r : rows == null ? List.<OffsetRow>of() : rows) {
            offsets.put(new TopicPartition(r.topic(), r.partition()),
                    new CommittedOffset(r.offset(), r.leaderEpoch(), r.metadata(), r.commitTimestamp(), r.expireTimestamp()));
        }
        return offsets;
    }

    private static List<OffsetRow> rows(Map<TopicPartition, CommittedOffset> offsets) {
        List<OffsetRow> rows = new ArrayList<>();
        offsets.forEach((tp, o) -> rows.add(new OffsetRow(tp.topic(), tp.partition(), o.offset(), o.leaderEpoch(),
                o.metadata(), o.commitTimestamp(), o.expireTimestamp())));
        return rows;
    }

    @Override
    public void save(StoredGroup group) throws IOException {
        List<PendingRow> pending = new ArrayList<>();
        group.pending().forEach((pid, p) -> pending.add(new PendingRow(pid, p.producerEpoch(), rows(p.offsets()))));
        String name = IdFileNames.encode(group.groupId());
        AtomicFiles.write(disk, dir.resolve(String.format("%s.%08x.json", name, epoch)),
                Json.bytes(new GroupFile(group.groupId(), group.protocolType(), rows(group.offsets()), pending)));
        checkFence();
        removeOlder(name, epoch - 1);
    }

    @Override
    public void delete(String groupId) throws IOException {
        checkFence();
        removeOlder(IdFileNames.encode(groupId), epoch);
    }

    private void removeOlder(String name, int upToEpoch) throws IOException {
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                String[] parts = p.getFileName().toString().split("\\.");
                if (parts.length == 3 && parts[0].equals(name) && Integer.parseInt(parts[1], 16) <= upToEpoch) {
                    disk.delete(p);
                }
            }
        }
    }

    private void checkFence() throws IOException {
        if (!fence.holds(epoch, broker)) {
            throw new NotCoordinatorException("group slot taken over (ours was epoch " + epoch + ")");
        }
    }
}
