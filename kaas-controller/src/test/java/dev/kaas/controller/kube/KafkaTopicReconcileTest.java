package dev.kaas.controller.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.fs.Disk;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import dev.kaas.controller.cluster.ControllerCore;
import dev.kaas.proto.CreateTopicsCall;
import dev.kaas.proto.DeleteTopicsCall;
import dev.kaas.proto.TopicConfig;
import dev.kaas.proto.TopicRef;
import dev.kaas.proto.TopicToCreate;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The controller's core on the Kubernetes binding: KafkaTopic resources in, catalog and statuses out. */
class KafkaTopicReconcileTest {
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
        core = newCore("c1", metadata);
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

    private ControllerCore newCore(String holder, KubernetesMetadata m) {
        return new ControllerCore(m, clock::get, new ControllerCore.Settings(holder, 6000, 9000, 0, 1, 1000, 32));
    }

    private KafkaTopic apply(String name, String topicName, Integer partitions, Map<String, Object> config) {
        KafkaTopicSpec spec = new KafkaTopicSpec();
        spec.setTopicName(topicName);
        spec.setPartitions(partitions);
        spec.setConfig(config);
        KafkaTopic existing = get(name);
        if (existing != null) {
            existing.setSpec(spec);
            return user.resource(existing).update();
        }
        KafkaTopic t = new KafkaTopic();
        t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("kaas").build());
        t.setSpec(spec);
        return user.resource(t).create();
    }

    private KafkaTopic get(String name) {
        return user.resources(KafkaTopic.class).inNamespace("kaas").withName(name).get();
    }

    private static Condition ready(KafkaTopic t) {
        return KafkaTopicStore.readyCondition(t.getStatus());
    }

    private TopicAssignment published(String topic) {
        Assignment a = core.current();
        return a.topicByName(topic).orElseThrow(() -> new AssertionError("topic " + topic + " not published in " + a));
    }

    @Test
    void aKafkaTopicResourceBecomesATopicWithItsIdInTheStatus() throws Exception {
        apply("orders", null, 3, Map.of("retention.ms", 86_400_000));

        core.reconcileDeclarations();

        KafkaTopic t = get("orders");
        assertThat(ready(t).getStatus()).isEqualTo("True");
        assertThat(t.getStatus().getTopicId()).isNotBlank();
        assertThat(t.getStatus().getObservedGeneration()).isEqualTo(t.getMetadata().getGeneration());
        assertThat(t.getStatus().getPartitions()).isEqualTo(3);
        assertThat(published("orders").topic()).isEqualTo(new TopicSpec("orders", t.getStatus().getTopicId(), 3,
                Map.of("retention.ms", "86400000")));
        assertThat(published("orders").partitions()).hasSize(3);
    }

    @Test
    void reconcilingAgainWritesNothingAndNeverRotatesTheId() throws Exception {
        apply("orders", null, 1, null);
        core.reconcileDeclarations();
        KafkaTopic before = get("orders");

        core.reconcileDeclarations();
        core.reconcileDeclarations();

        KafkaTopic after = get("orders");
        assertThat(after.getMetadata().getResourceVersion()).isEqualTo(before.getMetadata().getResourceVersion());
        assertThat(after.getStatus().getTopicId()).isEqualTo(before.getStatus().getTopicId());
    }

    @Test
    void createTopicsThroughTheKafkaApiMakesAResourceWithThatSpec() throws Exception {
        var reply = core.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("Payments_EU")
                .setNumPartitions(4).addConfigs(TopicConfig.newBuilder().setName("cleanup.policy").setValue("compact"))).build());
        String id = reply.getResults(0).getTopicId();

        KafkaTopic t = user.resources(KafkaTopic.class).inNamespace("kaas").list().getItems().get(0);
        assertThat(t.getMetadata().getName()).startsWith("payments-eu---");
        assertThat(t.getSpec().getTopicName()).isEqualTo("Payments_EU");
        assertThat(t.getSpec().getPartitions()).isEqualTo(4);
        assertThat(t.getSpec().getConfig()).containsEntry("cleanup.policy", "compact");
        assertThat(t.getStatus().getTopicId()).isEqualTo(id);
        assertThat(ready(t).getStatus()).isEqualTo("True");

        core.reconcileDeclarations();
        assertThat(published("Payments_EU").topic().topicId()).isEqualTo(id);
        assertThat(get(t.getMetadata().getName()).getMetadata().getResourceVersion()).isEqualTo(t.getMetadata().getResourceVersion());
    }

    /** CreatePartitions through the Kafka API raises the resource's spec, so the next reconcile agrees with it. */
    @Test
    void createPartitionsThroughTheKafkaApiRaisesTheResourcesSpec() throws Exception {
        core.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("grow").setNumPartitions(2)).build());
        var reply = core.createPartitions(dev.kaas.proto.CreatePartitionsCall.newBuilder()
                .addTopics(dev.kaas.proto.PartitionsToAdd.newBuilder().setName("grow").setCount(6)).build());
        assertThat(reply.getResults(0).getErrorCode()).isZero();

        KafkaTopic t = user.resources(KafkaTopic.class).inNamespace("kaas").list().getItems().get(0);
        assertThat(t.getSpec().getPartitions()).isEqualTo(6);
        assertThat(t.getStatus().getPartitions()).isEqualTo(6);
        assertThat(ready(t).getStatus()).isEqualTo("True");
        core.reconcileDeclarations();
        assertThat(published("grow").partitions()).hasSize(6);
        assertThat(ready(get(t.getMetadata().getName())).getStatus()).as("not read as a decrease").isEqualTo("True");
    }

    /** AlterConfigs through the Kafka API rewrites the resource's config, so the next reconcile agrees with it. */
    @Test
    void alterConfigsThroughTheKafkaApiRewritesTheResourcesConfig() throws Exception {
        core.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("tuned").setNumPartitions(1)
                .addConfigs(TopicConfig.newBuilder().setName("retention.ms").setValue("1000"))).build());
        var reply = core.alterTopicConfigs(dev.kaas.proto.AlterTopicConfigsCall.newBuilder().addTopics(
                dev.kaas.proto.TopicConfigChange.newBuilder().setName("tuned")
                        .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("retention.ms").setOp(1))
                        .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("cleanup.policy").setOp(0).setValue("compact"))).build());
        assertThat(reply.getResults(0).getErrorCode()).isZero();

        KafkaTopic t = user.resources(KafkaTopic.class).inNamespace("kaas").list().getItems().get(0);
        assertThat(t.getSpec().getConfig()).isEqualTo(Map.of("cleanup.policy", "compact"));
        assertThat(t.getStatus().getConfig()).isEqualTo(Map.of("cleanup.policy", "compact"));
        core.reconcileDeclarations();
        assertThat(published("tuned").topic().configs()).as("the reconcile keeps the altered config")
                .isEqualTo(Map.of("cleanup.policy", "compact"));
        assertThat(ready(get(t.getMetadata().getName())).getStatus()).isEqualTo("True");
    }

    /** A resource with no spec at all (every field defaulted) gets one when AlterConfigs writes its config. */
    @Test
    void alterConfigsOnAResourceWithoutASpecWritesOne() throws Exception {
        KafkaTopic bare = new KafkaTopic();
        bare.setMetadata(new ObjectMetaBuilder().withName("bare").withNamespace("kaas").build());
        user.resource(bare).create();
        core.reconcileDeclarations();
        assertThat(published("bare").partitions()).isNotEmpty();

        var reply = core.alterTopicConfigs(dev.kaas.proto.AlterTopicConfigsCall.newBuilder().addTopics(
                dev.kaas.proto.TopicConfigChange.newBuilder().setName("bare")
                        .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("retention.ms").setOp(0).setValue("1000"))).build());

        assertThat(reply.getResults(0).getErrorCode()).isZero();
        assertThat(get("bare").getSpec().getConfig()).isEqualTo(Map.of("retention.ms", "1000"));
    }

    /** A resource the user edited (here to an invalid config) is the user's word: an API change does not overwrite it. */
    @Test
    void anEditedResourcesConfigIsNotOverwrittenByAnApiChange() throws Exception {
        apply("mine", null, 1, Map.of("retention.ms", "1000"));
        core.reconcileDeclarations();
        apply("mine", null, 1, Map.of("retention.ms", "not a number"));
        core.reconcileDeclarations();
        assertThat(ready(get("mine")).getReason()).isEqualTo("InvalidConfig");

        core.alterTopicConfigs(dev.kaas.proto.AlterTopicConfigsCall.newBuilder().addTopics(
                dev.kaas.proto.TopicConfigChange.newBuilder().setName("mine")
                        .addOps(dev.kaas.proto.ConfigOp.newBuilder().setName("segment.bytes").setOp(0).setValue("100000"))).build());

        assertThat(get("mine").getSpec().getConfig()).isEqualTo(Map.of("retention.ms", "not a number"));
    }

    @Test
    void deletingTheResourceDeletesTheTopicAndDeleteTopicsDeletesTheResource() throws Exception {
        apply("a", null, 1, null);
        apply("b", null, 1, null);
        core.reconcileDeclarations();

        user.resources(KafkaTopic.class).inNamespace("kaas").withName("a").delete();
        core.reconcileDeclarations();
        var reply = core.deleteTopics(DeleteTopicsCall.newBuilder().addTopics(TopicRef.newBuilder().setName("b")).build());

        assertThat(reply.getResults(0).getErrorCode()).isEqualTo(Errors.NONE.code());
        assertThat(core.current().topics()).isEmpty();
        assertThat(user.resources(KafkaTopic.class).inNamespace("kaas").list().getItems()).isEmpty();
    }

    @Test
    void invalidResourcesAreNotReadyWithTheReasonAndChangeNothing() throws Exception {
        apply("bad-name", "no/slashes", 1, null);
        apply("zero", null, 0, null);
        apply("unknown-config", null, 1, Map.of("no.such.config", "x"));
        apply("out-of-range", null, 1, Map.of("segment.bytes", 1));

        core.reconcileDeclarations();

        assertThat(ready(get("bad-name")).getReason()).isEqualTo("InvalidTopicName");
        assertThat(ready(get("zero")).getReason()).isEqualTo("InvalidPartitions");
        assertThat(ready(get("unknown-config")).getReason()).isEqualTo("InvalidConfig");
        assertThat(ready(get("unknown-config")).getMessage()).contains("no.such.config");
        assertThat(ready(get("out-of-range")).getReason()).isEqualTo("InvalidConfig");
        for (String name : List.of("bad-name", "zero", "unknown-config", "out-of-range")) {
            assertThat(ready(get(name)).getStatus()).as(name).isEqualTo("False");
            assertThat(get(name).getStatus().getTopicId()).as(name).isNull();
        }
        assertThat(core.current().topics()).isEmpty();
        assertThat(metadata.topics().topics()).isEmpty();
    }

    @Test
    void decreasingPartitionsIsRefusedAndGrowingIsServed() throws Exception {
        apply("orders", null, 3, null);
        core.reconcileDeclarations();
        String id = get("orders").getStatus().getTopicId();

        apply("orders", null, 2, null);
        core.reconcileDeclarations();

        KafkaTopic shrunk = get("orders");
        assertThat(ready(shrunk).getStatus()).isEqualTo("False");
        assertThat(ready(shrunk).getReason()).isEqualTo("PartitionsDecreased");
        assertThat(shrunk.getStatus().getPartitions()).isEqualTo(3);
        assertThat(published("orders").partitions()).hasSize(3);

        apply("orders", null, 5, null);
        core.reconcileDeclarations();

        KafkaTopic grown = get("orders");
        assertThat(ready(grown).getStatus()).isEqualTo("True");
        assertThat(grown.getStatus().getTopicId()).isEqualTo(id);
        assertThat(published("orders").partitions()).hasSize(5);
        // The refusal and the recovery are Events on the resource (its first acceptance is none).
        ReadyEvents events = ((KafkaTopicStore) metadata.topics()).events();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!events.idle() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(user.v1().events().inNamespace("kaas").list().getItems()).filteredOn(e -> "orders".equals(e.getInvolvedObject().getName()))
                .extracting(e -> e.getInvolvedObject().getKind() + " " + e.getType() + " " + e.getReason())
                .containsExactlyInAnyOrder("KafkaTopic Warning PartitionsDecreased", "KafkaTopic Normal " + ready(grown).getReason());
    }

    @Test
    void aSuccessorControllerReadsTheAcceptedCatalogBackFromTheStatuses() throws Exception {
        apply("orders", null, 3, null);
        core.reconcileDeclarations();
        apply("orders", null, 1, null);
        core.reconcileDeclarations();
        String id = get("orders").getStatus().getTopicId();
        core.loseLeadership("test");
        metadata.lease().release("c1");

        try (KubernetesClient other = kube.client()) {
            KubernetesMetadata m2 = new KubernetesMetadata(other, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
            ControllerCore successor = newCore("c2", m2);
            successor.maintainLease();

            assertThat(successor.isLeader()).isTrue();
            assertThat(successor.epoch()).isGreaterThan(1);
            assertThat(successor.current().topicByName("orders").orElseThrow().topic())
                    .isEqualTo(new TopicSpec("orders", id, 3, Map.of()));
            m2.close();
        }
    }

    @Test
    void aRefusedEditKeepsTheIdInTheStatusAndANullConfigValueIsRefusedNotACrash() throws Exception {
        apply("orders", null, 1, null);
        core.reconcileDeclarations();
        String id = get("orders").getStatus().getTopicId();
        java.util.Map<String, Object> nullValue = new java.util.HashMap<>();
        nullValue.put("retention.ms", null);

        apply("orders", null, 1, nullValue);
        core.reconcileDeclarations();

        KafkaTopic t = get("orders");
        assertThat(ready(t).getReason()).isEqualTo("InvalidConfig");
        assertThat(t.getStatus().getTopicId()).isEqualTo(id);
        assertThat(published("orders").topic().configs()).isEmpty();
    }

    @Test
    void createTopicsNeverDeletesOrRecreatesAResourceItIsNotAbout() throws Exception {
        apply("keep", null, 1, null);
        apply("gone", null, 1, null);
        core.reconcileDeclarations();
        // A user deletes "gone"; before the reconcile that follows, a CreateTopics stores the catalog.
        user.resources(KafkaTopic.class).inNamespace("kaas").withName("gone").delete();

        core.createTopics(CreateTopicsCall.newBuilder().addTopics(TopicToCreate.newBuilder().setName("other").setNumPartitions(1)).build());

        assertThat(get("gone")).as("not re-created").isNull();
        assertThat(get("keep")).isNotNull();
        core.reconcileDeclarations();
        assertThat(core.current().topicByName("gone")).isEmpty();
        assertThat(core.current().topicByName("keep")).isPresent();
        assertThat(core.current().topicByName("other")).isPresent();
    }

    @Test
    void aReconcileOfManyNewResourcesPausesForTheLeaseAndFinishesInLaterPasses() throws Exception {
        for (int i = 0; i < 30; i++) {
            apply("bulk-" + i, null, 1, null);
        }
        // A clock that moves 50 ms per request the API server answers: the pass's budget (a third of
        // the 6 s lease) runs out after about 20 status writes (a lease read and a status write each).
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
        assertThat(slow.current().topics()).hasSize(30);
        assertThat(user.resources(KafkaTopic.class).inNamespace("kaas").list().getItems())
                .allSatisfy(t -> assertThat(ready(t).getStatus()).isEqualTo("True"))
                .extracting(t -> t.getStatus().getTopicId()).doesNotHaveDuplicates();
    }
}
