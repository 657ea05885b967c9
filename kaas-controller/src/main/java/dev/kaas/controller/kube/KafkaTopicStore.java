package dev.kaas.controller.kube;

import dev.kaas.common.cluster.TopicCatalog;
import dev.kaas.common.cluster.TopicDeclaration;
import dev.kaas.common.cluster.TopicVerdict;
import dev.kaas.common.model.TopicSpec;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * Topics as namespaced {@link KafkaTopic} resources: the declarative {@link TopicCatalog}.
 * The spec is the user's declaration; the status is the controller's record of what it accepted
 * ({@code topicId}, {@code topicName}, {@code partitions}, {@code config}) and whether the spec is
 * in effect ({@code Ready}). So the accepted catalog is read back from statuses after a restart,
 * and a spec the controller refused never hides what the brokers serve.
 *
 * <p>Every write is preceded by a check that this controller still holds the lease under the
 * epoch it writes for ({@link Fence}); the statuses carry no epoch because a status a deposed
 * controller wrote is recomputed by the next reconcile of its successor.
 */
final class KafkaTopicStore implements TopicCatalog {
    private static final Logger LOG = Logger.getLogger(KafkaTopicStore.class);
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final String READY = "Ready";

    /** The lease check before a write. */
    @FunctionalInterface
    interface Fence {
        void check(long leaseEpoch, String what) throws IOException;
    }

    private final KubernetesClient client;
    private final String namespace;
    private final Fence fence;
    private final BoundedCalls calls;
    private final long timeoutMs;
    private final ReadyEvents events;
    /** Resources as last listed by {@link #declarations()}, by uid: what {@link #report} writes to. */
    private final Map<String, KafkaTopic> listed = new ConcurrentHashMap<>();
    /**
     * The accepted set as of the last {@link #topics()} or {@link #store}: {@code store} creates
     * resources only for ids added since and deletes only those of ids removed since, so a
     * resource whose id the catalog does not hold yet (a reconcile that stopped half-way) is never
     * touched by a store that is about something else.
     */
    private Map<String, TopicSpec> lastStored = Map.of();
    private SharedIndexInformer<KafkaTopic> informer;

    KafkaTopicStore(KubernetesClient client, String namespace, Fence fence, BoundedCalls calls, long timeoutMs) {
        this.client = client;
        this.namespace = namespace;
        this.fence = fence;
        this.calls = calls;
        this.timeoutMs = timeoutMs;
        this.events = new ReadyEvents(client, namespace);
    }

    @Override
    public boolean declarative() {
        return true;
    }

    private List<KafkaTopic> list() throws IOException {
        try {
            return calls.within(timeoutMs, "listing KafkaTopic resources",
                    () -> client.resources(KafkaTopic.class).inNamespace(namespace).list().getItems());
        } catch (KubernetesClientException e) {
            throw new IOException("listing KafkaTopic resources in " + namespace + ": " + e.getMessage(), e);
        }
    }

    @Override
    public List<TopicSpec> topics() throws IOException {
        Map<String, TopicSpec> byId = new LinkedHashMap<>();
        for (KafkaTopic t : list()) {
            KafkaTopicStatus s = t.getStatus();
            if (s != null && s.getTopicId() != null && s.getTopicName() != null && s.getPartitions() != null) {
                byId.putIfAbsent(s.getTopicId(), new TopicSpec(s.getTopicName(), s.getTopicId(), s.getPartitions(), s.getConfig()));
            }
        }
        lastStored = Map.copyOf(byId);
        return List.copyOf(byId.values());
    }

