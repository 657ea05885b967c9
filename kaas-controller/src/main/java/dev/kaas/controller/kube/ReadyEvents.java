package dev.kaas.controller.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import org.jboss.logging.Logger;

/**
 * A Kubernetes Event on a {@code KafkaTopic} or {@code KafkaUser} when it is refused and when it
 * is accepted again, so {@code kubectl describe} and {@code kubectl get events} show why:
 * {@code Warning} with the {@code Ready} condition's reason and message, {@code Normal} on
 * recovery. Only changes bring one, so a resource refused for the same reason pass after pass has
 * one Event, not one a pass.
 *
 * <p>Best effort: an Event that cannot be written (RBAC, a quota on Events, the API server slow)
 * is logged and dropped; the status is what counts. Written only under the lease, as statuses are.
 */
final class ReadyEvents {
    private static final Logger LOG = Logger.getLogger(ReadyEvents.class);
    static final String COMPONENT = "kaas-controller";
    /** The API server refuses longer messages (1 KiB in events.k8s.io/v1); a condition message is rarely near it. */
    static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;
    private final String namespace;
    private final KafkaTopicStore.Fence fence;
    private final BoundedCalls calls;
    private final long timeoutMs;

    ReadyEvents(KubernetesClient client, String namespace, KafkaTopicStore.Fence fence, BoundedCalls calls, long timeoutMs) {
        this.client = client;
        this.namespace = namespace;
        this.fence = fence;
        this.calls = calls;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Whether going from {@code before} to {@code after} is a change an Event reports: a refusal
     * (new, or for another reason) or a recovery from one. A resource accepted at its first pass
     * gets none: a bulk of new resources must not double the pass's API calls.
     */
    static boolean changed(Condition before, Condition after) {
        if (after == null) {
            return false;
        }
        boolean wasRefused = before != null && !"True".equals(before.getStatus());
        if ("True".equals(after.getStatus())) {
            return wasRefused;
        }
        return before == null || !Objects.equals(before.getStatus(), after.getStatus()) || !Objects.equals(before.getReason(), after.getReason());
    }

    /** The Event for {@code resource}'s new Ready condition {@code after}, if it changed from {@code before}. */
    void onReadyChange(long leaseEpoch, HasMetadata resource, Condition before, Condition after) throws IOException {
        if (!changed(before, after)) {
            return;
        }
        Event event = event(resource, after, Instant.now());
        String name = resource.getKind() + " " + resource.getMetadata().getName();
        fence.check(leaseEpoch, "an Event on " + name);
        try {
            calls.within(timeoutMs, "writing an Event on " + name, () -> client.v1().events().inNamespace(namespace).resource(event).create());
        } catch (IOException | KubernetesClientException e) {
            LOG.debugf("no Event written on %s/%s: %s", namespace, name, e.getMessage());
        }
    }

    static Event event(HasMetadata resource, Condition ready, Instant now) {
        String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
        boolean isReady = "True".equals(ready.getStatus());
        String message = ready.getMessage() == null || ready.getMessage().isEmpty()
                ? (isReady ? "Ready" : "Not ready") : ready.getMessage();
        if (message.length() > MAX_MESSAGE) {
            message = message.substring(0, MAX_MESSAGE - 1) + "…";
        }
        return new EventBuilder()
                .withNewMetadata().withGenerateName(resource.getMetadata().getName() + ".").withNamespace(resource.getMetadata().getNamespace())
                .endMetadata()
                .withInvolvedObject(new ObjectReferenceBuilder().withApiVersion(resource.getApiVersion()).withKind(resource.getKind())
                        .withName(resource.getMetadata().getName()).withNamespace(resource.getMetadata().getNamespace())
                        .withUid(resource.getMetadata().getUid()).withResourceVersion(resource.getMetadata().getResourceVersion()).build())
                .withType(isReady ? "Normal" : "Warning")
                .withReason(ready.getReason() == null || ready.getReason().isEmpty() ? (isReady ? "Ready" : "NotReady") : ready.getReason())
                .withMessage(message)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .withFirstTimestamp(time).withLastTimestamp(time).withCount(1)
                .build();
    }
}
