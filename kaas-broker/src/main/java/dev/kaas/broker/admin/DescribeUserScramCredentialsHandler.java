package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.ScramUser;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;

/**
 * DescribeUserScramCredentials (key 50) from the credentials this broker applied, as Apache's
 * broker answers from its metadata image (ScramImage.describe): every user when none is named,
 * a user named twice DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND, each with
 * its mechanisms and iterations (never a key or a salt).
 */
@ApplicationScoped
public class DescribeUserScramCredentialsHandler implements ApiHandler {
    static final String DOES_NOT_EXIST = "Attempt to describe a user credential that does not exist: ";
    static final String DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: ";

    private final ClusterView view;

    public DescribeUserScramCredentialsHandler(ClusterView view) {
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.DESCRIBE);
        return CompletableFuture.completedFuture(describe(((DescribeUserScramCredentialsRequest) request).data(),
                view.assignment().scramUsers()));
    }

    static DescribeUserScramCredentialsResponseData describe(DescribeUserScramCredentialsRequestData request,
                                                            Map<String, List<ScramUser>> users) {
        Map<String, Boolean> named = new LinkedHashMap<>();
        if (request.users() == null || request.users().isEmpty()) {
            users.keySet().forEach(u -> named.put(u, false));
        } else {
            request.users().forEach(u -> named.put(u.name(), named.containsKey(u.name())));
        }
        DescribeUserScramCredentialsResponseData out = new DescribeUserScramCredentialsResponseData();
        named.forEach((user, twice) -> {
            DescribeUserScramCredentialsResult r = new DescribeUserScramCredentialsResult().setUser(user);
            List<ScramUser> credentials = users.getOrDefault(user, List.of());
            if (twice) {
                r.setErrorCode(Errors.DUPLICATE_RESOURCE.code()).setErrorMessage(DUPLICATE + user);
            } else if (credentials.isEmpty()) {
                r.setErrorCode(Errors.RESOURCE_NOT_FOUND.code()).setErrorMessage(DOES_NOT_EXIST + user);
            } else {
                credentials.forEach(c -> r.credentialInfos().add(new CredentialInfo()
                        .setMechanism(ScramMechanism.fromMechanismName(c.mechanism()).type()).setIterations(c.iterations())));
            }
            out.results().add(r);
        });
        return out;
    }
}
