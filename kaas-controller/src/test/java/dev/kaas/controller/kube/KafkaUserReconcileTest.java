package dev.kaas.controller.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.fs.Disk;
import dev.kaas.common.model.AclEntry;
import dev.kaas.common.model.ClientQuota;
import dev.kaas.common.model.ScramUser;
import dev.kaas.controller.cluster.ControllerCore;
import dev.kaas.proto.AclSpec;
import dev.kaas.proto.CreateAclsCall;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller's core on the Kubernetes binding: KafkaUser resources (Strimzi's shape) in;
 * SCRAM credentials, ACLs and user quotas in the published assignment, Secrets and statuses out.
 */
class KafkaUserReconcileTest {
    @TempDir
    Path data;

    private final AtomicLong clock = new AtomicLong(1_000_000);
    private KubeTestServer kube;
    private KubernetesClient user;
    private KubernetesClient controllerClient;
    private KubernetesMetadata metadata;
    private ControllerCore core;

    @BeforeEach
    void setUp() throws Exception {
        kube = new KubeTestServer();
        user = kube.client();
        controllerClient = kube.client();
        metadata = new KubernetesMetadata(controllerClient, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
        core = new ControllerCore(metadata, clock::get, new ControllerCore.Settings("c1", 6000, 9000, 0, 1, 1000, 32));
        core.maintainLease();
        assertThat(core.isLeader()).isTrue();
    }

    @AfterEach
    void tearDown() {
        metadata.close();
        user.close();
        controllerClient.close();
        kube.close();
    }

    private static KafkaUserSpec.AclRule rule(String type, String name, String pattern, String... operations) {
        KafkaUserSpec.AclResource r = new KafkaUserSpec.AclResource();
        r.setType(type);
        r.setName(name);
        r.setPatternType(pattern);
        KafkaUserSpec.AclRule rule = new KafkaUserSpec.AclRule();
        rule.setResource(r);
        rule.setOperations(List.of(operations));
        return rule;
    }

    private static KafkaUserSpec spec(String authentication, List<KafkaUserSpec.AclRule> acls, Double producerByteRate) {
        KafkaUserSpec spec = new KafkaUserSpec();
        if (authentication != null) {
            KafkaUserSpec.Authentication a = new KafkaUserSpec.Authentication();
            a.setType(authentication);
            spec.setAuthentication(a);
        }
        if (acls != null) {
            KafkaUserSpec.Authorization z = new KafkaUserSpec.Authorization();
            z.setType("simple");
            z.setAcls(acls);
            spec.setAuthorization(z);
        }
        if (producerByteRate != null) {
            KafkaUserSpec.Quotas q = new KafkaUserSpec.Quotas();
            q.setProducerByteRate(producerByteRate);
            spec.setQuotas(q);
        }
        return spec;
    }

    private KafkaUser apply(String name, KafkaUserSpec spec) {
        KafkaUser existing = get(name);
        if (existing != null) {
            existing.setSpec(spec);
            return user.resource(existing).update();
        }
        KafkaUser u = new KafkaUser();
        u.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("kaas").build());
        u.setSpec(spec);
        return user.resource(u).create();
    }

    private KafkaUser get(String name) {
        return user.resources(KafkaUser.class).inNamespace("kaas").withName(name).get();
    }

    private static Condition ready(KafkaUser u) {
        return u.getStatus().getConditions().stream().filter(c -> c.getType().equals("Ready")).findFirst().orElseThrow();
    }

    private String secretValue(String name, String key) {
        Secret s = user.secrets().inNamespace("kaas").withName(name).get();
        return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
    }

    private static boolean verifies(ScramUser c, String password) throws Exception {
        ScramFormatter f = new ScramFormatter(ScramMechanism.SCRAM_SHA_512);
        byte[] salted = f.saltedPassword(password, Base64.getDecoder().decode(c.salt()), c.iterations());
        return Base64.getEncoder().encodeToString(f.storedKey(f.clientKey(salted))).equals(c.storedKey())
                && Base64.getEncoder().encodeToString(f.serverKey(salted)).equals(c.serverKey());
    }

