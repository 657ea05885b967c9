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
import org.jboss.logging.Logger;

/**
 * Committed offsets of one group slot on the shared volume, fenced by the slot epoch.
 *
 * <pre>
 * __cluster/groups/slot-NN/fences/{epoch:08x}            {"epoch":e,"owner":b}, one per epoch, written first on
 *                                                         takeover; the highest holds the slot (EpochFence)
 * __cluster/groups/slot-NN/fence                         the same holder in the form older kaas versions read
 * __cluster/groups/slot-NN/{encodedGroupId}.{epoch:08x}.json   {"groupId":…,"protocolType":…,"offsets":[…]}
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

    record GroupFile(String groupId, String protocolType, List<OffsetRow> offsets) {
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
        this.fence = new EpochFence(disk, dir, "fence", b -> {
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
            Map<TopicPartition, CommittedOffset> offsets = new LinkedHashMap<>();
            for (OffsetRow r : f.offsets()) {
                offsets.put(new TopicPartition(r.topic(), r.partition()),
                        new CommittedOffset(r.offset(), r.leaderEpoch(), r.metadata(), r.commitTimestamp(), r.expireTimestamp()));
            }
            out.put(f.groupId(), new StoredGroup(f.groupId(), f.protocolType(), offsets));
        }
        return out;
    }

    @Override
    public void save(StoredGroup group) throws IOException {
        List<OffsetRow> rows = new ArrayList<>();
        group.offsets().forEach((tp, o) -> rows.add(new OffsetRow(tp.topic(), tp.partition(), o.offset(), o.leaderEpoch(),
                o.metadata(), o.commitTimestamp(), o.expireTimestamp())));
        String name = IdFileNames.encode(group.groupId());
        AtomicFiles.write(disk, dir.resolve(String.format("%s.%08x.json", name, epoch)), Json.bytes(new GroupFile(group.groupId(), group.protocolType(), rows)));
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
