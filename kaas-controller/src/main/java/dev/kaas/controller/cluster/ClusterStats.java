package dev.kaas.controller.cluster;

import dev.kaas.proto.CommittedOffsetStat;
import dev.kaas.proto.GroupStat;
import dev.kaas.proto.MemberStat;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What each broker last reported it leads and coordinates ({@code Stats} in cluster.proto), kept
 * while its stream lives: the one place that sees a group's committed offsets (on its coordinator)
 * and its partitions' high watermarks (on their leaders, usually other brokers) together, which is
 * what consumer lag needs. Reports replace a broker's previous one whole; a stream that ends takes
 * its broker's report with it. Thread-safe: reports arrive on gRPC threads, reads come from scrapes.
 */
@Singleton
public class ClusterStats {
    private record Reported(BrokerSession session, Stats stats, long seq) {
    }

    private final ConcurrentHashMap<Integer, Reported> byBroker = new ConcurrentHashMap<>();
    private final AtomicLong reports = new AtomicLong();

    /**
     * {@code session} is the stream the report came on: an old stream's end does not drop its
     * successor's report, and a stream the controller closed (stepping down, a session timeout),
     * whose end gRPC reports to no one, stops counting at once.
     */
    public void report(int brokerId, BrokerSession session, Stats stats) {
        byBroker.put(brokerId, new Reported(session, stats, reports.incrementAndGet()));
    }

    public void gone(int brokerId, BrokerSession session) {
        byBroker.computeIfPresent(brokerId, (id, r) -> r.session() == session ? null : r);
    }

    public record PartitionKey(String topic, int partition) {
    }

    /** A partition as its leader last reported it. */
    public record PartitionView(PartitionKey key, int leader, int leaderEpoch, long logStartOffset, long highWatermark, long sizeBytes) {
    }

    /** A group's committed offset on one partition; {@code lag} is null while no leader of the partition has reported it (or nothing real is committed). */
    public record OffsetView(PartitionKey key, long committed, Long lag) {
    }

    /** A member as its coordinator reported it; {@code assignment} topic to partitions, empty unless the group is a Stable consumer group. */
    public record MemberView(String memberId, String groupInstanceId, String clientId, String clientHost, Map<String, List<Integer>> assignment) {
    }

    /** {@code members} counts them all; {@code memberList} may hold fewer when the coordinator's report was cut ({@link Snapshot#truncated}). */
    public record GroupView(String groupId, int coordinator, String state, String protocolType, int members, List<OffsetView> offsets,
                            List<MemberView> memberList) {
    }

    /**
     * One consistent reading of every broker's last report. {@code truncated}: some broker left
     * something out of its report (its kaas.metrics.max-series bound).
     */
    public record Snapshot(Map<PartitionKey, PartitionView> partitions, List<GroupView> groups, boolean truncated) {
    }

    /**
     * Every partition and group reported on a stream still open. A partition two brokers report
     * (one handing it to the other) is taken from the higher leader epoch, the current leader; a
     * group two report (its slot moving) from the later report. Lag is Apache's
     * {@code kafka-consumer-groups.sh} figure, the high watermark minus the committed offset, but
     * never below 0: the two come from reports taken at different moments, and a consumer that
     * keeps up would otherwise often read as ahead of its partition.
     */
    public Snapshot snapshot() {
        List<Map.Entry<Integer, Reported>> open = new ArrayList<>();
        byBroker.forEach((id, r) -> {
            if (r.session().isOpen()) {
                open.add(Map.entry(id, r));
            }
        });
        // Latest first: what a later report says of a group wins.
        open.sort((a, b) -> Long.compare(b.getValue().seq(), a.getValue().seq()));
        Map<Integer, Stats> reports = new LinkedHashMap<>();
        open.forEach(e -> reports.put(e.getKey(), e.getValue().stats()));
        Map<PartitionKey, PartitionView> partitions = new HashMap<>();
        boolean truncated = false;
        for (Map.Entry<Integer, Stats> e : reports.entrySet()) {
            truncated |= e.getValue().getTruncated();
            for (PartitionStat p : e.getValue().getPartitionsList()) {
                PartitionKey key = new PartitionKey(p.getTopic(), p.getPartition());
                PartitionView seen = partitions.get(key);
                if (seen == null || seen.leaderEpoch() < p.getLeaderEpoch()) {
                    partitions.put(key, new PartitionView(key, e.getKey(), p.getLeaderEpoch(), p.getLogStartOffset(), p.getHighWatermark(),
                            p.getSizeBytes()));
                }
            }
        }
        List<GroupView> groups = new ArrayList<>();
        Set<String> seenGroups = new HashSet<>();
        for (Map.Entry<Integer, Stats> e : reports.entrySet()) {
            for (GroupStat g : e.getValue().getGroupsList()) {
                if (!seenGroups.add(g.getGroupId())) {
                    continue;
                }
                List<OffsetView> offsets = new ArrayList<>(g.getOffsetsCount());
                for (CommittedOffsetStat o : g.getOffsetsList()) {
                    PartitionKey key = new PartitionKey(o.getTopic(), o.getPartition());
                    PartitionView p = partitions.get(key);
                    offsets.add(new OffsetView(key, o.getOffset(), p == null || o.getOffset() < 0 ? null : Math.max(0, p.highWatermark() - o.getOffset())));
                }
                List<MemberView> members = new ArrayList<>(g.getMemberListCount());
                for (MemberStat m : g.getMemberListList()) {
                    Map<String, List<Integer>> assignment = new java.util.TreeMap<>();
                    m.getAssignmentList().forEach(t -> assignment.put(t.getTopic(), List.copyOf(t.getPartitionsList())));
                    members.add(new MemberView(m.getMemberId(), m.getGroupInstanceId().isEmpty() ? null : m.getGroupInstanceId(), m.getClientId(),
                            m.getClientHost(), assignment));
                }
                groups.add(new GroupView(g.getGroupId(), e.getKey(), g.getState(), g.getProtocolType(), g.getMembers(), offsets, members));
            }
        }
        return new Snapshot(partitions, groups, truncated);
    }
}
