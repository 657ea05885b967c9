package dev.kaas.broker.health;

import dev.kaas.broker.cluster.AssignmentReceiver;
import dev.kaas.broker.cluster.ClusterView;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Honest readiness: connected to the controller and an assignment applied. A partition that
 * cannot open is reported here by name and is unavailable on its own (NOT_LEADER_OR_FOLLOWER for
 * it alone); it never takes the whole broker out of service.
 */
@Readiness
@ApplicationScoped
public class BrokerReadiness implements HealthCheck {
    @Inject
    ClusterView view;

    @Inject
    AssignmentReceiver applier;

    @Override
    public HealthCheckResponse call() {
        boolean ready = view.connected() && applier.appliedVersion() >= 0;
        var unopened = applier.unopened();
        var response = HealthCheckResponse.named("broker")
                .withData("controllerConnected", view.connected())
                .withData("appliedAssignmentVersion", applier.appliedVersion())
                .withData("allAssignedPartitionsOpen", unopened.isEmpty())
                .withData("partitionsNotOpen", unopened.size());
        unopened.entrySet().stream().limit(20).forEach(e -> response.withData("notOpen." + e.getKey(), e.getValue()));
        return response.status(ready).build();
    }
}
