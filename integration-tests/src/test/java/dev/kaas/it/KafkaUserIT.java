package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * KafkaUser resources (Strimzi's shape) with real processes: a controller on the Kubernetes
 * binding against fabric8's API server double, a broker whose only listener is SASL_PLAINTEXT
 * with SCRAM-SHA-512 and the StandardAuthorizer. Users log in with the passwords the controller
 * put in their Secrets, may do what their resource's ACLs say, and lose both when the resource
 * changes or goes; nothing is configured through the Kafka API.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class KafkaUserIT {
    static final String NS = "kaas";
    static final ResourceDefinitionContext KAFKA_USERS = new ResourceDefinitionContext.Builder()
            .withGroup("kaas.dev").withVersion("v1").withKind("KafkaUser").withPlural("kafkausers").withNamespaced(true).build();

    @TempDir
    Path tmp;

    private KubernetesMockServer apiServer;
    private KubernetesClient kubectl;

    @BeforeEach
    void startApiServer() throws Exception {
        apiServer = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        apiServer.init(InetAddress.getLoopbackAddress(), KaasCluster.freePort());
        kubectl = apiServer.createClient();
        for (String crd : List.of("kafkatopics.kaas.dev-v1.yml", "kafkausers.kaas.dev-v1.yml")) {
            try (InputStream in = Files.newInputStream(KaasCluster.ROOT.resolve("k8s/base/crd").resolve(crd))) {
                kubectl.apiextensions().v1().customResourceDefinitions().load(in).create();
            }
        }
    }

    @AfterEach
    void stopApiServer() {
        if (kubectl != null) {
            kubectl.close();
        }
        if (apiServer != null) {
            apiServer.destroy();
        }
    }

    private void applyUser(String name, Map<String, Object> spec) {
        GenericKubernetesResource existing = kubectl.genericKubernetesResources(KAFKA_USERS).inNamespace(NS).withName(name).get();
        if (existing != null) {
            existing.getAdditionalProperties().put("spec", spec);
            kubectl.genericKubernetesResources(KAFKA_USERS).inNamespace(NS).resource(existing).update();
            return;
        }
        kubectl.genericKubernetesResources(KAFKA_USERS).inNamespace(NS).resource(new GenericKubernetesResourceBuilder()
                .withApiVersion("kaas.dev/v1").withKind("KafkaUser").withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .addToAdditionalProperties("spec", spec).build()).create();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> ready(String name) {
        GenericKubernetesResource r = kubectl.genericKubernetesResources(KAFKA_USERS).inNamespace(NS).withName(name).get();
        Object status = r == null ? null : r.getAdditionalProperties().get("status");
        if (status == null || ((Map<String, Object>) status).get("conditions") == null) {
            return Map.of();
        }
        return ((List<Map<String, Object>>) ((Map<String, Object>) status).get("conditions")).stream()
                .filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    private String password(String user) {
        Secret s = kubectl.secrets().inNamespace(NS).withName(user).get();
        return new String(Base64.getDecoder().decode(s.getData().get("password")), StandardCharsets.UTF_8);
    }

    private static Properties client(KaasMultiCluster cluster, String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrap());
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "SCRAM-SHA-512");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        return p;
    }

    /** Sends one record as the client: null when acknowledged, else the cause it failed with. */
    private static Throwable send(Properties client, String topic) {
        try (var producer = new KafkaProducer<>(client, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "v")).get(15, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    private static void await(String what, long seconds, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + seconds + " s: " + what);
            }
            Thread.sleep(200);
        }
    }

    private static Map<String, Object> acl(String type, String name, String... operations) {
        return Map.of("resource", Map.of("type", type, "name", name, "patternType", "literal"), "operations", List.of(operations));
    }

    @Test
    void usersLogInWithTheirSecretsPasswordMayDoWhatTheirResourceSaysAndLoseItWithTheResource() throws Exception {
        applyUser("admin", Map.of("authentication", Map.of("type", "scram-sha-512")));
        applyUser("alice", Map.of("authentication", Map.of("type", "scram-sha-512"),
                "authorization", Map.of("type", "simple", "acls", List.of(acl("topic", "orders", "Write", "Describe")))));
        Map<String, String> brokerProps = new HashMap<>();
        brokerProps.put("kaas.broker.listener-security-protocol-map", "PLAINTEXT:SASL_PLAINTEXT");
        brokerProps.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        brokerProps.put("listener.name.plaintext.scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        brokerProps.put("kaas.broker.authorizer-class-name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        brokerProps.put("kaas.broker.super-users", "User:admin");
        brokerProps.put("kaas.broker.allow-everyone-if-no-acl-found", "false");
        Map<String, String> controllerProps = Map.of(
                "kaas.controller.metadata", "kubernetes",
                "kaas.controller.kubernetes.namespace", NS,
                "kubernetes.master", "http://127.0.0.1:" + apiServer.getPort(),
                "kubernetes.namespace", NS,
                // Only watch events bring passes within the test: what it shows must not be the resync's doing.
                "kaas.controller.kubernetes.resync", "10m");
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 1, 1, brokerProps, controllerProps)) {
            await("both KafkaUsers ready", 30, () -> "True".equals(ready("admin").get("status")) && "True".equals(ready("alice").get("status")));
            Properties admin = client(cluster, "admin", password("admin"));
            Properties alice = client(cluster, "alice", password("alice"));
            try (Admin a = Admin.create(admin)) {
                a.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("other", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }

            assertThat(send(alice, "orders")).as("alice may write orders").isNull();
            assertThat(send(alice, "other")).as("but not other").isInstanceOf(TopicAuthorizationException.class);
            assertThat(send(client(cluster, "alice", "not-" + password("alice")), "orders")).as("a wrong password")
                    .isInstanceOf(SaslAuthenticationException.class);

            // The resource changes: Describe only. The broker refuses the write once it applied the change
            // (with no Write anywhere, the idempotent producer's InitProducerId is refused first: cluster authorization).
            applyUser("alice", Map.of("authentication", Map.of("type", "scram-sha-512"),
                    "authorization", Map.of("type", "simple", "acls", List.of(acl("topic", "orders", "Describe")))));
            await("alice's write refused", 30, () -> send(alice, "orders") instanceof AuthorizationException);

            // The Kafka API grants alice more: the resource owns her ACLs, and the write is put back at once, not at the
            // 30 s resync (the controller asks for a pass when a write changes what a resource owns).
            try (Admin a = Admin.create(admin)) {
                AclBinding extra = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "other", PatternType.LITERAL),
                        new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
                // An ACL of a user no resource declares, in the same request: once the broker lists it, it applied the
                // version that also held alice's, so alice's missing then was put back, not yet to come.
                AclBinding witness = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "other", PatternType.LITERAL),
                        new AccessControlEntry("User:bob", "*", AclOperation.READ, AclPermissionType.ALLOW));
                a.createAcls(List.of(extra, witness)).all().get(30, TimeUnit.SECONDS);
                AclBindingFilter alices = new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter("User:alice",
                        null, AclOperation.ANY, AclPermissionType.ANY));
                await("the API's ACL put back", 5, () -> {
                    try {
                        var all = a.describeAcls(AclBindingFilter.ANY).values().get(10, TimeUnit.SECONDS);
                        return all.contains(witness) && !all.contains(extra);
                    } catch (Exception e) {
                        return false;
                    }
                });
                assertThat(a.describeAcls(alices).values().get(10, TimeUnit.SECONDS)).as("the resource's ACL stays").hasSize(1);
            }

            // A new password in alice's Secret takes effect at once too: the change of the Secret brings a pass.
            Secret secret = kubectl.secrets().inNamespace(NS).withName("alice").get();
            String oldPassword = password("alice");
            secret.getData().put("password", Base64.getEncoder().encodeToString("a-new-password-for-alice".getBytes(StandardCharsets.UTF_8)));
            kubectl.secrets().inNamespace(NS).resource(secret).update();
            Properties renewed = client(cluster, "alice", "a-new-password-for-alice");
            await("the new password accepted", 10, () -> send(renewed, "orders") instanceof AuthorizationException);
            assertThat(send(client(cluster, "alice", oldPassword), "orders")).as("the old password").isInstanceOf(SaslAuthenticationException.class);

            // The resource goes: alice no longer logs in once the controller removed her.
            kubectl.genericKubernetesResources(KAFKA_USERS).inNamespace(NS).withName("alice").delete();
            await("alice's login refused", 30, () -> send(renewed, "orders") instanceof SaslAuthenticationException);
            assertThat(send(admin, "orders")).as("the other user is untouched").isNull();
        }
    }
}
