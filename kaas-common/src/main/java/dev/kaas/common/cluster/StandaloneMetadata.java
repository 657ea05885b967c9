package dev.kaas.common.cluster;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.TopicSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.Uuid;

/**
 * The standalone binding of {@link ClusterMetadata}: plain files under {@code <data>/__cluster/},
 * each written with {@link AtomicFiles#write}. Same semantics as the Kubernetes binding
 * (holder, renew deadline, monotonic transitions, one writer); the exclusivity of the writer on
 * one machine comes from the controller's process lock on the data directory.
 *
 * <pre>
 * __cluster/controller.lease          {"holder":…,"renewDeadlineMs":…,"transitions":…}
 * __cluster/cluster.id                the cluster ID, one line
 * __cluster/catalog/topics.json       {"topics":[TopicSpec…]}
 * __cluster/producer_ids/next-block.json {"nextBlockStart":…}
 * </pre>
 */
public final class StandaloneMetadata implements ClusterMetadata {
    private final Path clusterDir;

    public StandaloneMetadata(Path dataDir) {
        this.clusterDir = dataDir.resolve("__cluster");
    }

    public Path clusterDir() {
        return clusterDir;
    }

    @Override
    public ControllerLease lease() {
        return new ControllerLease() {
            private final Path file = clusterDir.resolve("controller.lease");

            @Override
            public synchronized LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException {
                LeaseRecord current = read();
                if (current != null && current.holder() != null && !current.holder().equals(holder)
                        && nowMs < current.renewDeadlineMs()) {
                    return current;
                }
                long transitions = current == null ? 0 : current.transitions();
                if (current == null || !holder.equals(current.holder()) || nowMs >= current.renewDeadlineMs()) {
                    transitions++;
                }
                LeaseRecord next = new LeaseRecord(holder, nowMs + durationMs, transitions);
                AtomicFiles.write(file, Json.bytes(next));
                return next;
            }

            @Override
            public synchronized void release(String holder) throws IOException {
                LeaseRecord current = read();
                if (current != null && holder.equals(current.holder())) {
                    AtomicFiles.write(file, Json.bytes(new LeaseRecord(null, 0, current.transitions())));
                }
            }

            private LeaseRecord read() throws IOException {
                var bytes = AtomicFiles.read(file);
                return bytes.isEmpty() ? null : Json.read(bytes.get(), LeaseRecord.class);
            }
        };
    }

    record CatalogFile(List<TopicSpec> topics) {
    }

    @Override
    public TopicCatalog topics() {
        Path file = clusterDir.resolve("catalog").resolve("topics.json");
        return new TopicCatalog() {
            @Override
            public List<TopicSpec> topics() throws IOException {
                var bytes = AtomicFiles.read(file);
                return bytes.isEmpty() ? List.of() : Json.read(bytes.get(), CatalogFile.class).topics();
            }

            @Override
            public void store(List<TopicSpec> topics) throws IOException {
                AtomicFiles.write(file, Json.bytes(new CatalogFile(topics)));
            }
        };
    }

    record NextBlock(long nextBlockStart) {
    }

    @Override
    public ProducerIdStore producerIds() {
        Path file = clusterDir.resolve("producer_ids").resolve("next-block.json");
        return new ProducerIdStore() {
            @Override
            public synchronized long allocateBlock() throws IOException {
                var bytes = AtomicFiles.read(file);
                long start = bytes.isEmpty() ? 0 : Json.read(bytes.get(), NextBlock.class).nextBlockStart();
                // Durable before handed out: a crash after this line wastes a block, never reuses one.
                AtomicFiles.write(file, Json.bytes(new NextBlock(start + BLOCK_SIZE)));
                return start;
            }
        };
    }

    @Override
    public synchronized String clusterId() throws IOException {
        Path file = clusterDir.resolve("cluster.id");
        var bytes = AtomicFiles.read(file);
        if (bytes.isPresent()) {
            return new String(bytes.get(), StandardCharsets.UTF_8).trim();
        }
        String id = Uuid.randomUuid().toString();
        AtomicFiles.write(file, (id + "\n").getBytes(StandardCharsets.UTF_8));
        return id;
    }
}
