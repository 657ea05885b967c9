package dev.kaas.controller.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * A Kubernetes Event on a {@code KafkaTopic} or {@code KafkaUser} when it is refused and when it
 * is accepted again, so {@code kubectl describe} and {@code kubectl get events} show why:
 * {@code Warning} with the {@code Ready} condition's reason and message, {@code Normal} on
 * recovery. Only changes bring one, so a resource refused for the same reason pass after pass has
 * one Event, not one a pass.
 *
 * <p>Best effort, and never on the controller loop's time: Events are created by a thread of
 * their own from a short queue, dropped when it is full, so a slow or refusing Events endpoint
 * (RBAC, a quota, a separate etcd) neither holds up a pass nor takes the bounded calls the lease
 * renewal needs. Each Event follows the status write it reports, which was checked against the
 * lease; it carries nothing a successor could be misled by.
 */
final class ReadyEvents implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ReadyEvents.class);
    static final String COMPONENT = "kaas-controller";
    /** Kept short for {@code kubectl describe}; events.k8s.io/v1 allows 1 KiB in a note. */
    static final int MAX_MESSAGE_BYTES = 1024;
    private static final int QUEUE = 64;

    private final KubernetesClient client;
    private final String namespace;
    private final ThreadPoolExecutor writer;
    private final AtomicBoolean failureLogged = new AtomicBoolean();
    /** Events queued or being written. */
    private final AtomicInteger pending = new AtomicInteger();

    ReadyEvents(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE), r -> {
            Thread t = new Thread(r, "kaas-kube-events");
            t.setDaemon(true);
            return t;
        }, (r, executor) -> {
            pending.decrementAndGet();
            LOG.debugf("an Event dropped: %d are waiting to be written", QUEUE);
        });
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

    /** Queues the Event for {@code resource}'s new Ready condition {@code after}, if it changed from {@code before}. */
    void onReadyChange(HasMetadata resource, Condition before, Condition after) {
        if (!changed(before, after)) {
            return;
        }
        Event event = event(resource, after, Instant.now());
        String name = resource.getKind() + " " + resource.getMetadata().getName();
        pending.incrementAndGet();
        writer.execute(() -> {
            try {
                client.v1().events().inNamespace(namespace).resource(event).create();
            } catch (RuntimeException e) {
                if (failureLogged.compareAndSet(false, true)) {
                    LOG.warnf("no Event written on %s/%s (later failures are logged at debug): %s", namespace, name, e.getMessage());
                } else {
                    LOG.debugf("no Event written on %s/%s: %s", namespace, name, e.getMessage());
                }
            } finally {
                pending.decrementAndGet();
            }
        });
    }

    /** Waits briefly for queued Events (a test, a clean stop), then stops the writer. */
    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writer.shutdownNow();
    }

    /** Whether every queued Event has been attempted (for tests). */
    boolean idle() {
        return pending.get() == 0;
    }

    static Event event(HasMetadata resource, Condition ready, Instant now) {
        String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
        boolean isReady = "True".equals(ready.getStatus());
        String message = ready.getMessage() == null || ready.getMessage().isEmpty()
                ? (isReady ? "Ready" : "Not ready") : ready.getMessage();
        return new EventBuilder()
                .withNewMetadata().withGenerateName(resource.getMetadata().getName() + ".").withNamespace(resource.getMetadata().getNamespace())
                .endMetadata()
                .withInvolvedObject(new ObjectReferenceBuilder().withApiVersion(resource.getApiVersion()).withKind(resource.getKind())
                        .withName(resource.getMetadata().getName()).withNamespace(resource.getMetadata().getNamespace())
                        .withUid(resource.getMetadata().getUid()).withResourceVersion(resource.getMetadata().getResourceVersion()).build())
                .withType(isReady ? "Normal" : "Warning")
                .withReason(ready.getReason() == null || ready.getReason().isEmpty() ? (isReady ? "Ready" : "NotReady") : ready.getReason())
                .withMessage(truncated(message))
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .withFirstTimestamp(time).withLastTimestamp(time).withCount(1)
                .build();
    }

    /** At most {@link #MAX_MESSAGE_BYTES} in UTF-8, cut between code points, "…" marking a cut. */
    static String truncated(String message) {
        if (message.getBytes(StandardCharsets.UTF_8).length <= MAX_MESSAGE_BYTES) {
            return message;
        }
        String ellipsis = "…";
        int budget = MAX_MESSAGE_BYTES - ellipsis.getBytes(StandardCharsets.UTF_8).length;
        StringBuilder out = new StringBuilder();
        int bytes = 0;
        for (int i = 0; i < message.length(); ) {
            int cp = message.codePointAt(i);
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + n > budget) {
                break;
            }
            out.appendCodePoint(cp);
            bytes += n;
            i += Character.charCount(cp);
        }
        return out.append(ellipsis).toString();
    }
}
