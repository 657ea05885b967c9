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
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;

/** IncrementalAlterConfigs (key 44, v0–1): {@code kafka-configs.sh --alter}; see {@link ConfigAlterations}. */
@ApplicationScoped
public class IncrementalAlterConfigsHandler implements ApiHandler {
    private final ConfigAlterations alterations;

    public IncrementalAlterConfigsHandler(ControllerAdmin controller, ClusterView view, dev.kaas.broker.data.Partitions partitions,
                                      BrokerConfig config) {
        this.alterations = new ConfigAlterations(controller, view, partitions, config.broker().id());
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.INCREMENTAL_ALTER_CONFIGS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        IncrementalAlterConfigsRequestData data = ((IncrementalAlterConfigsRequest) request).data();
        List<ConfigAlterations.Resource> resources = new ArrayList<>();
        for (var r : data.resources()) {
            List<ConfigAlterations.Op> ops = new ArrayList<>();
            r.configs().forEach(c -> ops.add(new ConfigAlterations.Op(c.name(), c.configOperation(), c.value())));
            resources.add(new ConfigAlterations.Resource(r.resourceType(), r.resourceName(), ops));
        }
        return alterations.alter(resources, data.validateOnly(), false, ctx.access()).thenApply(results -> {
            IncrementalAlterConfigsResponseData resp = new IncrementalAlterConfigsResponseData().setThrottleTimeMs(0);
            for (int i = 0; i < resources.size(); i++) {
                ConfigAlterations.Result res = results.get(i);
                resp.responses().add(new AlterConfigsResourceResponse().setResourceType(resources.get(i).type())
                        .setResourceName(resources.get(i).name()).setErrorCode(res.error().code()).setErrorMessage(res.message()));
            }
            return resp;
        });
    }
}
