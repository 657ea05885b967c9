package dev.kaas.broker.cluster;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * This broker's picture of the cluster: the last assignment it applied. Read lock-free from
 * event loops (one volatile snapshot); replaced only by the assignment applier.
 */
@ApplicationScoped
public class ClusterView {
    private record Snapshot(Assignment assignment, Map<String, TopicAssignment> byName, Map<String, TopicAssignment> byId) {
    }

    private final int brokerId;
    private volatile Snapshot snapshot = new Snapshot(Assignment.empty(null), Map.of(), Map.of());
    private volatile boolean connected;
    private final ConcurrentSkipListMap<Long, CompletableFuture<Void>> versionWaiters = new ConcurrentSkipListMap<>();

    public ClusterView(BrokerConfig config) {
        this.brokerId = config.broker().id();
    }

    public int brokerId() {
        return brokerId;
    }

    public Assignment assignment() {
        return snapshot.assignment();
    }

    public TopicAssignment topic(String name) {
        return snapshot.byName().get(name);
    }

    public TopicAssignment topicById(String topicId) {
        return snapshot.byId().get(topicId);
    }

    /** Whether the applied assignment has this partition (an unknown one is UNKNOWN_TOPIC_OR_PARTITION). */
    public boolean exists(org.apache.kafka.common.TopicPartition tp) {
        TopicAssignment t = topic(tp.topic());
        return t != null && tp.partition() >= 0 && tp.partition() < t.partitions().size();
    }

    public Map<String, TopicAssignment> topics() {
        return snapshot.byName();
    }

    /**
     * Who leads a partition now, as Apache's {@code KafkaApis.getCurrentLeader} tells a client sent
     * to the wrong broker (KIP-951): leader id and epoch from the applied assignment ({@code -1, -1}
     * for a partition it does not know), and the leader's endpoint on {@code listenerName}, absent
     * when there is no leader or it does not advertise that listener.
     */
    public record CurrentLeader(int leaderId, int leaderEpoch, Optional<Node> node) {
        static final CurrentLeader UNKNOWN = new CurrentLeader(-1, -1, Optional.empty());
    }

    /** The current leader of {@code tp} per the applied assignment; see {@link CurrentLeader}. */
    public CurrentLeader currentLeader(TopicPartition tp, String listenerName) {
        Snapshot s = snapshot;
        TopicAssignment t = s.byName().get(tp.topic());
        PartitionAssignment p = t == null ? null : t.partitions().stream()
                .filter(x -> x.partition() == tp.partition()).findFirst().orElse(null);
        if (p == null) {
            return CurrentLeader.UNKNOWN;
        }
        Optional<Node> node = p.leader() == PartitionAssignment.NO_LEADER ? Optional.empty()
                : s.assignment().broker(p.leader()).flatMap(b -> node(b, listenerName));
        return new CurrentLeader(p.leader(), p.leaderEpoch(), node);
    }

    /**
     * The brokers of {@code a} that advertise {@code listenerName}, each as clients on that listener
     * reach it (Apache's {@code getAliveBrokerNodes(listenerName)}), in the assignment's order. kaas
     * has no racks.
     */
    public static List<Node> nodes(Assignment a, String listenerName) {
        List<Node> out = new ArrayList<>();
        for (BrokerInfo b : a.brokers()) {
            node(b, listenerName).ifPresent(out::add);
        }
        return out;
    }

    private static Optional<Node> node(BrokerInfo b, String listenerName) {
        for (EndpointInfo e : b.endpoints()) {
            if (e.listener().equals(listenerName)) {
                return Optional.of(new Node(b.id(), e.host(), e.port()));
            }
        }
        return Optional.empty();
    }

    /**
     * Publishes an assignment whose partitions have all been opened or closed already. Public
     * only for the assignment applier, which lives in its own package; the architecture test
     * checks that nothing else calls it.
     */
    public void applied(Assignment a) {
        Map<String, TopicAssignment> byName = new HashMap<>();
        Map<String, TopicAssignment> byId = new HashMap<>();
        for (TopicAssignment t : a.topics()) {
            byName.put(t.topic().name(), t);
            byId.put(t.topic().topicId(), t);
        }
        snapshot = new Snapshot(a, Map.copyOf(byName), Map.copyOf(byId));
        var ready = versionWaiters.headMap(a.version(), true);
        ready.values().forEach(f -> f.complete(null));
        ready.clear();
    }

    /**
     * Completes once an assignment of at least {@code version} has been applied here. Each caller
     * gets its own future: one that gives up waiting ({@code completeOnTimeout}) must not complete
     * the shared one, which would release every other waiter for that version, and every later
     * one, before the version is applied.
     */
    public CompletableFuture<Void> awaitVersion(long version) {
        if (snapshot.assignment().version() >= version) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = versionWaiters.computeIfAbsent(version, v -> new CompletableFuture<>());
        if (snapshot.assignment().version() >= version) {
            f.complete(null);
        }
        return f.copy();
    }

    public boolean connected() {
        return connected;
    }

    void connected(boolean value) {
        connected = value;
    }
}
