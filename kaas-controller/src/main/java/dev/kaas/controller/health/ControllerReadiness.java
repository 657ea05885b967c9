package dev.kaas.controller.health;

import dev.kaas.controller.cluster.ControllerRuntime;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready only while holding the lease: a standby is not Ready, so the Service routes brokers to the leader. */
@Readiness
@ApplicationScoped
public class ControllerReadiness implements HealthCheck {
    @Inject
    ControllerRuntime runtime;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("controller-lease").status(runtime.isLeader()).build();
    }
}
