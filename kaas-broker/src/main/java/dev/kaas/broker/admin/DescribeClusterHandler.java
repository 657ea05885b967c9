package dev.kaas.broker.admin;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.Assignment;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.admin.EndpointType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData.DescribeClusterBroker;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeCluster, as an Apache 3.7 broker answers it ({@code KafkaApis.handleDescribeCluster},
 * {@code AuthHelper.computeDescribeClusterResponse}): the brokers of the applied assignment with
 * the endpoint of the listener the request came in on, the cluster id, and the controller id kaas
 * reports in Metadata too ({@link MetadataHandler#controllerId}). A broker describes brokers only:
 * a v1 request for controllers (endpoint type 2) gets MISMATCHED_ENDPOINT_TYPE, an endpoint type
 * Apache does not know UNSUPPORTED_ENDPOINT_TYPE (v0 cannot carry one; Apache would answer
 * INVALID_REQUEST there).
 *
 * <p>No authorization, as Apache's. Cluster authorized operations: Apache's schema default
 * ({@code Integer.MIN_VALUE}) unless requested; when requested, those of the cluster's operations
 * the principal may do if it may DESCRIBE the cluster, else none (every one without an authorizer).
 */
@ApplicationScoped
public class DescribeClusterHandler implements ApiHandler {
    private final ClusterView view;

    public DescribeClusterHandler(ClusterView view) {
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_CLUSTER;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DescribeClusterRequestData data = ((DescribeClusterRequest) request).data();
        short version = ctx.apiVersion();
        EndpointType asked = EndpointType.fromId(data.endpointType());
        if (asked == EndpointType.UNKNOWN) {
            return CompletableFuture.completedFuture(new DescribeClusterResponseData()
                    .setErrorCode((version == 0 ? Errors.INVALID_REQUEST : Errors.UNSUPPORTED_ENDPOINT_TYPE).code())
                    .setErrorMessage("Unsupported endpoint type " + data.endpointType()));
        }
        if (asked != EndpointType.BROKER) {
            return CompletableFuture.completedFuture(new DescribeClusterResponseData()
                    .setErrorCode((version == 0 ? Errors.INVALID_REQUEST : Errors.MISMATCHED_ENDPOINT_TYPE).code())
                    .setErrorMessage("The request was sent to an endpoint of type " + EndpointType.BROKER
                            + ", but we wanted an endpoint of type " + asked));
        }
        Assignment a = view.assignment();
        List<Node> nodes = ClusterView.nodes(a, ctx.listenerName());
        DescribeClusterResponseData resp = new DescribeClusterResponseData()
                .setThrottleTimeMs(0)
                // Not nullable here (Metadata's is): before the first assignment the id is not known yet.
                .setClusterId(a.clusterId() == null ? "" : a.clusterId())
                .setControllerId(MetadataHandler.controllerId(nodes))
                .setEndpointType(EndpointType.BROKER.id());
        for (Node n : nodes) {
            resp.brokers().add(new DescribeClusterBroker().setBrokerId(n.id()).setHost(n.host()).setPort(n.port()).setRack(n.rack()));
        }
        if (data.includeClusterAuthorizedOperations()) {
            resp.setClusterAuthorizedOperations(ctx.access().allowedOnCluster(AclOperation.DESCRIBE)
                    ? ctx.access().authorizedOperations(ResourceType.CLUSTER, Access.CLUSTER) : 0);
        }
        return CompletableFuture.completedFuture(resp);
    }
}
