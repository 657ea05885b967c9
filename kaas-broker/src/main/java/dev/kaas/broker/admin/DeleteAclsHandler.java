package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.AclSpec;
import dev.kaas.proto.DeleteAclsCall;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DeleteAcls (key 31): ALTER on the cluster, then the controller deletes what each filter
 * matches (Apache's AclControlManager) and publishes; the answer lists the ACLs each filter
 * deleted and waits (bounded) until this broker applied the change.
 */
@ApplicationScoped
public class DeleteAclsHandler implements ApiHandler {
    private final ControllerAdmin controller;
    private final ClusterView view;

    public DeleteAclsHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DELETE_ACLS;
    }

    static AclSpec spec(AclBindingFilter f) {
        AclSpec.Builder s = AclSpec.newBuilder().setResourceType(f.patternFilter().resourceType().code())
                .setPatternType(f.patternFilter().patternType().code()).setOperation(f.entryFilter().operation().code())
                .setPermission(f.entryFilter().permissionType().code());
        if (f.patternFilter().name() != null) {
            s.setResourceName(f.patternFilter().name());
        }
        if (f.entryFilter().principal() != null) {
            s.setPrincipal(f.entryFilter().principal());
        }
        if (f.entryFilter().host() != null) {
            s.setHost(f.entryFilter().host());
        }
        return s.build();
    }

    static AclBinding binding(AclSpec s) {
        return new AclBinding(new ResourcePattern(ResourceType.fromCode((byte) s.getResourceType()), s.getResourceName(),
                PatternType.fromCode((byte) s.getPatternType())),
                new AccessControlEntry(s.getPrincipal(), s.getHost(), AclOperation.fromCode((byte) s.getOperation()),
                        AclPermissionType.fromCode((byte) s.getPermission())));
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        if (!ctx.access().enabled()) {
            return CompletableFuture.failedFuture(new SecurityDisabledException("No Authorizer is configured."));
        }
        DeleteAclsRequest req = (DeleteAclsRequest) request;
        DeleteAclsCall.Builder call = DeleteAclsCall.newBuilder();
        req.filters().forEach(f -> call.addFilters(spec(f)));
        return controller.deleteAcls(call.build()).thenCompose(reply -> {
            DeleteAclsResponseData out = new DeleteAclsResponseData();
            reply.getResultsList().forEach(r -> {
                DeleteAclsResponseData.DeleteAclsFilterResult fr = new DeleteAclsResponseData.DeleteAclsFilterResult()
                        .setErrorCode((short) r.getErrorCode()).setErrorMessage(r.getErrorMessage().isEmpty() ? null : r.getErrorMessage());
                r.getMatchingList().forEach(m -> fr.matchingAcls().add(DeleteAclsResponse.matchingAcl(binding(m), ApiError.NONE)));
                out.filterResults().add(fr);
            });
            return view.awaitVersion(reply.getAssignmentVersion()).thenApply(v -> true)
                    .completeOnTimeout(false, AlterClientQuotasHandler.APPLY_WAIT_MS, TimeUnit.MILLISECONDS).thenApply(v -> (ApiMessage) out);
        });
    }
}
