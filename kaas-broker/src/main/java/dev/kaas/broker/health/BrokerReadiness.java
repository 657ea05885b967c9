package dev.kaas.broker.health;

import dev.kaas.broker.cluster.AssignmentReceiver;
import dev.kaas.broker.cluster.ClusterView;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Honest readiness: connected to the controller, an assignment applied, and every partition it
 * gives this broker open.
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
        boolean ready = view.connected() && applier.appliedVersion() >= 0 && applier.allAssignedOpen();
        return HealthCheckResponse.named("broker")
                .withData("controllerConnected", view.connected())
                .withData("appliedAssignmentVersion", applier.appliedVersion())
                .withData("allAssignedPartitionsOpen", applier.allAssignedOpen())
                .status(ready).build();
    }
}
