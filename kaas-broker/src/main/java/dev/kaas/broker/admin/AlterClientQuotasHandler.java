package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.AlterClientQuotasCall;
import dev.kaas.proto.QuotaAlteration;
import dev.kaas.proto.QuotaEntityPart;
import dev.kaas.proto.QuotaOp;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterClientQuotasResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;

/**
 * AlterClientQuotas (key 49), forwarded to the controller as Apache's broker forwards it
 * ({@code kafka-configs.sh --alter --add-config producer_byte_rate=… --entity-type users}). The
 * controller decides with Apache's rules and publishes the quotas; the answer waits (bounded)
 * until this broker applied them, so they are enforced here right after.
 */
@ApplicationScoped
public class AlterClientQuotasHandler implements ApiHandler {
    static final long APPLY_WAIT_MS = 5_000;

    private final ControllerAdmin controller;
    private final ClusterView view;

    public AlterClientQuotasHandler(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ALTER_CLIENT_QUOTAS;
    }

    static AlterClientQuotasCall call(AlterClientQuotasRequestData data) {
        AlterClientQuotasCall.Builder call = AlterClientQuotasCall.newBuilder().setValidateOnly(data.validateOnly());
        for (AlterClientQuotasRequestData.EntryData entry : data.entries()) {
            QuotaAlteration.Builder a = QuotaAlteration.newBuilder();
            entry.entity().forEach(e -> a.addEntity(QuotaEntityPart.newBuilder().setType(e.entityType())
                    .setName(e.entityName() == null ? "" : e.entityName()).setDefaultEntity(e.entityName() == null)));
            entry.ops().forEach(op -> a.addOps(QuotaOp.newBuilder().setKey(op.key()).setValue(op.value()).setRemove(op.remove())));
            call.addAlterations(a);
        }
        return call.build();
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER_CONFIGS);
        AlterClientQuotasRequestData data = ((AlterClientQuotasRequest) request).data();
        return controller.alterClientQuotas(call(data)).thenCompose(reply -> {
            AlterClientQuotasResponseData resp = new AlterClientQuotasResponseData();
            reply.getResultsList().forEach(r -> {
                AlterClientQuotasResponseData.EntryData e = new AlterClientQuotasResponseData.EntryData()
                        .setErrorCode((short) r.getErrorCode()).setErrorMessage(r.getErrorMessage().isEmpty() ? null : r.getErrorMessage());
                r.getEntityList().forEach(p -> e.entity().add(new AlterClientQuotasResponseData.EntityData()
                        .setEntityType(p.getType()).setEntityName(p.getDefaultEntity() ? null : p.getName())));
                resp.entries().add(e);
            });
            return view.awaitVersion(reply.getAssignmentVersion()).thenApply(v -> true)
                    .completeOnTimeout(false, APPLY_WAIT_MS, TimeUnit.MILLISECONDS).thenApply(v -> (ApiMessage) resp);
        });
    }
}
