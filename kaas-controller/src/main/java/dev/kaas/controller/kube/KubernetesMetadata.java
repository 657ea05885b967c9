package dev.kaas.controller.kube;

import dev.kaas.common.cluster.AssignmentStore;
import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.cluster.ControllerLease;
import dev.kaas.common.cluster.EpochAssignmentFiles;
import dev.kaas.common.cluster.LeaseFencedException;
import dev.kaas.common.cluster.ProducerIdStore;
import dev.kaas.common.cluster.TopicCatalog;
import dev.kaas.common.cluster.UserCatalog;
import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.common.Uuid;

/**
 * The Kubernetes binding of {@link ClusterMetadata} (see {@code src/docs/kubernetes.md}):
 *
 * <pre>
 * Lease      kaas-controller            holder, renewTime, leaseTransitions = controller epoch
 * KafkaTopic &lt;one per topic&gt;          spec declared by users or by the Kafka API; status accepted by the controller
 * KafkaUser  &lt;one per user&gt;           spec declared by users; status applied by the controller (what to remove: the assignment's ledger)
 * Secret     &lt;user name&gt;              the SCRAM password the controller made for a KafkaUser that names none
 * ConfigMap  kaas-producer-ids          next-block-start, advanced by compare-and-set: never reused
 * volume     __cluster/cluster.id        created once (link, never replaced): brokers check they share the volume
 * volume     __cluster/assignments/&lt;epoch&gt;.json   the published assignment, one file per controller epoch
 * </pre>
 *
 * <p>The assignment stays on the volume: at 10,000 partitions it is over a megabyte, past what a
 * ConfigMap holds, and only controllers read it. Producer-id blocks move to the API server, whose
 * compare-and-set keeps them unique even if two controllers briefly both believed they led.
 *
 * <p>Fencing: every write first reads the Lease fresh and requires this process's holder identity
 * under the writer's epoch. Kubernetes has no transaction spanning the Lease and another object,
 * so a check can be overtaken; what makes that harmless is named at each store: epoch-named
 * assignment files, compare-and-set on producer ids, create-once for the cluster id, and statuses
 * that the successor recomputes.
 */
public final class KubernetesMetadata implements ClusterMetadata {
    static final String PRODUCER_IDS = "kaas-producer-ids";
    static final String NEXT_BLOCK = "next-block-start";

    private final KubernetesClient client;
    private final String namespace;
    private final String leaseName;
    private final Path clusterDir;
    private final Disk disk;
    private final KubernetesLease lease;
    private final KafkaTopicStore topics;
    private final KafkaUserStore users;
    private final BoundedCalls calls = new BoundedCalls();
    private final long callTimeoutMs;

    /** @param callTimeoutMs the longest any one Kubernetes API call may hold the caller (lease calls: at most a third of the lease) */
    public KubernetesMetadata(KubernetesClient client, String namespace, String leaseName, Path dataDir, Disk disk,
                              long callTimeoutMs) throws IOException {
        this.callTimeoutMs = callTimeoutMs;
        this.client = client;
        this.namespace = namespace;
        this.leaseName = leaseName;
        this.clusterDir = dataDir.toAbsolutePath().normalize().resolve("__cluster");
        this.disk = disk;
        Files.createDirectories(clusterDir);
        this.lease = new KubernetesLease(client, namespace, leaseName, calls, callTimeoutMs,
                () -> EpochAssignmentFiles.highestEpoch(clusterDir));
        this.topics = new KafkaTopicStore(client, namespace, this::checkEpoch, calls, callTimeoutMs);
        this.users = new KafkaUserStore(client, namespace, this::checkEpoch, calls, callTimeoutMs);
    }

    @Override
    public ControllerLease lease() {
        return lease;
    }

    /** Refuses a write unless the Lease, read now, is this process's under {@code leaseEpoch}. */
    void checkEpoch(long leaseEpoch, String what) throws IOException {
        if (!lease.writable()) {
            throw new LeaseFencedException("refused to write " + what + " under lease epoch " + leaseEpoch
                    + ": the lease was last renewed more than two thirds of its duration ago");
        }
        Lease current;
        try {
            current = calls.within(callTimeoutMs, "reading the lease", () -> client.leases().inNamespace(namespace).withName(leaseName).get());
        } catch (KubernetesClientException e) {
            throw new IOException("reading lease " + namespace + "/" + leaseName + " before writing " + what + ": " + e.getMessage(), e);
        }
        String h = current == null || current.getSpec() == null ? null : current.getSpec().getHolderIdentity();
        Integer transitions = current == null || current.getSpec() == null ? null : current.getSpec().getLeaseTransitions();
        if (h == null || !h.equals(lease.holder()) || transitions == null || transitions != leaseEpoch) {
            throw new LeaseFencedException("refused to write " + what + " under lease epoch " + leaseEpoch
                    + ": the lease is now epoch " + transitions + " held by " + h);
        }
    }