    @Override
    public List<TopicDeclaration> declarations() throws IOException {
        List<KafkaTopic> all = list();
        listed.clear();
        List<TopicDeclaration> out = new ArrayList<>();
        for (KafkaTopic t : all) {
            if (t.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            listed.put(t.getMetadata().getUid(), t);
            out.add(declaration(t));
        }
        return out;
    }

    private static TopicDeclaration declaration(KafkaTopic t) {
        KafkaTopicSpec spec = t.getSpec() == null ? new KafkaTopicSpec() : t.getSpec();
        Map<String, String> configs = new TreeMap<>();
        if (spec.getConfig() != null) {
            // A null value (config: {retention.ms: ~}) is declared as "null": refused as an invalid value, never a crash.
            spec.getConfig().forEach((k, v) -> configs.put(k, String.valueOf(v)));
        }
        Long generation = t.getMetadata().getGeneration();
        return new TopicDeclaration(t.getMetadata().getUid(), t.topicName(), generation == null ? 0 : generation,
                spec.getPartitions() == null ? -1 : spec.getPartitions(), configs,
                t.getStatus() == null ? null : t.getStatus().getTopicId());
    }

    @Override
    public void report(long leaseEpoch, TopicVerdict verdict) throws IOException {
        KafkaTopic resource = listed.get(verdict.declaration().ref());
        if (resource == null) {
            return;
        }
        KafkaTopicStatus wanted = status(verdict.accepted(), verdict.declaration().generation(),
                verdict.ready(), verdict.reason(), verdict.message(), resource.getStatus());
        if (verdict.accepted() == null && verdict.declaration().topicId() != null) {
            // A refused declaration keeps the id it carries: minted once, it is never rotated.
            wanted.setTopicId(verdict.declaration().topicId());
        }
        if (sameStatus(resource.getStatus(), wanted)) {
            return;
        }
        fence.check(leaseEpoch, "the status of KafkaTopic " + resource.getMetadata().getName());
        Condition before = readyCondition(resource.getStatus());
        resource.setStatus(wanted);
        writeStatus(resource);
        events.onReadyChange(resource, before, readyCondition(wanted));
        if (!verdict.ready()) {
            LOG.warnf("KafkaTopic %s/%s not ready reason=%s: %s", namespace, resource.getMetadata().getName(),
                    verdict.reason(), verdict.message());
        }
    }

    @Override
    public void store(long leaseEpoch, List<TopicSpec> topics) throws IOException {
        Map<String, KafkaTopic> byId = new HashMap<>();
        List<KafkaTopic> all = list();
        for (KafkaTopic t : all) {
            if (t.getStatus() != null && t.getStatus().getTopicId() != null) {
                byId.putIfAbsent(t.getStatus().getTopicId(), t);
            }
        }
        Map<String, TopicSpec> wanted = new HashMap<>();
        topics.forEach(s -> wanted.put(s.topicId(), s));
        for (TopicSpec spec : topics) {
            KafkaTopic existing = byId.get(spec.topicId());
            if (existing == null) {
                if (!lastStored.containsKey(spec.topicId())) {
                    create(leaseEpoch, spec, all);
                }
                // else: its resource was deleted since (the next reconcile deletes the topic); never re-create it.
            } else if (!accepted(existing.getStatus()).equals(spec)) {
                KafkaTopicStatus before = existing.getStatus();
                long observed = before.getObservedGeneration() == null ? 0 : before.getObservedGeneration();
                Integer declaredPartitions = existing.getSpec() == null ? null : existing.getSpec().getPartitions();
                if (declaredPartitions != null && declaredPartitions >= 0 && declaredPartitions < spec.partitions()) {
                    // CreatePartitions through the Kafka API: the resource declares the topic, so it must say
                    // so too, or the next reconcile would read it as asking for fewer partitions.
                    fence.check(leaseEpoch, "the spec of KafkaTopic " + existing.getMetadata().getName());
                    existing = writeSpecPartitions(existing, spec.partitions());
                    // The spec this write made is the one the status answers.
                    observed = existing.getMetadata().getGeneration() == null ? observed : existing.getMetadata().getGeneration();
                }
                Map<String, String> declaredConfig = declaration(existing).configs();
                TopicSpec stored = lastStored.get(spec.topicId());
                if (stored != null && declaredConfig.equals(stored.configs()) && !declaredConfig.equals(spec.configs())) {
                    // AlterConfigs through the Kafka API changed the catalog's overrides: the resource must declare
                    // them too, or the next reconcile would read the old ones as asked for. A resource that says
                    // anything but what the catalog held before this change was edited by its user (maybe not yet
                    // accepted): that is the user's word, and is left alone.
                    fence.check(leaseEpoch, "the spec of KafkaTopic " + existing.getMetadata().getName());
                    existing = writeSpecConfig(existing, spec.configs());
                    observed = existing.getMetadata().getGeneration() == null ? observed : existing.getMetadata().getGeneration();
                }
                fence.check(leaseEpoch, "the status of KafkaTopic " + existing.getMetadata().getName());
                Condition ready = readyCondition(before);
                existing.setStatus(status(spec, observed,
                        ready == null || "True".equals(ready.getStatus()), ready == null ? null : ready.getReason(),
                        ready == null ? null : ready.getMessage(), before));
                writeStatus(existing);
            }
        }
        for (var e : byId.entrySet()) {
            if (!wanted.containsKey(e.getKey()) && lastStored.containsKey(e.getKey())) {
                KafkaTopic gone = e.getValue();
                fence.check(leaseEpoch, "deleting KafkaTopic " + gone.getMetadata().getName());
                try {
                    calls.within(timeoutMs, "deleting KafkaTopic " + gone.getMetadata().getName(), () -> client.resource(gone).delete());
                } catch (KubernetesClientException ex) {
                    throw new IOException("deleting KafkaTopic " + gone.getMetadata().getName() + ": " + ex.getMessage(), ex);
                }
                LOG.infof("KafkaTopic %s/%s deleted (topic %s deleted through the Kafka API)", namespace,
                        gone.getMetadata().getName(), e.getKey());
            }
        }
        lastStored = Map.copyOf(wanted);
    }

    /** A topic the Kafka API created: a resource declaring exactly it, its status accepted and ready. */
    private void create(long leaseEpoch, TopicSpec spec, List<KafkaTopic> existing) throws IOException {
        String name = resourceName(spec.name());
        String fallback = name.length() > 240 ? name.substring(0, 240) : name;
        fallback = fallback + "-" + hash(spec.topicId());
        boolean taken = false;
        for (KafkaTopic t : existing) {
            taken |= t.getMetadata().getName().equals(name);
        }
        KafkaTopicSpec declared = new KafkaTopicSpec();
        if (!spec.name().equals(taken ? fallback : name)) {
            declared.setTopicName(spec.name());
        }
        declared.setPartitions(spec.partitions());
        declared.setReplicas(1);
        declared.setConfig(spec.configs().isEmpty() ? null : new TreeMap<>(spec.configs()));
        KafkaTopic resource = new KafkaTopic();
        resource.setMetadata(new ObjectMetaBuilder().withName(taken ? fallback : name).withNamespace(namespace)
                .addToLabels("app.kubernetes.io/managed-by", "kaas-controller").build());
        resource.setSpec(declared);
        fence.check(leaseEpoch, "creating KafkaTopic " + resource.getMetadata().getName());
        KafkaTopic created;
        try {
            created = calls.within(timeoutMs, "creating KafkaTopic " + resource.getMetadata().getName(),
                    () -> client.resource(resource).create());
        } catch (KubernetesClientException e) {
            throw new IOException("creating KafkaTopic " + resource.getMetadata().getName() + ": " + e.getMessage(), e);
        }
        created.setStatus(status(spec, created.getMetadata().getGeneration() == null ? 1 : created.getMetadata().getGeneration(),
                true, null, null, null));
        fence.check(leaseEpoch, "the status of KafkaTopic " + created.getMetadata().getName());
        writeStatus(created);
        LOG.infof("KafkaTopic %s/%s created for topic %s id=%s", namespace, created.getMetadata().getName(), spec.name(), spec.topicId());
    }

    private KafkaTopic writeSpecPartitions(KafkaTopic resource, int partitions) throws IOException {
        resource.getSpec().setPartitions(partitions);
        try {
            KafkaTopic updated = calls.within(timeoutMs, "writing the spec of KafkaTopic " + resource.getMetadata().getName(),
                    () -> client.resources(KafkaTopic.class).inNamespace(namespace).resource(resource).update());
            updated.setStatus(resource.getStatus());
            LOG.infof("KafkaTopic %s/%s declares %d partitions now (CreatePartitions through the Kafka API)", namespace,
                    resource.getMetadata().getName(), partitions);
            return updated;
        } catch (KubernetesClientException e) {
            throw new IOException("writing the spec of KafkaTopic " + resource.getMetadata().getName() + ": " + e.getMessage(), e);
        }
    }

    private KafkaTopic writeSpecConfig(KafkaTopic resource, Map<String, String> configs) throws IOException {
        if (resource.getSpec() == null) {
            resource.setSpec(new KafkaTopicSpec());
        }
        resource.getSpec().setConfig(configs.isEmpty() ? null : new TreeMap<String, Object>(configs));
        try {
            KafkaTopic updated = calls.within(timeoutMs, "writing the spec of KafkaTopic " + resource.getMetadata().getName(),
                    () -> client.resources(KafkaTopic.class).inNamespace(namespace).resource(resource).update());
            updated.setStatus(resource.getStatus());
            LOG.infof("KafkaTopic %s/%s declares config %s now (AlterConfigs through the Kafka API)", namespace,
                    resource.getMetadata().getName(), new TreeMap<>(configs));
            return updated;
        } catch (KubernetesClientException e) {
            throw new IOException("writing the spec of KafkaTopic " + resource.getMetadata().getName() + ": " + e.getMessage(), e);
        }
    }

    private void writeStatus(KafkaTopic resource) throws IOException {
        try {
            calls.within(timeoutMs, "writing the status of KafkaTopic " + resource.getMetadata().getName(),
                    () -> client.resources(KafkaTopic.class).inNamespace(namespace).resource(resource).updateStatus());
        } catch (KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
                // The resource changed since it was listed: its watch event brings a reconcile with the new spec.
                throw new IOException("KafkaTopic " + resource.getMetadata().getName() + " changed while its status was written", e);
            }
            throw new IOException("writing the status of KafkaTopic " + resource.getMetadata().getName() + ": " + e.getMessage(), e);
        }
    }

