package dev.kaas.broker.health;

import dev.kaas.broker.cluster.ControllerSession;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.data.Partitions;
import dev.kaas.broker.data.Replica;
import dev.kaas.broker.group.GroupCoordinator;
import dev.kaas.broker.group.GroupShard;
import dev.kaas.proto.AssignedTopic;
import dev.kaas.proto.CommittedOffsetStat;
import dev.kaas.proto.GroupStat;
import dev.kaas.proto.MemberStat;
import dev.kaas.proto.PartitionStat;
import dev.kaas.proto.Stats;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * Every {@code kaas.metrics.stats-interval}, sends the controller what this broker leads (log start
 * offset, high watermark, size) and coordinates (groups, their state and committed offsets), so
 * that the controller, which sees every broker's, can serve consumer lag across brokers: a group's
 * coordinator and its partitions' leaders are usually different brokers. Off the event loops, on a
 * thread of its own.
 */
@ApplicationScoped
public class StatsReporter {
    private static final Logger LOG = Logger.getLogger(StatsReporter.class);
    /** A coordinator slot busy loading its files is left out of one report rather than delaying all of it. */
    static final long SLOT_WAIT_MS = 2_000;

    @Inject
    Partitions partitions;

    @Inject
    GroupCoordinator groups;

    @Inject
    ControllerSession session;

