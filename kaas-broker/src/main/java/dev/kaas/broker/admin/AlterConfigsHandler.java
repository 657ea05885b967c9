package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;

/**
 * Legacy AlterConfigs (key 33, v0–2): a resource's entries replace all its overrides (what
 * {@code kafka-configs.sh} of old clients and {@code Admin.alterConfigs} send); see
 * {@link ConfigAlterations}.
 */
@ApplicationScoped
public class AlterConfigsHandler implements ApiHandler {
    private final ConfigAlterations alterations;

    public AlterConfigsHandler(ControllerAdmin controller, ClusterView view, dev.kaas.broker.data.Partitions partitions,
                                      BrokerConfig config) {
        this.alterations = new ConfigAlterations(controller, view, partitions, config.broker().id());
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ALTER_CONFIGS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        AlterConfigsRequestData data = ((AlterConfigsRequest) request).data();
        List<ConfigAlterations.Resource> resources = new ArrayList<>();
        for (var r : data.resources()) {
            List<ConfigAlterations.Op> ops = new ArrayList<>();
            r.configs().forEach(c -> ops.add(new ConfigAlterations.Op(c.name(), OpType.SET.id(), c.value())));
            resources.add(new ConfigAlterations.Resource(r.resourceType(), r.resourceName(), ops));
        }
        return alterations.alter(resources, data.validateOnly(), true, ctx.access()).thenApply(results -> {
            AlterConfigsResponseData resp = new AlterConfigsResponseData().setThrottleTimeMs(0);
            for (int i = 0; i < resources.size(); i++) {
                ConfigAlterations.Result res = results.get(i);
                resp.responses().add(new AlterConfigsResourceResponse().setResourceType(resources.get(i).type())
                        .setResourceName(resources.get(i).name()).setErrorCode(res.error().code()).setErrorMessage(res.message()));
            }
            return resp;
        });
    }
}
