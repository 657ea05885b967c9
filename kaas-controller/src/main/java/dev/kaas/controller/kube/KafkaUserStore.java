package dev.kaas.controller.kube;

import dev.kaas.common.cluster.LeaseFencedException;
import dev.kaas.common.cluster.UserCatalog;
import dev.kaas.common.cluster.UserDeclaration;
import dev.kaas.common.cluster.UserVerdict;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Users as namespaced {@link KafkaUser} resources: the declarative {@link UserCatalog}. The spec
 * is the user's declaration; the status records the user name the controller applied for it and
 * whether the spec is in effect ({@code Ready}). What to remove when a resource goes is the
 * published assignment's ledger, not the resource: no finalizer holds it. SCRAM passwords are read
 * from Secrets; one the user did not name is made in a Secret named after the user (keys
 * {@code password} and {@code sasl.jaas.config}, as Strimzi's), owned by the resource so
 * Kubernetes removes it with it.
 *
 * <p>Every write is preceded by a check that this controller still holds the lease under the
 * epoch it writes for ({@link KafkaTopicStore.Fence}).
 */
final class KafkaUserStore implements UserCatalog {
    private static final Logger LOG = Logger.getLogger(KafkaUserStore.class);
    /** On a Secret the controller made: the user it is for. */
    static final String USER_LABEL = "kaas.dev/kafka-user";
    static final String PASSWORD_KEY = "password";
    /** The one authentication type with a password (Strimzi's spelling). */
    private static final String SCRAM_SHA_512 = "scram-sha-512";
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    /** Strimzi's generated password length. */
    private static final int PASSWORD_LENGTH = 32;
    /** A Secret's value is at most 1 MiB anyway; a password this long is a mistake, not a password. */
    private static final int MAX_PASSWORD_BYTES = 4096;

    private final KubernetesClient client;
    private final String namespace;
    private final KafkaTopicStore.Fence fence;
    private final BoundedCalls calls;
    private final long timeoutMs;
    private final ReadyEvents events;
    private final SecureRandom random = new SecureRandom();
    /** Resources as last listed by {@link #declarations()}, by uid: what {@link #withPassword} and {@link #report} write to. */
    private final Map<String, KafkaUser> listed = new ConcurrentHashMap<>();
    private SharedIndexInformer<KafkaUser> informer;
    /** The namespace's Secrets, watched: a pass reads passwords from here, not with a call per user. */
    private volatile SharedIndexInformer<Secret> secrets;

    KafkaUserStore(KubernetesClient client, String namespace, KafkaTopicStore.Fence fence, BoundedCalls calls, long timeoutMs) {
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

    @Override
    public List<UserDeclaration> declarations() throws IOException {
        List<KafkaUser> all;
        try {
            all = calls.within(timeoutMs, "listing KafkaUser resources",
                    () -> client.resources(KafkaUser.class).inNamespace(namespace).list().getItems());
        } catch (KubernetesClientException e) {
            throw new IOException("listing KafkaUser resources in " + namespace + ": " + e.getMessage(), e);
        }
        listed.clear();
        List<UserDeclaration> out = new ArrayList<>();
        for (KafkaUser u : all) {
            if (u.getMetadata().getDeletionTimestamp() != null) {
                // Going (held by someone else's finalizer): gone for kaas, which removes its user now.
                continue;
            }
            listed.put(u.getMetadata().getUid(), u);
            out.add(declaration(u));
        }
        return out;
    }

    private static UserDeclaration declaration(KafkaUser u) {
        KafkaUserSpec spec = u.getSpec() == null ? new KafkaUserSpec() : u.getSpec();
        String name = u.getMetadata().getName();
        // An authentication without a type is refused, not read as none (which would drop the credential).
        String authentication = spec.getAuthentication() == null ? null : Objects.requireNonNullElse(spec.getAuthentication().getType(), "");
        List<UserDeclaration.Rule> rules = new ArrayList<>();
        String authorization = null;
        if (spec.getAuthorization() != null) {
            authorization = spec.getAuthorization().getType();
            for (KafkaUserSpec.AclRule r : spec.getAuthorization().getAcls() == null ? List.<KafkaUserSpec.AclRule>of()
                    : spec.getAuthorization().getAcls()) {
                if (r == null) {
                    rules.add(new UserDeclaration.Rule(null, null, null, List.of(), null, null));
                    continue;
                }
                List<String> ops = new ArrayList<>(r.getOperations() == null ? List.of() : r.getOperations());
                if (r.getOperation() != null && !ops.contains(r.getOperation())) {
                    ops.add(r.getOperation());
                }
                KafkaUserSpec.AclResource res = r.getResource();
                rules.add(new UserDeclaration.Rule(res == null ? null : res.getType(), res == null ? null : res.getName(),
                        res == null ? null : res.getPatternType(), ops, r.getHost(), r.getType()));
            }
        }
        Map<String, Double> quotas = new TreeMap<>();
        KafkaUserSpec.Quotas q = spec.getQuotas();
        if (q != null) {
            putIfSet(quotas, "producer_byte_rate", q.getProducerByteRate());
            putIfSet(quotas, "consumer_byte_rate", q.getConsumerByteRate());
            putIfSet(quotas, "request_percentage", q.getRequestPercentage());
            putIfSet(quotas, "controller_mutation_rate", q.getControllerMutationRate());
        }
        Long generation = u.getMetadata().getGeneration();
        return new UserDeclaration(u.getMetadata().getUid(), name, generation == null ? 0 : generation, authentication, null, null,
                authorization, rules, quotas);
    }

    private static void putIfSet(Map<String, Double> quotas, String key, Double value) {
        if (value != null) {
            quotas.put(key, value);
        }
    }

    private static SecretKeySelector secretRef(KafkaUserSpec spec) {
        KafkaUserSpec.Password p = spec.getAuthentication().getPassword();
        return p == null || p.getValueFrom() == null ? null : p.getValueFrom().getSecretKeyRef();
    }

    /**
     * A password from a Secret: {password, null}, or {null, what is wrong}. The Secret the
     * controller makes for the resource {@code ownerUid} may be absent ({null, null}: make it), and
     * must be that resource's: another Secret of that name (the user's own, or one made for an
     * earlier resource of the same name that Kubernetes has not collected yet) is not read.
     */
    private String[] read(String secretName, String key, String ownerUid, String user) throws IOException {
        if (secretName == null || secretName.isEmpty() || key == null || key.isEmpty()) {
            return new String[] {null, "spec.authentication.password.valueFrom.secretKeyRef needs a name and a key."};
        }
        SharedIndexInformer<Secret> cache = secrets;
        Secret secret = cache != null && cache.hasSynced() ? cache.getStore().getByKey(namespace + "/" + secretName) : null;
        if (secret == null) {
            // Not watched yet, or not there (or just made, and the watch has not brought it yet): ask.
            try {
                secret = calls.within(timeoutMs, "reading Secret " + secretName,
                        () -> client.secrets().inNamespace(namespace).withName(secretName).get());
            } catch (KubernetesClientException e) {
                throw new IOException("reading Secret " + secretName + ": " + e.getMessage(), e);
            }
        }
        if (secret == null) {
            return ownerUid != null ? new String[] {null, null} : new String[] {null, "Secret " + secretName + " not found."};
        }
        if (ownerUid != null && !ownedBy(secret, ownerUid)) {
            return new String[] {null, "Secret " + secretName + " exists and was not made by kaas for this KafkaUser: name the password "
                    + "with spec.authentication.password.valueFrom.secretKeyRef, or remove that Secret (one made for an earlier "
                    + "KafkaUser of this name goes when Kubernetes collects it)."};
        }
        String encoded = secret.getData() == null ? null : secret.getData().get(key);
        if (encoded == null) {
            return new String[] {null, "Secret " + secretName + " has no key " + key + "."};
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(encoded);
        } catch (IllegalArgumentException e) {
            return new String[] {null, "Secret " + secretName + " key " + key + " is not base64."};
        }
        if (bytes.length > MAX_PASSWORD_BYTES) {
            return new String[] {null, "Secret " + secretName + " key " + key + " holds more than " + MAX_PASSWORD_BYTES + " bytes."};
        }
        return new String[] {new String(bytes, StandardCharsets.UTF_8), null};
    }

    @Override
    public UserDeclaration withPassword(long leaseEpoch, UserDeclaration d) throws IOException {
        KafkaUser resource = listed.get(d.ref());
        if (resource == null || resource.getSpec() == null || resource.getSpec().getAuthentication() == null) {
            return d;
        }
        String[] read;
        try {
            SecretKeySelector ref = secretRef(resource.getSpec());
            read = ref != null ? read(ref.getName(), ref.getKey(), null, d.name()) : read(d.name(), PASSWORD_KEY, d.ref(), d.name());
            if (read[0] == null && read[1] == null) {
                read = new String[] {generate(leaseEpoch, resource), null};
            }
        } catch (LeaseFencedException e) {
            throw e;
        } catch (IOException | KubernetesClientException e) {
            // One user's Secret (a quota on Secrets, an admission policy, a timeout) holds back that user only.
            read = new String[] {null, e.getMessage()};
        }
        return new UserDeclaration(d.ref(), d.name(), d.generation(), d.authentication(), read[0], read[1], d.authorization(), d.acls(),
                d.quotas());
    }

    /** A new password in a Secret named after the user, owned by its resource. */
    private String generate(long leaseEpoch, KafkaUser owner) throws IOException {
        String name = owner.getMetadata().getName();
        StringBuilder sb = new StringBuilder(PASSWORD_LENGTH);
        for (int i = 0; i < PASSWORD_LENGTH; i++) {
            sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        String password = sb.toString();
        String jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + name + "\" password=\""
                + password + "\";";
        Base64.Encoder b64 = Base64.getEncoder();
        Secret secret = new SecretBuilder().withMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace)
                        .addToLabels(USER_LABEL, name).addToLabels("app.kubernetes.io/managed-by", "kaas-controller")
                        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(owner.getApiVersion()).withKind(owner.getKind())
                                .withName(name).withUid(owner.getMetadata().getUid()).withBlockOwnerDeletion(false).build())
                        .build())
                .withType("Opaque")
                .addToData(PASSWORD_KEY, b64.encodeToString(password.getBytes(StandardCharsets.UTF_8)))
                .addToData("sasl.jaas.config", b64.encodeToString(jaas.getBytes(StandardCharsets.UTF_8)))
                .build();
        fence.check(leaseEpoch, "creating Secret " + name);
        try {
            calls.within(timeoutMs, "creating Secret " + name, () -> client.secrets().inNamespace(namespace).resource(secret).create());
        } catch (KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
                // Made meanwhile (by a controller before this one): its password is the one.
                String[] read = read(name, PASSWORD_KEY, owner.getMetadata().getUid(), name);
                if (read[0] != null) {
                    return read[0];
                }
                throw new IOException(read[1] != null ? read[1] : "Secret " + name + " was made and removed meanwhile");
            }
            throw new IOException("creating Secret " + name + ": " + e.getMessage(), e);
        }
        LOG.infof("Secret %s/%s created with the SCRAM password of KafkaUser %s", namespace, name, name);
        return password;
    }

    private static boolean ownedBy(Secret secret, String uid) {
        return secret.getMetadata().getOwnerReferences() != null
                && secret.getMetadata().getOwnerReferences().stream().anyMatch(o -> o != null && uid.equals(o.getUid()));
    }

    @Override
    public void report(long leaseEpoch, UserVerdict verdict) throws IOException {
        KafkaUser resource = listed.get(verdict.declaration().ref());
        if (resource == null) {
            return;
        }
        String name = resource.getMetadata().getName();
        KafkaUserStatus wanted = status(verdict, resource);
        if (same(resource.getStatus(), wanted)) {
            return;
        }
        fence.check(leaseEpoch, "the status of KafkaUser " + name);
        Condition before = ready(resource.getStatus());
        resource.setStatus(wanted);
        try {
            calls.within(timeoutMs, "writing the status of KafkaUser " + name,
                    () -> client.resources(KafkaUser.class).inNamespace(namespace).resource(resource).updateStatus());
        } catch (KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
                // Changed since it was listed: its watch event brings another pass.
                throw new IOException("KafkaUser " + name + " changed while its status was written", e);
            }
            throw new IOException("writing the status of KafkaUser " + name + ": " + e.getMessage(), e);
        }
        events.onReadyChange(resource, before, ready(wanted));
        if (!verdict.ready()) {
            LOG.warnf("KafkaUser %s/%s not ready reason=%s: %s", namespace, name, verdict.reason(), verdict.message());
        }
    }

    private static KafkaUserStatus status(UserVerdict verdict, KafkaUser resource) {
        KafkaUserStatus s = new KafkaUserStatus();
        s.setUsername(verdict.username());
        KafkaUserSpec spec = resource.getSpec();
        if (verdict.ready() && SCRAM_SHA_512.equals(verdict.declaration().authentication()) && spec != null) {
            SecretKeySelector ref = secretRef(spec);
            s.setSecret(ref != null ? ref.getName() : resource.getMetadata().getName());
        } else if (resource.getStatus() != null && !verdict.ready()) {
            s.setSecret(resource.getStatus().getSecret());
        }
        long generation = verdict.declaration().generation();
        s.setObservedGeneration(generation);
        Condition previous = ready(resource.getStatus());
        String status = verdict.ready() ? "True" : "False";
        String since = previous != null && status.equals(previous.getStatus()) && previous.getLastTransitionTime() != null
                ? previous.getLastTransitionTime() : Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        s.setConditions(List.of(new ConditionBuilder().withType(KafkaTopicStore.READY).withStatus(status)
                .withReason(verdict.ready() ? "Accepted" : verdict.reason())
                .withMessage(verdict.ready() ? "The user is in effect as declared." : verdict.message())
                .withObservedGeneration(generation).withLastTransitionTime(since).build()));
        return s;
    }

    private static Condition ready(KafkaUserStatus s) {
        if (s == null || s.getConditions() == null) {
            return null;
        }
        return s.getConditions().stream().filter(c -> c != null && KafkaTopicStore.READY.equals(c.getType())).findFirst().orElse(null);
    }

    private static boolean same(KafkaUserStatus a, KafkaUserStatus b) {
        if (a == null || b == null) {
            return a == b;
        }
        Condition ca = ready(a);
        Condition cb = ready(b);
        return Objects.equals(a.getUsername(), b.getUsername()) && Objects.equals(a.getSecret(), b.getSecret())
                && Objects.equals(a.getObservedGeneration(), b.getObservedGeneration())
                && ca != null && cb != null && Objects.equals(ca.getStatus(), cb.getStatus())
                && Objects.equals(ca.getReason(), cb.getReason()) && Objects.equals(ca.getMessage(), cb.getMessage());
    }

    @Override
    public synchronized void watch(Runnable listener) {
        if (informer != null) {
            return;
        }
        SharedIndexInformer<KafkaUser> users = Watches.start(() -> client.resources(KafkaUser.class).inNamespace(namespace)
                .runnableInformer(0), listener);
        informer = users;
        // A changed password takes effect now, not at the resync: a change of a Secret some user's password is
        // read from brings a pass; the namespace's other Secrets (tokens, certificates) bring none.
        secrets = Watches.start(() -> client.secrets().inNamespace(namespace).runnableInformer(0),
                s -> holdsAPassword(s, users.getStore().list()), listener);
    }

    /**
     * Whether a change of {@code secret} can change a user's password: it is the Secret a
     * {@code scram-sha-512} resource's {@code secretKeyRef} names, or (without one) the Secret named
     * after the resource that the controller makes.
     */
    static boolean holdsAPassword(Secret secret, Collection<KafkaUser> users) {
        String name = secret.getMetadata() == null ? null : secret.getMetadata().getName();
        if (name == null) {
            return false;
        }
        for (KafkaUser u : users) {
            if (u.getSpec() == null || u.getSpec().getAuthentication() == null || u.getMetadata() == null
                    || !SCRAM_SHA_512.equals(u.getSpec().getAuthentication().getType())) {
                continue;
            }
            SecretKeySelector ref = secretRef(u.getSpec());
            if (name.equals(ref != null ? ref.getName() : u.getMetadata().getName())) {
                return true;
            }
        }
        return false;
    }

    /** Whether passwords are read from the watched Secrets (else with a call each). */
    boolean secretsWatched() {
        SharedIndexInformer<Secret> cache = secrets;
        return cache != null && cache.hasSynced();
    }

    synchronized void close() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
        if (secrets != null) {
            secrets.close();
            secrets = null;
        }
        events.close();
    }

    /** The Events this store writes (tests wait for them). */
    ReadyEvents events() {
        return events;
    }
}
