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
 *                                                         "pending":[{"producerId":…,"producerEpoch":…,"offsets":[…]}],
 *                                                         "membership":{"generation":…,"protocolName":…,"leader":…,
 *                                                           "members":[{"memberId":…,…,"subscription":base64,"assignment":base64}]}}
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

    /** The membership of the group's last completed rebalance (its generation alone once Empty); absent in files older than it. */
    record MembershipRow(int generation, String protocolName, String leader, List<MemberRow> members) {
    }

    /** {@code subscription} and {@code assignment} are the protocol's bytes, base64 in the JSON. */
    record MemberRow(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs,
                     int sessionTimeoutMs, byte[] subscription, byte[] assignment) {
    }

    record GroupFile(String groupId, String protocolType, List<OffsetRow> offsets, List<PendingRow> pending, MembershipRow membership) {
    }

    /** More members than any group a file could honestly hold: a file claiming more is not trusted. */
    static final int MAX_STORED_MEMBERS = 100_000;

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
            out.put(f.groupId(), new StoredGroup(f.groupId(), f.protocolType(), offsets(f.offsets()), pending,
                    membership(f.membership(), f.protocolType(), e.getValue())));
        }
        return out;
    }

    /**
     * The stored membership if it is whole and consistent (another process wrote the file): else
     * none, and the group loads Empty with its offsets, its members rejoining as after a restart.
     */
    static GroupStore.StoredMembership membership(MembershipRow m, String protocolType, Path file) {
        if (m == null) {
            return null;
        }
        String problem = null;
        List<MemberRow> rows = m.members() == null ? List.of() : m.members();
        if (m.generation() < 0) {
            problem = "negative generation";
        } else if (rows.size() > MAX_STORED_MEMBERS) {
            problem = rows.size() + " members";
        } else if (!rows.isEmpty() && (protocolType == null || protocolType.isEmpty() || m.protocolName() == null || m.leader() == null
                || rows.stream().noneMatch(r -> r != null && m.leader().equals(r.memberId())))) {
            problem = "no protocol type, no protocol or no leader among the members";
        } else {
            java.util.Set<String> ids = new java.util.HashSet<>();
            java.util.Set<String> instances = new java.util.HashSet<>();
            for (MemberRow r : rows) {
                if (r == null || r.memberId() == null || r.memberId().isEmpty() || !ids.add(r.memberId()) || r.clientId() == null
                        || r.clientHost() == null || r.sessionTimeoutMs() <= 0 || r.rebalanceTimeoutMs() <= 0
                        || r.subscription() == null || r.assignment() == null
                        || (r.groupInstanceId() != null && (r.groupInstanceId().isEmpty() || !instances.add(r.groupInstanceId())))) {
                    problem = "a member without an id, a client, timeouts or protocol bytes, or twice";
                    break;
                }
            }
        }
        if (problem != null) {
            LOG.warnf("ignoring the stored membership of a group file (%s): its members will rejoin file=%s", problem, file);
            return null;
        }
        List<GroupStore.StoredMember> members = new ArrayList<>();
        for (MemberRow r : rows) {
            members.add(new GroupStore.StoredMember(r.memberId(), r.groupInstanceId(), r.clientId(), r.clientHost(), r.rebalanceTimeoutMs(),
                    r.sessionTimeoutMs(), r.subscription(), r.assignment()));
        }
        return new GroupStore.StoredMembership(m.generation(), rows.isEmpty() ? null : m.protocolName(),
                rows.isEmpty() ? null : m.leader(), members);
    }

    private static MembershipRow membershipRow(GroupStore.StoredMembership m) {
        if (m == null) {
            return null;
        }
        List<MemberRow> rows = new ArrayList<>();
        for (GroupStore.StoredMember r : m.members()) {
            rows.add(new MemberRow(r.memberId(), r.groupInstanceId(), r.clientId(), r.clientHost(), r.rebalanceTimeoutMs(),
                    r.sessionTimeoutMs(), r.subscription(), r.assignment()));
        }
        return new MembershipRow(m.generationId(), m.protocolName(), m.leaderId(), rows);
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
                Json.bytes(new GroupFile(group.groupId(), group.protocolType(), rows(group.offsets()), pending,
                        membershipRow(group.membership()))));
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