    private static TopicSpec accepted(KafkaTopicStatus s) {
        return new TopicSpec(s.getTopicName(), s.getTopicId(), s.getPartitions() == null ? 0 : s.getPartitions(), s.getConfig());
    }

    private static KafkaTopicStatus status(TopicSpec accepted, long generation, boolean ready, String reason, String message,
                                           KafkaTopicStatus before) {
        KafkaTopicStatus s = new KafkaTopicStatus();
        if (accepted != null) {
            s.setTopicId(accepted.topicId());
            s.setTopicName(accepted.name());
            s.setPartitions(accepted.partitions());
            s.setConfig(accepted.configs().isEmpty() ? null : new TreeMap<>(accepted.configs()));
        }
        s.setObservedGeneration(generation);
        Condition previous = readyCondition(before);
        String status = ready ? "True" : "False";
        String since = previous != null && status.equals(previous.getStatus()) && previous.getLastTransitionTime() != null
                ? previous.getLastTransitionTime() : Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        s.setConditions(List.of(new ConditionBuilder().withType(READY).withStatus(status)
                .withReason(ready ? "Accepted" : reason).withMessage(ready ? "The topic is served as declared." : message)
                .withObservedGeneration(generation).withLastTransitionTime(since).build()));
        return s;
    }

    static Condition readyCondition(KafkaTopicStatus s) {
        if (s == null || s.getConditions() == null) {
            return null;
        }
        return s.getConditions().stream().filter(c -> c != null && READY.equals(c.getType())).findFirst().orElse(null);
    }