    @Inject
    BrokerConfig config;

    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-stats-reporter");
        t.setDaemon(true);
        return t;
    });

    void onStart(@Observes StartupEvent ev) {
        long every = config.metrics().statsInterval().toMillis();
        if (every < 1) {
            throw new IllegalArgumentException("kaas.metrics.stats-interval must be at least 1ms, not " + config.metrics().statsInterval());
        }
        thread.scheduleWithFixedDelay(this::report, every, every, TimeUnit.MILLISECONDS);
    }

    void onStop(@Observes ShutdownEvent ev) {
        thread.shutdownNow();
    }

    private void report() {
        // A task that throws is never run again: nothing may escape.
        try {
            session.sendStats(stats(partitionStats(partitions), summaries(groups), config.metrics().maxSeries()));
        } catch (Throwable e) {
            LOG.debugf(e, "stats not reported");
        }
    }

    /** The partitions this broker leads, each read as it is now. */
    static List<PartitionStat> partitionStats(Partitions partitions) {
        List<PartitionStat> out = new ArrayList<>();
        for (Map.Entry<TopicPartition, Replica> e : partitions.view().entrySet()) {
            var log = e.getValue().log();
            out.add(PartitionStat.newBuilder().setTopic(e.getKey().topic()).setPartition(e.getKey().partition())
                    .setLeaderEpoch(log.leaderEpoch()).setLogStartOffset(log.logStartOffset()).setHighWatermark(log.highWatermark())
                    .setSizeBytes(log.sizeInBytes()).build());
        }
        return out;
    }

    /** Every group this broker coordinates, each slot read on its own executor; a slot that does not answer in time is left out. */
    static List<GroupShard.GroupSummary> summaries(GroupCoordinator groups) throws Exception {
        List<GroupShard.GroupSummary> out = new ArrayList<>();
        for (List<GroupShard.GroupSummary> slot : groups.callAll(GroupShard::summaries, SLOT_WAIT_MS)
                .get(2 * SLOT_WAIT_MS, TimeUnit.MILLISECONDS)) {
            out.addAll(slot);
        }
        return out;
    }

    /** Under gRPC's 4 MiB per message, whatever the names' lengths. */
    static final int MAX_BYTES = 3 << 20;

    /**
     * One report, bounded: at most {@code max} partitions, {@code max} groups, {@code max}
     * committed offsets and {@code max} members (the metric series they become are bounded by the
     * same number on the controller), and at most {@link #MAX_BYTES}; what is left out is flagged
     * {@code truncated}. Taken in name order, so the same ones are left out every time and no
     * series comes and goes; a group's members in the order they joined.
     */
    static Stats stats(Collection<PartitionStat> partitionsIn, Collection<GroupShard.GroupSummary> groupsIn, int max) {
        List<PartitionStat> partitions = new ArrayList<>(partitionsIn);
        partitions.sort(Comparator.comparing(PartitionStat::getTopic).thenComparingInt(PartitionStat::getPartition));
        List<GroupShard.GroupSummary> groups = new ArrayList<>(groupsIn);
        groups.sort(Comparator.comparing(GroupShard.GroupSummary::groupId));
        Stats.Builder b = Stats.newBuilder();
        long bytes = 0;
        for (PartitionStat p : partitions) {
            bytes += p.getSerializedSize() + 8;
            if (b.getPartitionsCount() == max || bytes > MAX_BYTES) {
                b.setTruncated(true);
                break;
            }
            b.addPartitions(p);
        }
        int offsets = 0;
        int members = 0;
        for (GroupShard.GroupSummary g : groups) {
            GroupStat.Builder gb = GroupStat.newBuilder().setGroupId(g.groupId()).setState(g.state().wireName())
                    .setProtocolType(g.protocolType()).setMembers(g.members());
            bytes += gb.build().getSerializedSize() + 8;
            if (b.getGroupsCount() == max || bytes > MAX_BYTES) {
                b.setTruncated(true);
                break;
            }
            List<Map.Entry<TopicPartition, Long>> committed = new ArrayList<>(g.offsets().entrySet());
            committed.sort(Map.Entry.comparingByKey(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition)));
            for (Map.Entry<TopicPartition, Long> o : committed) {
                CommittedOffsetStat c = CommittedOffsetStat.newBuilder().setTopic(o.getKey().topic()).setPartition(o.getKey().partition())
                        .setOffset(o.getValue()).build();
                bytes += c.getSerializedSize() + 8;
                if (offsets == max || bytes > MAX_BYTES) {
                    b.setTruncated(true);
                    break;
                }
                offsets++;
                gb.addOffsets(c);
            }
            for (GroupShard.MemberDescription m : g.memberList()) {
                if (members == max) {
                    b.setTruncated(true);
                    break;
                }
                MemberStat ms = member(m, g.protocolType(), MAX_BYTES - bytes);
                bytes += ms.getSerializedSize() + 8;
                if (bytes > MAX_BYTES) {
                    b.setTruncated(true);
                    break;
                }
                members++;
                gb.addMemberList(ms);
            }
            b.addGroups(gb);
        }
        return b.build();
    }

    /** The largest assignment decoded for a report: about 250,000 partitions, well past any real consumer's. */
    static final int MAX_ASSIGNMENT_BYTES = 1 << 20;

    /**
     * A member as the report carries it. The assignment bytes are the group leader's, sent in its
     * SyncGroup, so they are decoded as untrusted: a consumer-protocol assignment that does not
     * decode is reported as none, and so is one too large to decode here: past
     * {@link #MAX_ASSIGNMENT_BYTES}, or past four times the report's {@code room} left (an encoded
     * partition takes 4 bytes, at least 1 in the report), which bounds the decoding one report
     * does to a few times its own size whatever the leaders send.
     */
    static MemberStat member(GroupShard.MemberDescription m, String protocolType, long room) {
        MemberStat.Builder b = MemberStat.newBuilder().setMemberId(m.memberId())
                .setGroupInstanceId(m.groupInstanceId() == null ? "" : m.groupInstanceId())
                .setClientId(m.clientId() == null ? "" : m.clientId()).setClientHost(m.clientHost() == null ? "" : m.clientHost());
        int length = m.assignment().length;
        if (ConsumerProtocol.PROTOCOL_TYPE.equals(protocolType) && length > 0 && length <= MAX_ASSIGNMENT_BYTES && length <= 4 * room) {
            try {
                Map<String, List<Integer>> byTopic = new TreeMap<>();
                for (TopicPartition tp : ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(m.assignment())).partitions()) {
                    byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
                }
                byTopic.forEach((topic, partitions) -> {
                    Collections.sort(partitions);
                    b.addAssignment(AssignedTopic.newBuilder().setTopic(topic).addAllPartitions(partitions));
                });
            } catch (RuntimeException malformed) {
                b.clearAssignment();
            }
        }
        return b.build();
    }
}