    private List<AclEntry> aclsOf(String principal) {
        return core.current().acls().stream().filter(a -> a.principal().equals(principal)).toList();
    }

    private Map<String, Double> userQuota(String user) {
        return core.current().clientQuotas().stream().filter(q -> q.entity().equals(Map.of(ClientQuota.USER, user)))
                .map(ClientQuota::values).findFirst().orElse(Map.of());
    }

    @Test
    void aScramUserGetsAPasswordSecretACredentialItsAclsAndItsQuota() throws Exception {
        apply("alice", spec("scram-sha-512", List.of(rule("topic", "orders", "literal", "Read", "Describe"),
                rule("group", "billing-", "prefix", "Read")), 1_048_576.0));

        core.reconcileDeclarations();

        KafkaUser u = get("alice");
        assertThat(ready(u).getStatus()).as(ready(u).getMessage()).isEqualTo("True");
        assertThat(u.getStatus().getUsername()).isEqualTo("alice");
        assertThat(u.getStatus().getSecret()).isEqualTo("alice");
        assertThat(u.getStatus().getObservedGeneration()).isEqualTo(u.getMetadata().getGeneration());
        String password = secretValue("alice", "password");
        assertThat(password).hasSize(32);
        assertThat(secretValue("alice", "sasl.jaas.config"))
                .isEqualTo("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"" + password + "\";");
        Secret secret = user.secrets().inNamespace("kaas").withName("alice").get();
        assertThat(secret.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(u.getMetadata().getUid()));

        List<ScramUser> credentials = core.current().scramUsers().get("alice");
        assertThat(credentials).singleElement().satisfies(c -> {
            assertThat(c.mechanism()).isEqualTo("SCRAM-SHA-512");
            assertThat(c.iterations()).isEqualTo(4096);
        });
        assertThat(verifies(credentials.get(0), password)).isTrue();
        assertThat(verifies(credentials.get(0), password + "x")).isFalse();
        assertThat(aclsOf("User:alice")).containsExactlyInAnyOrder(
                new AclEntry(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
                new AclEntry(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
                new AclEntry(ResourceType.GROUP, "billing-", PatternType.PREFIXED, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        assertThat(userQuota("alice")).isEqualTo(Map.of("producer_byte_rate", 1_048_576.0));
    }

    @Test
    void reconcilingAgainWritesNothingAndKeepsTheCredential() throws Exception {
        apply("alice", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Write")), null));
        core.reconcileDeclarations();
        KafkaUser before = get("alice");
        long version = core.current().version();
        ScramUser credential = core.current().scramUsers().get("alice").get(0);

        core.reconcileDeclarations();
        core.reconcileDeclarations();

        assertThat(get("alice").getMetadata().getResourceVersion()).isEqualTo(before.getMetadata().getResourceVersion());
        assertThat(core.current().version()).as("nothing published").isEqualTo(version);
        assertThat(core.current().scramUsers().get("alice")).containsExactly(credential);
    }

    @Test
    void aPasswordFromTheUsersOwnSecretAndAChangeOfItTakeEffect() throws Exception {
        user.secrets().inNamespace("kaas").resource(new SecretBuilder().withNewMetadata().withName("bob-pw").endMetadata()
                .addToData("pw", Base64.getEncoder().encodeToString("first-password".getBytes(StandardCharsets.UTF_8))).build()).create();
        KafkaUserSpec spec = spec("scram-sha-512", null, null);
        KafkaUserSpec.PasswordSource source = new KafkaUserSpec.PasswordSource();
        source.setSecretKeyRef(new SecretKeySelector("pw", "bob-pw", false));
        KafkaUserSpec.Password p = new KafkaUserSpec.Password();
        p.setValueFrom(source);
        spec.getAuthentication().setPassword(p);
        apply("bob", spec);

        core.reconcileDeclarations();
        assertThat(get("bob").getStatus().getSecret()).isEqualTo("bob-pw");
        assertThat(user.secrets().inNamespace("kaas").withName("bob").get()).as("no password made").isNull();
        assertThat(verifies(core.current().scramUsers().get("bob").get(0), "first-password")).isTrue();

        Secret s = user.secrets().inNamespace("kaas").withName("bob-pw").get();
        s.getData().put("pw", Base64.getEncoder().encodeToString("second-password".getBytes(StandardCharsets.UTF_8)));
        user.resource(s).update();
        core.reconcileDeclarations();
        assertThat(core.current().scramUsers().get("bob")).singleElement().satisfies(c -> {
            assertThat(verifies(c, "second-password")).isTrue();
            assertThat(verifies(c, "first-password")).isFalse();
        });

        user.secrets().inNamespace("kaas").withName("bob-pw").delete();
        core.reconcileDeclarations();
        KafkaUser u = get("bob");
        assertThat(ready(u).getStatus()).isEqualTo("False");
        assertThat(ready(u).getReason()).isEqualTo("PasswordNotFound");
        assertThat(ready(u).getMessage()).isEqualTo("Secret bob-pw not found.");
        assertThat(verifies(core.current().scramUsers().get("bob").get(0), "second-password")).as("what was applied stays").isTrue();
    }

    /**
     * A changed password takes effect at once: the controller's watch of Secrets asks for a pass
     * when a Secret some user's password is read from changes (the runtime's reconcile request).
     */
    @Test
    void aChangeOfAPasswordSecretAsksForAPass() throws Exception {
        user.secrets().inNamespace("kaas").resource(new SecretBuilder().withNewMetadata().withName("dan-pw").endMetadata()
                .addToData("pw", Base64.getEncoder().encodeToString("first-password".getBytes(StandardCharsets.UTF_8))).build()).create();
        apply("dan", withPasswordFrom(spec("scram-sha-512", null, null), "dan-pw"));
        java.util.concurrent.atomic.AtomicInteger passes = new java.util.concurrent.atomic.AtomicInteger();
        KafkaUserStore store = (KafkaUserStore) metadata.users();
        store.watch(passes::incrementAndGet);
        // The first lists bring the resource (and, if the users' list came first, its Secret): wait until they are in.
        awaitAtLeast(passes, 1);
        long settle = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!store.secretsWatched() && System.nanoTime() < settle) {
            Thread.sleep(20);
        }
        assertThat(store.secretsWatched()).isTrue();
        int before;
        do {
            before = passes.get();
            Thread.sleep(300);
        } while (passes.get() != before);

        Secret s = user.secrets().inNamespace("kaas").withName("dan-pw").get();
        s.getData().put("pw", Base64.getEncoder().encodeToString("second-password".getBytes(StandardCharsets.UTF_8)));
        user.resource(s).update();

        awaitAtLeast(passes, before + 1);
        core.reconcileDeclarations();
        assertThat(verifies(core.current().scramUsers().get("dan").get(0), "second-password")).isTrue();
    }

    /** Which Secrets bring a pass: those a user's password is read from, not the namespace's others. */
    @Test
    void onlySecretsThatHoldAPasswordBringAPass() {
        KafkaUser named = resource("erin", withPasswordFrom(spec("scram-sha-512", null, null), "erin-pw"));
        KafkaUser made = resource("frank", spec("scram-sha-512", null, null));
        KafkaUser aclsOnly = resource("gina", spec(null, List.of(rule("topic", "t", null, "Read")), null));
        KafkaUser certificate = resource("hank", spec("tls-external", null, null));
        List<KafkaUser> users = List.of(named, made, aclsOnly, certificate);

        assertThat(KafkaUserStore.holdsAPassword(secret("erin-pw"), users)).as("named by secretKeyRef").isTrue();
        assertThat(KafkaUserStore.holdsAPassword(secret("frank"), users)).as("made for the user").isTrue();
        assertThat(KafkaUserStore.holdsAPassword(secret("erin"), users)).as("the user's name, but it names another").isFalse();
        assertThat(KafkaUserStore.holdsAPassword(secret("gina"), users)).as("a user without a password").isFalse();
        assertThat(KafkaUserStore.holdsAPassword(secret("hank"), users)).as("a certificate user's name (a TLS Secret, say)").isFalse();
        assertThat(KafkaUserStore.holdsAPassword(secret("default-token"), users)).as("unrelated").isFalse();
    }

    private static KafkaUserSpec withPasswordFrom(KafkaUserSpec spec, String secret) {
        KafkaUserSpec.PasswordSource source = new KafkaUserSpec.PasswordSource();
        source.setSecretKeyRef(new SecretKeySelector("pw", secret, false));
        KafkaUserSpec.Password p = new KafkaUserSpec.Password();
        p.setValueFrom(source);
        spec.getAuthentication().setPassword(p);
        return spec;
    }

    private static KafkaUser resource(String name, KafkaUserSpec spec) {
        KafkaUser u = new KafkaUser();
        u.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("kaas").build());
        u.setSpec(spec);
        return u;
    }

    private static Secret secret(String name) {
        return new SecretBuilder().withNewMetadata().withName(name).withNamespace("kaas").endMetadata().build();
    }

    private static void awaitAtLeast(java.util.concurrent.atomic.AtomicInteger count, int wanted) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (count.get() < wanted && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(count.get()).as("passes asked for").isGreaterThanOrEqualTo(wanted);
    }

    @Test
    void aSecretOfTheUsersNameThatKaasDidNotMakeIsNeitherReadNorReplaced() throws Exception {
        user.secrets().inNamespace("kaas").resource(new SecretBuilder().withNewMetadata().withName("carol").endMetadata()
                .addToData("password", Base64.getEncoder().encodeToString("someone-elses".getBytes(StandardCharsets.UTF_8))).build()).create();
        apply("carol", spec("scram-sha-512", List.of(rule("topic", "t", null, "Read")), null));

        core.reconcileDeclarations();

        KafkaUser u = get("carol");
        assertThat(ready(u).getReason()).isEqualTo("PasswordNotFound");
        assertThat(ready(u).getMessage()).startsWith("Secret carol exists and was not made by kaas for this KafkaUser");
        assertThat(u.getStatus().getUsername()).isNull();
        assertThat(core.current().scramUsers()).doesNotContainKey("carol");
        assertThat(aclsOf("User:carol")).isEmpty();
        assertThat(secretValue("carol", "password")).isEqualTo("someone-elses");
    }

    @Test
    void theUsersAclsAndQuotaAreTheResourcesWhateverTheKafkaApiDid() throws Exception {
        apply("dave", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Read")), 2048.0));
        core.reconcileDeclarations();
        core.createAcls(CreateAclsCall.newBuilder()
                .addAcls(AclSpec.newBuilder().setResourceType(ResourceType.TOPIC.code()).setResourceName("secrets")
                        .setPatternType(PatternType.LITERAL.code()).setPrincipal("User:dave").setHost("*")
                        .setOperation(AclOperation.READ.code()).setPermission(AclPermissionType.ALLOW.code()))
                .addAcls(AclSpec.newBuilder().setResourceType(ResourceType.TOPIC.code()).setResourceName("secrets")
                        .setPatternType(PatternType.LITERAL.code()).setPrincipal("User:erin").setHost("*")
                        .setOperation(AclOperation.READ.code()).setPermission(AclPermissionType.ALLOW.code())).build());
        assertThat(aclsOf("User:dave")).hasSize(2);
        assertThat(core.reconcileUnfinished()).as("a declared user's ACLs changed: a pass is due at once").isTrue();

        core.reconcileDeclarations();

        assertThat(aclsOf("User:dave")).extracting(AclEntry::resourceName).containsExactly("orders");
        assertThat(aclsOf("User:erin")).as("a user no resource declares is the Kafka API's").hasSize(1);
        assertThat(userQuota("dave")).isEqualTo(Map.of("producer_byte_rate", 2048.0));

        core.createAcls(CreateAclsCall.newBuilder()
                .addAcls(AclSpec.newBuilder().setResourceType(ResourceType.TOPIC.code()).setResourceName("more")
                        .setPatternType(PatternType.LITERAL.code()).setPrincipal("User:erin").setHost("*")
                        .setOperation(AclOperation.READ.code()).setPermission(AclPermissionType.ALLOW.code())).build());
        assertThat(core.reconcileUnfinished()).as("only undeclared users changed: no pass due").isFalse();
    }

    @Test
    void anInvalidChangeIsRefusedWithTheReasonAndWhatWasAppliedStays() throws Exception {
        apply("frank", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Read")), null));
        core.reconcileDeclarations();
        ScramUser credential = core.current().scramUsers().get("frank").get(0);
        assertThat(eventsOf("frank")).as("accepted at once: no Event").isEmpty();

        apply("frank", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Read", "Fly")), null));
        core.reconcileDeclarations();
        KafkaUser u = get("frank");
        assertThat(ready(u).getStatus()).isEqualTo("False");
        assertThat(ready(u).getReason()).isEqualTo("InvalidAcl");
        assertThat(ready(u).getMessage()).startsWith("acls[0]: operation Fly is not one of Read, Write");
        assertThat(u.getStatus().getUsername()).isEqualTo("frank");
        assertThat(u.getStatus().getObservedGeneration()).isEqualTo(u.getMetadata().getGeneration());
        assertThat(aclsOf("User:frank")).extracting(AclEntry::operation).containsExactly(AclOperation.READ);
        assertThat(core.current().scramUsers().get("frank")).containsExactly(credential);

        apply("frank", spec("tls", null, null));
        core.reconcileDeclarations();
        assertThat(ready(get("frank")).getReason()).isEqualTo("UnsupportedAuthentication");
        // Another refused spec for the same reason (a new generation, so a new status): no new Event.
        apply("frank", spec("tls", List.of(rule("topic", "orders", null, "Read")), null));
        core.reconcileDeclarations();
        assertThat(get("frank").getStatus().getObservedGeneration()).isEqualTo(get("frank").getMetadata().getGeneration());
        assertThat(eventsOf("frank")).extracting(e -> e.getReason()).containsExactlyInAnyOrder("InvalidAcl", "UnsupportedAuthentication");

        KafkaUserSpec quota = spec("scram-sha-512", null, -1.0);
        apply("frank", quota);
        core.reconcileDeclarations();
        assertThat(ready(get("frank")).getReason()).isEqualTo("InvalidQuota");
        assertThat(ready(get("frank")).getMessage()).isEqualTo("Quota producerByteRate: Quota producer_byte_rate must be greater than 0.");
        core.reconcileDeclarations();

        // An Event for each refusal (not for each pass that finds it still refused), and one when it is accepted again.
        apply("frank", spec("scram-sha-512", null, null));
        core.reconcileDeclarations();
        assertThat(eventsOf("frank")).extracting(e -> e.getType() + " " + e.getReason()).containsExactlyInAnyOrder(
                "Warning InvalidAcl", "Warning UnsupportedAuthentication", "Warning InvalidQuota", "Normal " + ready(get("frank")).getReason());
        assertThat(eventsOf("frank")).filteredOn(e -> e.getReason().equals("InvalidQuota")).singleElement().satisfies(e -> {
            assertThat(e.getMessage()).isEqualTo("Quota producerByteRate: Quota producer_byte_rate must be greater than 0.");
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("KafkaUser");
            assertThat(e.getInvolvedObject().getUid()).isEqualTo(get("frank").getMetadata().getUid());
            assertThat(e.getSource().getComponent()).isEqualTo("kaas-controller");
        });
    }

    /** The Events on the resource {@code name}, once every queued one was written. */
    private List<io.fabric8.kubernetes.api.model.Event> eventsOf(String name) throws InterruptedException {
        ReadyEvents events = ((KafkaUserStore) metadata.users()).events();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!events.idle() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(events.idle()).as("Events written").isTrue();
        return user.v1().events().inNamespace("kaas").list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void tlsExternalIsTheCertificatesCnAndChangingTypeMovesEverythingToTheNewName() throws Exception {
        apply("gina", spec("scram-sha-512", List.of(rule("cluster", null, null, "Describe")), 100.0));
        core.reconcileDeclarations();
        assertThat(aclsOf("User:gina")).hasSize(1);

        apply("gina", spec("tls-external", List.of(rule("cluster", null, null, "Describe")), 100.0));
        core.reconcileDeclarations();

        KafkaUser u = get("gina");
        assertThat(ready(u).getStatus()).isEqualTo("True");
        assertThat(u.getStatus().getUsername()).isEqualTo("CN=gina");
        assertThat(u.getStatus().getSecret()).isNull();
        assertThat(aclsOf("User:gina")).isEmpty();
        assertThat(aclsOf("User:CN=gina")).singleElement().satisfies(a -> {
            assertThat(a.resourceType()).isEqualTo(ResourceType.CLUSTER);
            assertThat(a.resourceName()).isEqualTo("kafka-cluster");
        });
        assertThat(core.current().scramUsers()).doesNotContainKeys("gina", "CN=gina");
        assertThat(userQuota("gina")).isEmpty();
        assertThat(userQuota("CN=gina")).isEqualTo(Map.of("producer_byte_rate", 100.0));
    }

    @Test
    void deletingTheResourceRemovesTheUser() throws Exception {
        apply("hank", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Read")), 100.0));
        core.reconcileDeclarations();
        assertThat(core.current().scramUsers()).containsKey("hank");
        assertThat(core.current().declaredUsers()).containsValue("hank");

        user.resources(KafkaUser.class).inNamespace("kaas").withName("hank").delete();
        core.reconcileDeclarations();

        assertThat(core.current().scramUsers()).doesNotContainKey("hank");
        assertThat(aclsOf("User:hank")).isEmpty();
        assertThat(userQuota("hank")).isEmpty();
        assertThat(core.current().declaredUsers()).isEmpty();
    }

    /** A user that is granted nothing is still in the ledger: the publication carries it alone. */
    @Test
    void aUserGrantedNothingIsStillRecordedInThePublishedLedger() throws Exception {
        apply("nil", new KafkaUserSpec());
        long version = core.current().version();

        core.reconcileDeclarations();

        assertThat(core.current().version()).isGreaterThan(version);
        assertThat(core.current().declaredUsers()).containsValue("nil");
        assertThat(ready(get("nil")).getStatus()).isEqualTo("True");
    }

    /** A new controller knows what the last one applied from the assignment, not from any status. */
    @Test
    void aNewControllerRemovesAUserWhoseResourceWentWhileNoneWasRunning() throws Exception {
        apply("ivy", spec("scram-sha-512", List.of(rule("topic", "orders", null, "Read")), null));
        core.reconcileDeclarations();
        core.loseLeadership("test");
        metadata.lease().release("c1");
        user.resources(KafkaUser.class).inNamespace("kaas").withName("ivy").delete();

        try (KubernetesClient other = kube.client()) {
            KubernetesMetadata m2 = new KubernetesMetadata(other, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
            ControllerCore successor = new ControllerCore(m2, clock::get, new ControllerCore.Settings("c2", 6000, 9000, 0, 1, 1000, 32));
            successor.maintainLease();
            assertThat(successor.isLeader()).isTrue();
            assertThat(successor.current().scramUsers()).as("the first reconcile ran on taking the lease").doesNotContainKey("ivy");
            assertThat(successor.current().acls()).noneMatch(a -> a.principal().equals("User:ivy"));
            m2.close();
        }
    }

    @Test
    void aDeposedControllerWritesNoSecretAndNoStatus() throws Exception {
        metadata.lease().release("c1");
        try (KubernetesClient other = kube.client()) {
            KubernetesMetadata m2 = new KubernetesMetadata(other, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
            ControllerCore successor = new ControllerCore(m2, clock::get, new ControllerCore.Settings("c2", 6000, 9000, 0, 1, 1000, 32));
            successor.maintainLease();
            assertThat(successor.isLeader()).isTrue();
            apply("jack", spec("scram-sha-512", null, null));

            try {
                core.reconcileDeclarations();
            } catch (java.io.IOException | RuntimeException expected) {
                // refused by the fence
            }

            assertThat(user.secrets().inNamespace("kaas").withName("jack").get()).isNull();
            assertThat(get("jack").getStatus()).isNull();
            m2.close();
        }
    }

    @Test
    void aReconcileOfManyNewUsersPausesForTheLeaseAndFinishesInLaterPasses() throws Exception {
        for (int i = 0; i < 60; i++) {
            apply("bulk-" + i, spec("scram-sha-512", List.of(rule("topic", "t" + i, null, "Read")), null));
        }
        // 50 ms per request the API server answers: the pass's budget (a third of the 6 s lease)
        // runs out after about 40 requests (a Secret read, a lease read and a create, a lease read and a status write each).
        // Secrets are read as users are judged, from the watch the runtime starts (a call each
        // would cost 60 x 50 ms, more than a pass has), and a pass past its budget resumes in the next.
        KafkaUserStore store = (KafkaUserStore) metadata.users();
        store.watch(() -> { });
        long watchDeadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!store.secretsWatched() && System.nanoTime() < watchDeadline) {
            Thread.sleep(20);
        }
        assertThat(store.secretsWatched()).isTrue();
        long base = clock.get();
        metadata.lease().release("c1");
        ControllerCore slow = new ControllerCore(metadata, () -> base + 50L * kube.server.getRequestCount(),
                new ControllerCore.Settings("c-slow", 6000, 9000, 0, 1, 1000, 32));

        slow.maintainLease();
        boolean pausedOnce = slow.reconcileUnfinished();
        int passes = 0;
        while (slow.reconcileUnfinished() && passes++ < 50) {
            slow.maintainLease();
            slow.reconcileDeclarations();
        }

        assertThat(pausedOnce).as("the first pass stopped at its budget").isTrue();
        assertThat(slow.isLeader()).isTrue();
        assertThat(slow.reconcileUnfinished()).isFalse();
        assertThat(slow.current().scramUsers()).hasSize(60);
        assertThat(slow.current().declaredUsers()).hasSize(60);
        assertThat(user.resources(KafkaUser.class).inNamespace("kaas").list().getItems())
                .allSatisfy(u -> assertThat(ready(u).getStatus()).isEqualTo("True"));
    }
    /**
     * Users whose passwords are read with a call every pass (their Secrets do not exist), more
     * than a pass has time for: passes judge some, write their statuses, and the next goes on from
     * there, so every resource gets its status.
     */
    @Test
    void usersThatCostACallEveryPassStillAllGetTheirStatus() throws Exception {
        for (int i = 0; i < 50; i++) {
            KafkaUserSpec spec = spec("scram-sha-512", null, null);
            KafkaUserSpec.PasswordSource source = new KafkaUserSpec.PasswordSource();
            source.setSecretKeyRef(new SecretKeySelector("pw", "missing-" + i, false));
            KafkaUserSpec.Password p = new KafkaUserSpec.Password();
            p.setValueFrom(source);
            spec.getAuthentication().setPassword(p);
            apply("costly-" + i, spec);
        }
        long base = clock.get();
        metadata.lease().release("c1");
        ControllerCore slow = new ControllerCore(metadata, () -> base + 50L * kube.server.getRequestCount(),
                new ControllerCore.Settings("c-slow", 6000, 9000, 0, 1, 1000, 32));

        slow.maintainLease();
        for (int pass = 0; pass < 30 && slow.reconcileUnfinished(); pass++) {
            slow.maintainLease();
            slow.reconcileDeclarations();
        }

        assertThat(slow.isLeader()).isTrue();
        assertThat(user.resources(KafkaUser.class).inNamespace("kaas").list().getItems()).hasSize(50).allSatisfy(u -> {
            assertThat(u.getStatus()).as(u.getMetadata().getName()).isNotNull();
            assertThat(ready(u).getReason()).isEqualTo("PasswordNotFound");
        });
    }
}