    private static boolean sameStatus(KafkaTopicStatus a, KafkaTopicStatus b) {
        if (a == null || b == null) {
            return a == b;
        }
        Condition ca = readyCondition(a);
        Condition cb = readyCondition(b);
        return Objects.equals(a.getTopicId(), b.getTopicId()) && Objects.equals(a.getTopicName(), b.getTopicName())
                && Objects.equals(a.getPartitions(), b.getPartitions()) && Objects.equals(a.getConfig(), b.getConfig())
                && Objects.equals(a.getObservedGeneration(), b.getObservedGeneration())
                && ca != null && cb != null && Objects.equals(ca.getStatus(), cb.getStatus())
                && Objects.equals(ca.getReason(), cb.getReason()) && Objects.equals(ca.getMessage(), cb.getMessage());
    }

    /**
     * A Kubernetes name for a Kafka topic name, as Strimzi makes one: the name itself when it is a
     * DNS subdomain, else lower-cased with '_' as '-', trimmed to alphanumerics at both ends, and a
     * hash of the original appended so that two Kafka names never map to one resource.
     */
    static String resourceName(String topic) {
        if (DNS_SUBDOMAIN.matcher(topic).matches()) {
            return topic;
        }
        String s = topic.toLowerCase(java.util.Locale.ROOT).replace('_', '-').replaceAll("[^-a-z0-9.]", "-");
        s = s.replaceAll("^[^a-z0-9]+", "").replaceAll("[^a-z0-9]+$", "");
        if (s.length() > 200) {
            s = s.substring(0, 200).replaceAll("[^a-z0-9]+$", "");
        }
        return (s.isEmpty() ? "topic" : s) + "---" + hash(topic);
    }

    private static String hash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 5);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void watch(Runnable listener) {
        if (informer != null) {
            return;
        }
        informer = Watches.start(() -> client.resources(KafkaTopic.class).inNamespace(namespace).runnableInformer(0), listener);
    }

    synchronized void close() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
        events.close();
    }

    /** The Events this store writes (tests wait for them). */
    ReadyEvents events() {
        return events;
    }
}
