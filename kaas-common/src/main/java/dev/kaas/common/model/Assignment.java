package dev.kaas.common.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The whole placement the controller publishes: written to {@code __cluster/assignment.json}
 * (temp + fsync + rename) and pushed down every broker stream, byte for byte the same.
 * {@code version} grows by one per publication; {@code controllerEpoch} is the lease's
 * transitions counter of the controller that wrote it, so a broker ignores anything from a
 * deposed controller.
 *
 * @param brokerConfigs the dynamic broker configuration (IncrementalAlterConfigs BROKER), by
 *                      resource name: {@code ""} the cluster-wide defaults, a broker id that
 *                      broker's own; Apache broker names and values as set
 * @param scramUsers    the SCRAM credentials of each user (AlterUserScramCredentials), by user
 *                      name, one per mechanism
 * @param clientQuotas  the client quotas (AlterClientQuotas), one per entity, in entity order
 * @param acls          the ACLs (CreateAcls, DeleteAcls), each once, in {@link AclEntry} order
 * @param declaredUsers the user name applied for each user declaration (Kubernetes: KafkaUser
 *                      uid), published with what it granted: the ledger of what to remove when a
 *                      declaration goes or names another user, whatever happened to its status
 * @param drained       brokers an operator drained (REST {@code POST /api/v1/brokers/{id}/drain}), each
 *                      with the incarnation that was running then: the balancer hands off everything
 *                      they own and places nothing on them, until that broker id registers as
 *                      another process (restarted after its maintenance) or the drain is cancelled
 */
public record Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                         List<TopicAssignment> topics, List<SlotAssignment> groupSlots,
                         List<SlotAssignment> txnSlots,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Map<String, String>> brokerConfigs,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, List<ScramUser>> scramUsers,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ClientQuota> clientQuotas,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) List<AclEntry> acls,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> declaredUsers,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<Integer, String> drained) {
    public static final int SLOTS = 50;
    /** The resource name of the cluster-wide dynamic defaults. */
    public static final String CLUSTER_DEFAULT = "";

    public Assignment {
        brokers = List.copyOf(brokers);
        topics = List.copyOf(topics);
        groupSlots = List.copyOf(groupSlots);
        txnSlots = List.copyOf(txnSlots);
        // Sorted, so that the same configuration is always the same bytes on the volume and the streams.
        Map<String, Map<String, String>> sorted = new TreeMap<>();
        if (brokerConfigs != null) {
            brokerConfigs.forEach((resource, configs) -> {
                if (configs != null && !configs.isEmpty()) {
                    sorted.put(resource, java.util.Collections.unmodifiableMap(new TreeMap<>(configs)));
                }
            });
        }
        brokerConfigs = java.util.Collections.unmodifiableMap(sorted);
        Map<String, List<ScramUser>> users = new TreeMap<>();
        if (scramUsers != null) {
            scramUsers.forEach((user, credentials) -> {
                if (credentials != null && !credentials.isEmpty()) {
                    users.put(user, credentials.stream().sorted(java.util.Comparator.comparing(ScramUser::mechanism)).toList());
                }
            });
        }
        scramUsers = java.util.Collections.unmodifiableMap(users);
        clientQuotas = clientQuotas == null ? List.of() : clientQuotas.stream().filter(q -> !q.values().isEmpty())
                .sorted(java.util.Comparator.comparing(q -> q.entity().toString())).toList();
        acls = acls == null ? List.of() : List.copyOf(new java.util.TreeSet<>(acls));
        declaredUsers = declaredUsers == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(declaredUsers));
        drained = drained == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(drained));
    }

    /** Nothing drained. */
    public Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                      List<TopicAssignment> topics, List<SlotAssignment> groupSlots, List<SlotAssignment> txnSlots,
                      Map<String, Map<String, String>> brokerConfigs, Map<String, List<ScramUser>> scramUsers,
                      List<ClientQuota> clientQuotas, List<AclEntry> acls, Map<String, String> declaredUsers) {
        this(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, scramUsers, clientQuotas, acls,
                declaredUsers, Map.of());
    }

    /** Without user declarations: standalone, and every test that has none. */
    public Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                      List<TopicAssignment> topics, List<SlotAssignment> groupSlots, List<SlotAssignment> txnSlots,
                      Map<String, Map<String, String>> brokerConfigs, Map<String, List<ScramUser>> scramUsers,
                      List<ClientQuota> clientQuotas, List<AclEntry> acls) {
        this(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, scramUsers, clientQuotas, acls,
                Map.of());
    }

    /** This assignment with other users, everything else as it is. */
    public Assignment withUsers(Map<String, List<ScramUser>> nextScramUsers, List<ClientQuota> nextClientQuotas, List<AclEntry> nextAcls,
                                Map<String, String> nextDeclaredUsers) {
        return new Assignment(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, nextScramUsers,
                nextClientQuotas, nextAcls, nextDeclaredUsers, drained);
    }

    /** This assignment with other ACLs, everything else as it is. */
    public Assignment withAcls(List<AclEntry> next) {
        return new Assignment(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, scramUsers,
                clientQuotas, next, declaredUsers, drained);
    }

    /** This assignment with other drained brokers, everything else as it is. */
    public Assignment withDrained(Map<Integer, String> next) {
        return new Assignment(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, scramUsers,
                clientQuotas, acls, declaredUsers, next);
    }

    public Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                      List<TopicAssignment> topics, List<SlotAssignment> groupSlots, List<SlotAssignment> txnSlots,
                      Map<String, Map<String, String>> brokerConfigs, Map<String, List<ScramUser>> scramUsers) {
        this(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, scramUsers, List.of(), List.of());
    }

    public Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                      List<TopicAssignment> topics, List<SlotAssignment> groupSlots, List<SlotAssignment> txnSlots,
                      Map<String, Map<String, String>> brokerConfigs) {
        this(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, brokerConfigs, Map.of());
    }

    public Assignment(long version, long controllerEpoch, String clusterId, List<BrokerInfo> brokers,
                      List<TopicAssignment> topics, List<SlotAssignment> groupSlots, List<SlotAssignment> txnSlots) {
        this(version, controllerEpoch, clusterId, brokers, topics, groupSlots, txnSlots, Map.of());
    }

    /** The dynamic configuration of one resource ({@link #CLUSTER_DEFAULT} or a broker id), empty if none. */
    public Map<String, String> brokerConfig(String resource) {
        return brokerConfigs.getOrDefault(resource, Map.of());
    }

    public static Assignment empty(String clusterId) {
        return new Assignment(0, 0, clusterId, List.of(), List.of(), List.of(), List.of());
    }

    public Optional<TopicAssignment> topicByName(String name) {
        return topics.stream().filter(t -> t.topic().name().equals(name)).findFirst();
    }

    public Optional<TopicAssignment> topicById(String topicId) {
        return topics.stream().filter(t -> t.topic().topicId().equals(topicId)).findFirst();
    }

    public Optional<BrokerInfo> broker(int id) {
        return brokers.stream().filter(b -> b.id() == id).findFirst();
    }
}
