package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes binding with real processes: controllers with {@code kaas.controller.metadata=kubernetes}
 * against fabric8's API server double on loopback (CRUD mode, watches), and real brokers. The
 * double's state lives in its dispatcher, so stopping the server and starting another on the same
 * port with the same dispatcher is an API server restart that keeps etcd.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class KubernetesIT {
    static final String NS = "kaas";
    static final ResourceDefinitionContext KAFKA_TOPICS = new ResourceDefinitionContext.Builder()
            .withGroup("kaas.dev").withVersion("v1").withKind("KafkaTopic").withPlural("kafkatopics").withNamespaced(true).build();

    @TempDir
    Path tmp;

    private final KubernetesCrudDispatcher etcd = new KubernetesCrudDispatcher();
    private KubernetesMockServer apiServer;
    private int apiPort;
    private KubernetesClient kubectl;

    @BeforeEach
    void startApiServer() throws Exception {
        apiPort = KaasCluster.freePort();
        apiServer = newApiServer();
        kubectl = apiServer.createClient();
        // Both CRDs, as the manifests install them: the controller reconciles users too.
        for (String crd : List.of("kafkatopics.kaas.dev-v1.yml", "kafkausers.kaas.dev-v1.yml")) {
            try (InputStream in = Files.newInputStream(KaasCluster.ROOT.resolve("k8s/base/crd").resolve(crd))) {
                kubectl.apiextensions().v1().customResourceDefinitions().load(in).create();
            }
        }
    }

    private KubernetesMockServer newApiServer() throws Exception {
        KubernetesMockServer s = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), etcd, false);
        s.init(InetAddress.getLoopbackAddress(), apiPort);
        return s;
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

    private Map<String, String> controllerProps() {
        return Map.of(
                "kaas.controller.metadata", "kubernetes",
                "kaas.controller.kubernetes.namespace", NS,
                "kaas.controller.lease-duration", "3s",
                // fabric8's own keys: Quarkus fixes its api-server-url at build time.
                "kubernetes.master", "http://127.0.0.1:" + apiPort,
                "kubernetes.namespace", NS);
    }

    private Lease lease() {
        return kubectl.leases().inNamespace(NS).withName("kaas-controller").get();
    }

    private List<GenericKubernetesResource> kafkaTopics() {
        return kubectl.genericKubernetesResources(KAFKA_TOPICS).inNamespace(NS).list().getItems();
    }

    private GenericKubernetesResource kafkaTopic(String name) {
        return kubectl.genericKubernetesResources(KAFKA_TOPICS).inNamespace(NS).withName(name).get();
    }

    private void applyKafkaTopic(String name, Map<String, Object> spec) {
        kubectl.genericKubernetesResources(KAFKA_TOPICS).inNamespace(NS).resource(new GenericKubernetesResourceBuilder()
                .withApiVersion("kaas.dev/v1").withKind("KafkaTopic").withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .addToAdditionalProperties("spec", spec).build()).create();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> status(GenericKubernetesResource r) {
        Object s = r == null ? null : r.getAdditionalProperties().get("status");
        return s == null ? Map.of() : (Map<String, Object>) s;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> readyCondition(GenericKubernetesResource r) {
        Object conditions = status(r).get("conditions");
        if (conditions == null) {
            return Map.of();
        }
        return ((List<Map<String, Object>>) conditions).stream().filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    private static void await(String what, long seconds, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            try {
                if (done.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // a restarting API server or broker: ask again
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not within " + seconds + " s: " + what);
    }

    /** The last lines of a process log, for a failure message: the test's directory is gone after it. */
    /** The controller loop's stack, where a stuck pass shows. */
    private static String threads(long pid) {
        String out = KaasCluster.threadDump(pid);
        int i = out.indexOf("\"kaas-controller-loop\"");
        return i < 0 ? out.substring(0, Math.min(out.length(), 3000)) : out.substring(i, Math.min(out.length(), i + 4000));
    }

    private static List<Path> topicDirs(Path data, String topic) throws Exception {
        try (var list = Files.list(data)) {
            return list.filter(p -> p.getFileName().toString().startsWith(topic + "-")).toList();
        }
    }

    @FunctionalInterface
    interface Body {
        void run(KaasMultiCluster cluster, Admin admin) throws Exception;
    }

    /** Runs {@code body} on a fresh cluster; a failure carries the processes' log tails (the directory is gone after). */
    private void withCluster(Path data, int brokers, int controllers, Body body) throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(data, brokers, controllers, Map.of(), controllerProps());
             Admin admin = Admin.create(cluster.clientProps())) {
            try {
                body.run(cluster, admin);
            } catch (Throwable t) {
                StringBuilder logs = new StringBuilder(String.valueOf(t.getMessage()));
                for (int j = 1; j <= controllers; j++) {
                    logs.append("\n--- controller ").append(j).append(":\n").append(KaasCluster.tail(cluster.controllerLog(j), 40));
                }
                logs.append("\n--- controller 1 threads:\n").append(threads(cluster.controllerPid(1)));
                for (int i = 1; i <= brokers; i++) {
                    logs.append("\n--- broker ").append(i).append(":\n").append(KaasCluster.tail(cluster.brokerLog(i), 25));
                }
                throw new AssertionError(logs.toString(), t);
            }
        }
    }

    @Test
    void theLeaseMovesWhenItsHolderIsKilledAndProducersLoseNoAcknowledgedRecord() throws Exception {
        withCluster(tmp.resolve("data"), 2, 2, (cluster, admin) -> {
            Lease first = lease();
            assertThat(first.getSpec().getHolderIdentity()).startsWith("controller-1#");
            assertThat(cluster.controllerReady(2)).as("the second controller stands by").isFalse();
            int epoch = first.getSpec().getLeaseTransitions();

            applyKafkaTopic("orders", Map.of("partitions", 4));
            await("KafkaTopic orders ready", 30, () -> "True".equals(readyCondition(kafkaTopic("orders")).get("status")));
            ClusterIT.awaitLeaders(admin, "orders", l -> l.size() == 4 && !l.containsValue(-1));

            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "orders", 4, 300)) {
                ClusterITAcks.await(load, 200);
                cluster.killController(1);
                long t0 = System.nanoTime();
                await("the standby holds the lease", 30, () -> lease().getSpec().getHolderIdentity().startsWith("controller-2#")
                        && cluster.controllerReady(2));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                System.out.printf("standby leads %d ms after kill -9 of the lease holder (lease 3 s, renew every 1 s)%n", ms);
                assertThat(ms).as("lease duration + renew period + start-up").isLessThan(3_000 + 1_000 + 3_000);
                assertThat(lease().getSpec().getLeaseTransitions()).isGreaterThan(epoch);
                ClusterITAcks.await(load, load.acked() + 200);

                // The new leader serves admin writes: through the Kafka API, as a resource.
                admin.createTopics(List.of(new NewTopic("after", 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
                await("KafkaTopic for 'after'", 30, () -> kafkaTopic("after") != null
                        && "True".equals(readyCondition(kafkaTopic("after")).get("status")));
                ClusterIT.awaitLeaders(admin, "after", l -> !l.containsValue(-1));
                load.stop();
                load.verify(cluster.clientProps());
            }
        });
    }

    @Test
    void topicsDeclaredEitherWayAreServedDeletedEitherWayAndInvalidOnesChangeNothing() throws Exception {
        Path data = tmp.resolve("data");
        withCluster(data, 1, 1, (cluster, admin) -> {
            // kubectl apply → a topic with its partitions, its id in the status.
            applyKafkaTopic("from-kubectl", Map.of("partitions", 3, "config", Map.of("retention.ms", 3_600_000)));
            await("from-kubectl ready", 30, () -> "True".equals(readyCondition(kafkaTopic("from-kubectl")).get("status")));
            // Ready means the brokers were sent it (kubernetes.md); the broker serves it once it has opened the partitions.
            await("from-kubectl served", 30, () -> {
                try {
                    admin.describeTopics(List.of("from-kubectl")).allTopicNames().get(10, TimeUnit.SECONDS);
                    return true;
                } catch (Exception notYet) {
                    return false;
                }
            });
            String id = String.valueOf(status(kafkaTopic("from-kubectl")).get("topicId"));
            var described = admin.describeTopics(List.of("from-kubectl")).allTopicNames().get(30, TimeUnit.SECONDS).get("from-kubectl");
            assertThat(described.partitions()).hasSize(3);
            assertThat(described.topicId().toString()).isEqualTo(id);

            // The Kafka API → a resource with that spec.
            admin.createTopics(List.of(new NewTopic("From_Kafka", 2, (short) 1)
                    .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
            GenericKubernetesResource created = kafkaTopics().stream()
                    .filter(r -> "From_Kafka".equals(status(r).get("topicName"))).findFirst().orElseThrow();
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) created.getAdditionalProperties().get("spec");
            assertThat(spec).containsEntry("topicName", "From_Kafka").containsEntry("partitions", 2)
                    .containsEntry("config", Map.of("cleanup.policy", "compact"));
            assertThat(readyCondition(created)).containsEntry("status", "True");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
                p.send(new ProducerRecord<>("from-kubectl", 0, null, "x")).get(30, TimeUnit.SECONDS);
                p.send(new ProducerRecord<>("From_Kafka", 0, "key", "y")).get(30, TimeUnit.SECONDS);
            }
            assertThat(topicDirs(data, "from-kubectl")).hasSize(1);
            assertThat(topicDirs(data, "From_Kafka")).hasSize(1);

            // Invalid declarations: not ready, with the reason; nothing on disk, nothing served.
            applyKafkaTopic("bad-config", Map.of("partitions", 1, "config", Map.of("no.such.config", "1")));
            applyKafkaTopic("bad-partitions", Map.of("partitions", 0));
            applyKafkaTopic("bad-name", Map.of("topicName", "no/slash", "partitions", 1));
            await("invalid resources not ready", 30, () -> "InvalidConfig".equals(readyCondition(kafkaTopic("bad-config")).get("reason"))
                    && "InvalidPartitions".equals(readyCondition(kafkaTopic("bad-partitions")).get("reason"))
                    && "InvalidTopicName".equals(readyCondition(kafkaTopic("bad-name")).get("reason")));
            assertThat(readyCondition(kafkaTopic("bad-config")).get("message")).asString().contains("no.such.config");
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).containsExactlyInAnyOrder("from-kubectl", "From_Kafka");
            assertThat(topicDirs(data, "bad-")).isEmpty();

            // Delete either way: the topic goes, and its directory with it.
            kubectl.genericKubernetesResources(KAFKA_TOPICS).inNamespace(NS).withName("from-kubectl").delete();
            admin.deleteTopics(List.of("From_Kafka")).all().get(30, TimeUnit.SECONDS);
            await("both topics gone", 30, () -> {
                try {
                    return admin.listTopics().names().get(10, TimeUnit.SECONDS).isEmpty();
                } catch (Exception e) {
                    return false;
                }
            });
            await("the Kafka API's delete removed the resource", 30,
                    () -> kafkaTopics().stream().noneMatch(r -> "From_Kafka".equals(status(r).get("topicName"))));
            await("directories removed", 30, () -> {
                try {
                    return topicDirs(data, "from-kubectl").isEmpty() && topicDirs(data, "From_Kafka").isEmpty();
                } catch (Exception e) {
                    return false;
                }
            });
        });
    }

    @Test
    void brokersKeepServingWhileTheApiServerIsDownAndTheControllerLeadsAgainWhenItReturns() throws Exception {
        withCluster(tmp.resolve("data"), 1, 1, (cluster, admin) -> {
            applyKafkaTopic("steady", Map.of("partitions", 2));
            await("steady ready", 30, () -> "True".equals(readyCondition(kafkaTopic("steady")).get("status")));
            ClusterIT.awaitLeaders(admin, "steady", l -> l.size() == 2 && !l.containsValue(-1));
            int epoch = lease().getSpec().getLeaseTransitions();

            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "steady", 2, 200)) {
                ClusterITAcks.await(load, 100);
                kubectl.close();
                apiServer.destroy();
                // The controller cannot renew: it steps down (not ready) within two thirds of the lease.
                await("the controller stepped down", 15, () -> !cluster.controllerReady(1));
                long acked = load.acked();
                ClusterITAcks.await(load, acked + 300);

                apiServer = newApiServer();
                kubectl = apiServer.createClient();
                await("the controller leads again", 30, () -> cluster.controllerReady(1));
                assertThat(lease().getSpec().getLeaseTransitions()).as("a new term, a new epoch").isGreaterThan(epoch);
                ClusterITAcks.await(load, load.acked() + 100);
                admin.createTopics(List.of(new NewTopic("after-outage", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
                await("after-outage declared", 30, () -> kafkaTopics().stream().anyMatch(r -> "after-outage".equals(status(r).get("topicName"))));
                load.stop();
                assertThat(load.failures).as("no produce failed while the API server was down").isEmpty();
                load.verify(cluster.clientProps());
            }
        });
    }
}
