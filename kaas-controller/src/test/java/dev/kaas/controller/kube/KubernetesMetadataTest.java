package dev.kaas.controller.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.cluster.LeaseFencedException;
import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.cluster.ProducerIdStore;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.model.TopicSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubernetesMetadataTest {
    private static final long LEASE_MS = 3000;

    @TempDir
    Path data;

    private KubeTestServer kube;
    private KubernetesClient clientA;
    private KubernetesClient clientB;
    private KubernetesMetadata a;
    private KubernetesMetadata b;

    @BeforeEach
    void setUp() throws Exception {
        kube = new KubeTestServer();
        clientA = kube.client();
        clientB = kube.client();
        a = new KubernetesMetadata(clientA, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
        b = new KubernetesMetadata(clientB, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
    }

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
        clientA.close();
        clientB.close();
        kube.close();
    }

    private Lease leaseResource() {
        return clientA.leases().inNamespace("kaas").withName("kaas-controller").get();
    }

    @Test
    void oneControllerHoldsTheLeaseAndTheOtherTakesItOnlyOnceItWentUnrenewedForItsDuration() throws Exception {
        LeaseRecord first = a.lease().acquireOrRenew("a", 10_000, LEASE_MS);
        LeaseRecord seenByB = b.lease().acquireOrRenew("b", 10_000, LEASE_MS);

        assertThat(first.heldBy("a", 10_000)).isTrue();
        assertThat(first.transitions()).isEqualTo(1);
        assertThat(seenByB.heldBy("b", 10_000)).isFalse();
        assertThat(leaseResource().getSpec().getHolderIdentity()).isEqualTo("a");

        // a renews: b's clock restarts from the change it sees, whatever the record's timestamps say.
        assertThat(a.lease().acquireOrRenew("a", 12_000, LEASE_MS).transitions()).isEqualTo(1);
        assertThat(b.lease().acquireOrRenew("b", 12_500, LEASE_MS).heldBy("b", 12_500)).isFalse();
        assertThat(b.lease().acquireOrRenew("b", 12_500 + LEASE_MS - 1, LEASE_MS).heldBy("b", 12_500 + LEASE_MS - 1)).isFalse();

        LeaseRecord taken = b.lease().acquireOrRenew("b", 12_500 + LEASE_MS, LEASE_MS);

        assertThat(taken.heldBy("b", 12_500 + LEASE_MS)).isTrue();
        assertThat(taken.transitions()).isEqualTo(2);
        assertThat(leaseResource().getSpec().getLeaseTransitions()).isEqualTo(2);
        assertThat(leaseResource().getSpec().getHolderIdentity()).isEqualTo("b");
        assertThat(a.lease().acquireOrRenew("a", 12_500 + LEASE_MS, LEASE_MS).holder()).isEqualTo("b");
    }

    @Test
    void aReleasedLeaseIsTakenAtOnceUnderTheNextEpoch() throws Exception {
        a.lease().acquireOrRenew("a", 10_000, LEASE_MS);
        b.lease().acquireOrRenew("b", 10_000, LEASE_MS);

        a.lease().release("a");
        LeaseRecord taken = b.lease().acquireOrRenew("b", 10_001, LEASE_MS);

        assertThat(taken.heldBy("b", 10_001)).isTrue();
        assertThat(taken.transitions()).isEqualTo(2);
    }

    @Test
    void aDeposedControllerCanWriteNothing() throws Exception {
        long epochA = a.lease().acquireOrRenew("a", 10_000, LEASE_MS).transitions();
        a.assignments().store(epochA, "{\"version\":1}");
        a.topics().store(epochA, List.of(new TopicSpec("t", "T1", 1, Map.of())));
        a.lease().release("a");
        long epochB = b.lease().acquireOrRenew("b", 10_001, LEASE_MS).transitions();

        assertThatThrownBy(() -> a.assignments().store(epochA, "{\"version\":2}")).isInstanceOf(LeaseFencedException.class);
        assertThatThrownBy(() -> a.topics().store(epochA, List.of())).isInstanceOf(LeaseFencedException.class);
        assertThatThrownBy(() -> a.producerIds().allocateBlock(epochA)).isInstanceOf(LeaseFencedException.class);
        assertThat(a.topics().topics()).extracting(TopicSpec::topicId).containsExactly("T1");

        b.assignments().store(epochB, "{\"version\":3}");
        assertThat(Files.readString(data.resolve("__cluster/assignments").resolve(String.format("%020d.json", epochB))))
                .isEqualTo("{\"version\":3}");
    }

    @Test
    void aControllerDeposedBetweenItsCheckAndItsRenameNeverHidesItsSuccessorsAssignment() throws Exception {
        long epochA = a.lease().acquireOrRenew("a", 10_000, LEASE_MS).transitions();
        a.lease().release("a");
        long epochB = b.lease().acquireOrRenew("b", 10_001, LEASE_MS).transitions();
        b.assignments().store(epochB, dev.kaas.common.fs.Json.string(new dev.kaas.common.model.Assignment(7, epochB, "c",
                List.of(), List.of(), List.of(), List.of())));

        // a passed its lease check just before b took over: the file step refuses it too...
        byte[] stale = dev.kaas.common.fs.Json.bytes(new dev.kaas.common.model.Assignment(8, epochA, "c",
                List.of(), List.of(), List.of(), List.of()));
        assertThatThrownBy(() -> dev.kaas.common.cluster.EpochAssignmentFiles.write(Disk.SYSTEM, data.resolve("__cluster"), epochA, stale))
                .isInstanceOf(LeaseFencedException.class);
        // ...and had it renamed in between, its file is its own epoch's, below the successor's.
        dev.kaas.common.fs.AtomicFiles.write(data.resolve("__cluster/assignments").resolve(String.format("%020d.json", epochA)), stale);

        assertThat(b.assignments().load()).get().extracting(x -> x.version()).isEqualTo(7L);
    }

    @Test
    void aLostLeaseIsRecreatedAboveEveryEpochTheVolumeHasSeen() throws Exception {
        dev.kaas.common.cluster.EpochAssignmentFiles.write(Disk.SYSTEM, data.resolve("__cluster"), 57,
                dev.kaas.common.fs.Json.bytes(new dev.kaas.common.model.Assignment(3, 57, "c", List.of(), List.of(), List.of(), List.of())));

        LeaseRecord fresh = a.lease().acquireOrRenew("a", 10_000, LEASE_MS);

        assertThat(fresh.transitions()).isEqualTo(58);
        assertThat(leaseResource().getSpec().getLeaseTransitions()).isEqualTo(58);
    }

    @Test
    void producerIdBlocksAreHandedOutOnceEachAndTheNextStartIsKeptInTheConfigMap() throws Exception {
        long epochA = a.lease().acquireOrRenew("a", 10_000, LEASE_MS).transitions();
        Set<Long> starts = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            assertThat(starts.add(a.producerIds().allocateBlock(epochA))).isTrue();
        }

        assertThat(starts).containsExactlyInAnyOrder(0L, 1000L, 2000L, 3000L, 4000L);
        assertThat(clientA.configMaps().inNamespace("kaas").withName(KubernetesMetadata.PRODUCER_IDS).get().getData())
                .containsEntry(KubernetesMetadata.NEXT_BLOCK, Long.toString(5 * ProducerIdStore.BLOCK_SIZE));
    }

    @Test
    void theClusterIdIsCreatedOnceOnTheVolumeAndKeptByEverySuccessor() throws Exception {
        long epochA = a.lease().acquireOrRenew("a", 10_000, LEASE_MS).transitions();
        String id = a.clusterId(epochA);
        a.lease().release("a");
        long epochB = b.lease().acquireOrRenew("b", 10_001, LEASE_MS).transitions();

        assertThat(b.clusterId(epochB)).isEqualTo(id);
        assertThat(Files.readString(data.resolve("__cluster/cluster.id")).trim()).isEqualTo(id);
        assertThat(dev.kaas.common.cluster.StandaloneMetadata.readClusterId(data)).isEqualTo(id);
        try (var files = Files.list(data.resolve("__cluster"))) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".cluster.id"));
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(30)
    void aRenewalAgainstAnApiServerThatNeverAnswersFailsWithinAThirdOfTheLease() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                List<java.net.Socket> held = new java.util.ArrayList<>();
                try {
                    while (true) {
                        held.add(silent.accept());
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            var config = new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("http://127.0.0.1:" + silent.getLocalPort())
                    .withRequestTimeout(60_000).withRequestRetryBackoffLimit(0).build();
            try (KubernetesClient hanging = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build()) {
                KubernetesMetadata m = new KubernetesMetadata(hanging, "kaas", "kaas-controller", data, Disk.SYSTEM, 2_000);
                long t0 = System.nanoTime();

                assertThatThrownBy(() -> m.lease().acquireOrRenew("a", 10_000, LEASE_MS)).isInstanceOf(java.io.IOException.class)
                        .hasMessageContaining("no answer");

                long ms = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(ms).as("a renewal gives up within a third of the lease").isLessThan(LEASE_MS / 3 + 500);
                assertThatThrownBy(() -> m.producerIds().allocateBlock(1)).isInstanceOf(java.io.IOException.class);
                m.close();
            }
        }
    }

    @Test
    void resourceNamesForKafkaNamesThatAreNotKubernetesNamesAreDistinct() {
        assertThat(KafkaTopicStore.resourceName("orders.v1")).isEqualTo("orders.v1");
        String upper = KafkaTopicStore.resourceName("Orders");
        String lower = KafkaTopicStore.resourceName("orders_");
        assertThat(upper).startsWith("orders---").isNotEqualTo(KafkaTopicStore.resourceName("ORDERS"));
        assertThat(lower).startsWith("orders---");
        assertThat(KafkaTopicStore.resourceName("__" + "x".repeat(247)).length()).isLessThanOrEqualTo(253);
        assertThat(KafkaTopicStore.resourceName("___")).startsWith("topic---");
    }
}
