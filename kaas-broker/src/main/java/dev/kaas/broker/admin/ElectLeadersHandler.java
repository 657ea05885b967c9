package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData.PartitionResult;
import org.apache.kafka.common.message.ElectLeadersResponseData.ReplicaElectionResult;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;

/**
 * ElectLeaders (key 43). kaas partitions have one replica, the leader the controller placed, so
 * there is never another to elect: a partition with a leader is ELECTION_NOT_NEEDED, as Apache
 * 3.7's controller answers when the preferred replica already leads (or, for an unclean
 * election, when the partition has a leader); one between leaders (its broker just left, the
 * controller is placing it) is PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE.
 * As Apache's {@code ReplicationControlManager.electLeaders}: with no partitions named, every
 * partition is considered and those that need no election are left out of the answer.
 */
@ApplicationScoped
public class ElectLeadersHandler implements ApiHandler {
    private final ClusterView view;

    public ElectLeadersHandler(ClusterView view) {
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ELECT_LEADERS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        ElectLeadersRequestData data = ((ElectLeadersRequest) request).data();
        ElectionType type;
        try {
            type = ctx.apiVersion() == 0 ? ElectionType.PREFERRED : ElectionType.valueOf(data.electionType());
        } catch (IllegalArgumentException unknown) {
            return CompletableFuture.completedFuture(request.getErrorResponse(0,
                    new InvalidRequestException("Unknown election type " + data.electionType())).data());
        }
        ElectLeadersResponseData resp = new ElectLeadersResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code());
        if (data.topicPartitions() == null) {
            view.assignment().topics().stream().sorted(Comparator.comparing(t -> t.topic().name())).forEach(t -> {
                ReplicaElectionResult tr = new ReplicaElectionResult().setTopic(t.topic().name());
                for (PartitionAssignment p : t.partitions()) {
                    PartitionResult r = elect(t, p.partition(), type);
                    if (r.errorCode() != Errors.ELECTION_NOT_NEEDED.code()) {
                        tr.partitionResult().add(r);
                    }
                }
                if (!tr.partitionResult().isEmpty()) {
                    resp.replicaElectionResults().add(tr);
                }
            });
        } else {
            for (ElectLeadersRequestData.TopicPartitions t : data.topicPartitions()) {
                ReplicaElectionResult tr = new ReplicaElectionResult().setTopic(t.topic());
                TopicAssignment topic = view.topic(t.topic());
                for (int p : t.partitions()) {
                    tr.partitionResult().add(topic == null
                            ? result(p, Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as " + t.topic())
                            : elect(topic, p, type));
                }
                resp.replicaElectionResults().add(tr);
            }
        }
        return CompletableFuture.completedFuture(resp);
    }

    private static PartitionResult elect(TopicAssignment topic, int partition, ElectionType type) {
        if (partition < 0 || partition >= topic.partitions().size()) {
            return result(partition, Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as " + topic.topic().name() + "-" + partition);
        }
        if (topic.partitions().get(partition).leader() >= 0) {
            return result(partition, Errors.ELECTION_NOT_NEEDED, Errors.ELECTION_NOT_NEEDED.message());
        }
        Errors none = type == ElectionType.PREFERRED ? Errors.PREFERRED_LEADER_NOT_AVAILABLE : Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE;
        return result(partition, none, none.message());
    }

    private static PartitionResult result(int partition, Errors error, String message) {
        return new PartitionResult().setPartitionId(partition).setErrorCode(error.code()).setErrorMessage(message);
    }
}