    @Override
    public TopicCatalog topics() {
        return topics;
    }

    @Override
    public UserCatalog users() {
        return users;
    }

    @Override
    public AssignmentStore assignments() {
        return new AssignmentStore() {
            @Override
            public Optional<Assignment> load() throws IOException {
                Optional<Path> latest = EpochAssignmentFiles.latest(clusterDir);
                if (latest.isEmpty()) {
                    return Optional.empty();
                }
                return Optional.of(Json.read(Files.readAllBytes(latest.get()), Assignment.class));
            }

            @Override
            public void store(long leaseEpoch, String json) throws IOException {
                checkEpoch(leaseEpoch, "the assignment");
                EpochAssignmentFiles.write(disk, clusterDir, leaseEpoch, json.getBytes(StandardCharsets.UTF_8));
            }
        };
    }

    @Override
    public ProducerIdStore producerIds() {
        return leaseEpoch -> {
            checkEpoch(leaseEpoch, "a producer id block");
            // Compare-and-set on the ConfigMap's resourceVersion: a conflict means someone else took a
            // block in between; read again. Bounded: a controller that keeps losing steps aside.
            for (int attempt = 0; attempt < 10; attempt++) {
                Long start = calls.within(callTimeoutMs, "allocating a producer id block", this::tryAllocateBlock);
                if (start != null) {
                    return start;
                }
            }
            throw new IOException("allocating a producer id block: 10 conflicting updates in a row");
        };
    }

    /** One compare-and-set attempt: the block's start, or null when another writer changed the ConfigMap first. */
    private Long tryAllocateBlock() throws IOException {
        try {
            var resource = client.configMaps().inNamespace(namespace).withName(PRODUCER_IDS);
            ConfigMap cm = resource.get();
            if (cm == null) {
                client.resource(new ConfigMapBuilder().withNewMetadata().withName(PRODUCER_IDS).withNamespace(namespace)
                        .addToLabels("app.kubernetes.io/managed-by", "kaas-controller").endMetadata()
                        .addToData(NEXT_BLOCK, Long.toString(ProducerIdStore.BLOCK_SIZE)).build()).create();
                return 0L;
            }
            long start = Long.parseLong(cm.getData().getOrDefault(NEXT_BLOCK, "0"));
            if (start < 0 || start > Long.MAX_VALUE - ProducerIdStore.BLOCK_SIZE) {
                throw new IOException("ConfigMap " + PRODUCER_IDS + " holds an impossible " + NEXT_BLOCK + ": " + start);
            }
            cm.getData().put(NEXT_BLOCK, Long.toString(start + ProducerIdStore.BLOCK_SIZE));
            // update() sends the resourceVersion read above: the API server refuses it if stale.
            client.configMaps().inNamespace(namespace).resource(cm).update();
            return start;
        } catch (KubernetesClientException e) {
            if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
                throw new IOException("allocating a producer id block: " + e.getMessage(), e);
            }
        } catch (NumberFormatException e) {
            throw new IOException("ConfigMap " + PRODUCER_IDS + " holds no number: " + e.getMessage(), e);
        }
        return null;
    }

    @Override
    public String clusterId(long leaseEpoch) throws IOException {
        Path file = clusterDir.resolve("cluster.id");
        var bytes = AtomicFiles.read(file);
        if (bytes.isPresent()) {
            return new String(bytes.get(), StandardCharsets.UTF_8).trim();
        }
        checkEpoch(leaseEpoch, "the cluster id");
        String id = Uuid.randomUuid().toString();
        Path tmp = clusterDir.resolve(".cluster.id.new-" + UUID.randomUUID());
        AtomicFiles.write(disk, tmp, (id + "\n").getBytes(StandardCharsets.UTF_8));
        try {
            // link(2) never replaces: of two controllers minting at once, one id wins and both read it.
            Files.createLink(file, tmp);
            disk.fsyncDirectory(clusterDir);
        } catch (FileAlreadyExistsException lost) {
            // Another controller created it first.
        } finally {
            Files.deleteIfExists(tmp);
        }
        return new String(AtomicFiles.read(file).orElseThrow(), StandardCharsets.UTF_8).trim();
    }

    @Override
    public void close() {
        topics.close();
        users.close();
        calls.close();
    }
}
