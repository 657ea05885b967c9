package dev.kaas.controller.admin;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.kaas.common.model.EndpointInfo;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The JSON shapes of the REST admin API (src/docs/rest-api.md). */
final class ApiViews {
    private ApiViews() {
    }

    @Schema(description = "The controller lease as this controller last read it.")
    record Lease(String holder, long epoch, @Schema(description = "Milliseconds until the holder must have renewed it; negative: overdue") long expiresInMs) {
    }

    @Schema(description = "The controller that answered.")
    record Controller(String holder, boolean leader, @Schema(description = "The lease epoch it writes under; -1 when it does not lead") long epoch) {
    }

    @Schema(description = "How much of the cluster's work a broker does: what it writes in the current assignment.")
    record Owned(int partitions, int groupSlots, int txnSlots) {
    }

    @Schema(description = "A broker as the leading controller sees it.")
    record Broker(int id, List<EndpointInfo> endpoints,
                  @Schema(description = "Registered with a live stream to this controller") boolean alive,
                  @JsonInclude(JsonInclude.Include.NON_NULL) @Schema(description = "Milliseconds since its last status report") Long lastSeenMsAgo,
                  @Schema(description = "The newest assignment version it reported applied; -1: none") long appliedVersion,
                  @Schema(description = "It has applied the current assignment") boolean caughtUp,
                  @Schema(description = "Drained for maintenance: it is handing off what it owns and takes nothing new") boolean drained,
                  Owned owns,
                  @Schema(description = "Partitions and slots it was asked to hand off and has not reported closed yet") int handingOff,
                  @Schema(description = "It owns nothing and closes nothing: a drained broker may be stopped now") boolean idle) {
    }

    @Schema(description = "The cluster: who leads it, its brokers, the assignment they apply.")
    record Cluster(@JsonInclude(JsonInclude.Include.NON_NULL) String clusterId, Controller controller,
                   @JsonInclude(JsonInclude.Include.NON_NULL) Lease lease,
                   @Schema(description = "The published assignment's version; -1 before the first") long assignmentVersion,
                   @Schema(description = "Partitions and slots being handed from one broker to another") int handoffsInFlight,
                   List<Broker> brokers) {
    }

    @Schema(description = "A topic in a list.")
    record TopicSummary(String name, String topicId, int partitions, Map<String, String> configs) {
    }

    @Schema(description = "One partition: who writes it, and its offsets and size as its leader last reported them (null until it has).")
    record Partition(int partition, @Schema(description = "The broker writing it; -1: none at the moment") int leader, int leaderEpoch,
                     Long logStartOffset,
                     @Schema(description = "The high watermark: the end of what is acknowledged and readable") Long logEndOffset,
                     Long sizeBytes) {
    }

    @Schema(description = "A topic with its partitions.")
    record Topic(String name, String topicId, Map<String, String> configs, List<Partition> partitions) {
    }

    @Schema(description = "A topic to create: the same rules and errors as the Kafka API's CreateTopics.")
    record NewTopic(@Schema(required = true) String name,
                    @Schema(description = "-1 or absent: the cluster's num.partitions") Integer partitions,
                    @Schema(description = "-1, absent or any value of 1 or more: kaas keeps one copy, on the shared volume") Integer replicationFactor,
                    @Schema(description = "Topic config overrides under Apache's names") Map<String, String> configs,
                    @Schema(description = "Only check that it could be created") Boolean validateOnly) {
    }

    @Schema(description = "A consumer group in a list, from its coordinator's last report.")
    record GroupSummary(String groupId, String state, String protocolType, int members, int coordinator,
                        @JsonInclude(JsonInclude.Include.NON_NULL) @Schema(description = "Summed over its partitions with a known lag") Long totalLag) {
    }

    @Schema(description = "A group's committed offset on one partition and its lag (the partition's high watermark minus it, never below 0; null while unknown).")
    record GroupOffset(String topic, int partition, long committedOffset, Long logEndOffset, Long lag) {
    }

    @Schema(description = "A member of a group, as DescribeGroups describes it.")
    record GroupMember(String memberId,
                       @JsonInclude(JsonInclude.Include.NON_NULL) @Schema(description = "Absent for a dynamic member (KIP-345)") String groupInstanceId,
                       String clientId, String clientHost,
                       @Schema(description = "Topic to assigned partitions; empty unless the group is a Stable consumer group whose assignment decodes") Map<String, List<Integer>> assignment) {
    }

    @Schema(description = "A consumer group with its members, committed offsets and lag.")
    record Group(String groupId, String state, String protocolType,
                 @Schema(description = "How many members it has") int members, int coordinator, Long totalLag, List<GroupOffset> offsets,
                 @Schema(description = "Its members, in member id order (fewer than members when the coordinator's report was cut: kaas.metrics.max-series or its size bound)") List<GroupMember> memberList) {
    }

    @Schema(description = "Where a partition is written, under which epoch; target/leaving while a reassignment moves it.")
    record AssignedPartition(int partition, int leader, int leaderEpoch,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Integer target,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Integer leaving) {
    }

    record AssignedTopic(String name, String topicId, List<AssignedPartition> partitions) {
    }

    record AssignedSlot(int slot, int broker, int epoch) {
    }

    @Schema(description = "The published assignment (placements only: credentials, ACLs, quotas and broker configs are left out).")
    record Assignment(long version, long controllerEpoch, String clusterId, List<Integer> brokers, List<AssignedTopic> topics,
                      List<AssignedSlot> groupSlots, List<AssignedSlot> txnSlots, List<Integer> drained) {
    }
}
