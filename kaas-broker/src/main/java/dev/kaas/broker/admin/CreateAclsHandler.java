package dev.kaas.broker.admin;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.CreateAclsCall;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreateAcls (key 30): ALTER on the cluster and Apache's broker-side checks (AclApis: a CLUSTER
 * resource is named {@code kafka-cluster}, no empty names), then the controller decides with
 * Apache's AclControlManager rules and publishes. The answer waits (bounded) until this broker
 * applied the new ACLs, so they are enforced here right after.
 */
@ApplicationScoped
public class CreateAclsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;

    public CreateAclsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.CREATE_ACLS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        if (!ctx.access().enabled()) {
            return CompletableFuture.failedFuture(new SecurityDisabledException("No Authorizer is configured."));
        }
        List<CreateAclsRequestData.AclCreation> creations = ((CreateAclsRequest) request).aclCreations();
        List<CreateAclsResponseData.AclCreationResult> results = new ArrayList<>();
        List<Integer> forwarded = new ArrayList<>();
        CreateAclsCall.Builder call = CreateAclsCall.newBuilder();
        for (CreateAclsRequestData.AclCreation c : creations) {
            AclBinding b = CreateAclsRequest.aclBinding(c);
            CreateAclsResponseData.AclCreationResult r = new CreateAclsResponseData.AclCreationResult();
            if (b.pattern().resourceType() == ResourceType.CLUSTER && !Access.CLUSTER.equals(b.pattern().name())) {
                r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("The only valid name for the CLUSTER resource is " + Access.CLUSTER);
            } else if (b.pattern().name() == null || b.pattern().name().isEmpty()) {
                r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Invalid empty resource name");
            } else {
                forwarded.add(results.size());
                call.addAcls(DeleteAclsHandler.spec(b.toFilter()));
            }
            results.add(r);
        }
        CreateAclsResponseData out = new CreateAclsResponseData().setResults(results);
        if (forwarded.isEmpty()) {
            return CompletableFuture.completedFuture(out);
        }
        return controller.createAcls(call.build()).thenCompose(reply -> {
            for (int i = 0; i < forwarded.size(); i++) {
                var r = reply.getResults(i);
                if (r.getErrorCode() != 0) {
                    results.get(forwarded.get(i)).setErrorCode((short) r.getErrorCode()).setErrorMessage(r.getErrorMessage());
                }
            }
            return view.awaitVersion(reply.getAssignmentVersion()).thenApply(v -> true)
                    .completeOnTimeout(false, AlterClientQuotasHandler.APPLY_WAIT_MS, TimeUnit.MILLISECONDS).thenApply(v -> (ApiMessage) out);
        });
    }
}
