package dev.kaas.broker.admin;

import dev.kaas.broker.auth.AccessControl;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.LinkedHashSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;

/**
 * DescribeAcls (key 29) from the ACLs this broker applied, as Apache's broker answers from its
 * authorizer (AclApis): DESCRIBE on the cluster, SECURITY_DISABLED without an authorizer.
 */
@ApplicationScoped
public class DescribeAclsHandler implements ApiHandler {
    private final AccessControl acls;

    public DescribeAclsHandler(AccessControl acls) {
        this.acls = acls;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_ACLS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.DESCRIBE);
        DescribeAclsResponseData out = new DescribeAclsResponseData();
        if (!ctx.access().enabled()) {
            return CompletableFuture.completedFuture(out.setErrorCode(Errors.SECURITY_DISABLED.code())
                    .setErrorMessage("No Authorizer is configured on the broker"));
        }
        // A set, as Apache's: the response groups the bindings by resource.
        return CompletableFuture.completedFuture(out.setResources(DescribeAclsResponse.aclsResources(
                new LinkedHashSet<>(acls.acls(((DescribeAclsRequest) request).filter())))));
    }
}
