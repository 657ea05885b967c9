package dev.kaas.common.cluster;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.TopicSpec;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Uuid;

/**
 * The standalone binding of {@link ClusterMetadata}: plain files under {@code <data>/__cluster/},
 * each written with {@link AtomicFiles#write}. Same semantics as the Kubernetes binding
 * (holder, renew deadline, monotonic transitions, one writer).
 *
 * <pre>
 * __cluster/controller.lock           locked (OS file lock) for each lease update and fenced write
 * __cluster/controller.lease          {"holder":…,"renewDeadlineMs":…,"transitions":…}
 * __cluster/cluster.id                the cluster ID, one line
 * __cluster/assignment.json           the published Assignment
 * __cluster/catalog/topics.json       {"topics":[TopicSpec…]}
 * __cluster/producer_ids/next-block.json {"nextBlockStart":…}
 * </pre>
 *
 * <p>Several controllers may open one data directory: one leads, the others wait on the lease
 * (standbys). Every lease update and every fenced write runs under an exclusive OS lock on
 * {@code controller.lock} (and a monitor per directory within this JVM, since OS locks are per
 * process), taken for that one operation only: a fenced write reads the lease and writes its file
 * with no other controller in between, so once a standby has taken the lease under a new epoch,
 * nothing the old holder writes under its epoch lands, whatever it believes. This is the
 * standalone counterpart of the Kubernetes binding's resource-version check. The lock is taken
 * with a bound: a holder frozen inside an operation (SIGSTOP) makes the others' operations fail,
 * not hang.
 */
public final class StandaloneMetadata implements ClusterMetadata {
    /** How long an operation waits for another controller's operation to release the lock. */
    static final long LOCK_WAIT_MS = 2_000;
    private static final ConcurrentHashMap<Path, Object> MONITORS = new ConcurrentHashMap<>();

    private final Path clusterDir;
    private final FileChannel lockChannel;
    private final Object monitor;
    private final Path leaseFile;
    private final Disk disk;

    private StandaloneMetadata(Path clusterDir, FileChannel lockChannel, Disk disk) {
        this.disk = disk;
        this.clusterDir = clusterDir;
        this.lockChannel = lockChannel;
        this.monitor = MONITORS.computeIfAbsent(clusterDir, d -> new Object());
        this.leaseFile = clusterDir.resolve("controller.lease");
    }

    /** Opens the binding on {@code dataDir}; other controllers may have it open too (standbys). */
    public static StandaloneMetadata open(Path dataDir) throws IOException {
        return open(dataDir, Disk.SYSTEM);
    }

    /** As {@link #open(Path)}, writing through {@code disk} (the durability tests' seam). */
    public static StandaloneMetadata open(Path dataDir, Disk disk) throws IOException {
        Path clusterDir = dataDir.toAbsolutePath().normalize().resolve("__cluster");
        Files.createDirectories(clusterDir);
        FileChannel channel = FileChannel.open(clusterDir.resolve("controller.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        return new StandaloneMetadata(clusterDir, channel, disk);
    }

    @FunctionalInterface
    private interface Operation<T> {
        T run() throws IOException;
    }

    /** Runs one lease update or fenced write with every other controller of this directory kept out. */
    private <T> T exclusive(Operation<T> op) throws IOException {
        synchronized (monitor) {
            FileLock lock = null;
            long deadline = System.nanoTime() + LOCK_WAIT_MS * 1_000_000;
            try {
                while ((lock = lockChannel.tryLock()) == null) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("another controller held " + clusterDir.resolve("controller.lock")
                                + " for more than " + LOCK_WAIT_MS + " ms");
                    }
                    Thread.sleep(5);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for the controller lock", e);
            } catch (OverlappingFileLockException e) {
                throw new IllegalStateException("the controller lock is held elsewhere in this process", e);
            }
            try {
                return op.run();
            } finally {
                lock.release();
            }
        }
    }

    public Path clusterDir() {
        return clusterDir;
    }

    @Override
    public void close() throws IOException {
        synchronized (monitor) {
            lockChannel.close();
        }
    }

    @Override
    public ControllerLease lease() {
        return new ControllerLease() {
            @Override
            public LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException {
                // A standby looks without the lock while the lease is another's and unexpired, so
                // waiting controllers (or one frozen mid-read) never hold up the leader's renewals.
                LeaseRecord seen = readLease();
                if (seen != null && seen.holder() != null && !seen.holder().equals(holder) && nowMs < seen.renewDeadlineMs()) {
                    return seen;
                }
                return exclusive(() -> {
                    LeaseRecord current = readLease();
                    if (current != null && current.holder() != null && !current.holder().equals(holder)
                            && nowMs < current.renewDeadlineMs()) {
                        return current;
                    }
                    long transitions = current == null ? 0 : current.transitions();
                    if (current == null || !holder.equals(current.holder()) || nowMs >= current.renewDeadlineMs()) {
                        transitions++;
                    }
                    LeaseRecord next = new LeaseRecord(holder, nowMs + durationMs, transitions);
                    AtomicFiles.write(disk, leaseFile, Json.bytes(next));
                    return next;
                });
            }

            @Override
            public void release(String holder) throws IOException {
                exclusive(() -> {
                    LeaseRecord current = readLease();
                    if (current != null && holder.equals(current.holder())) {
                        AtomicFiles.write(disk, leaseFile, Json.bytes(new LeaseRecord(null, 0, current.transitions())));
                    }
                    return null;
                });
            }
        };
    }

    private LeaseRecord readLease() throws IOException {
        var bytes = AtomicFiles.read(leaseFile);
        return bytes.isEmpty() ? null : Json.read(bytes.get(), LeaseRecord.class);
    }

    /** Call inside {@link #exclusive}, right before the write it guards. */
    private void checkEpoch(long leaseEpoch, String what) throws IOException {
        LeaseRecord lease = readLease();
        if (lease == null || lease.holder() == null || lease.transitions() != leaseEpoch) {
            throw new LeaseFencedException("refused to write " + what + " under lease epoch " + leaseEpoch
                    + ": the lease is now " + (lease == null ? "absent" : "epoch " + lease.transitions()
                    + " held by " + lease.holder()));
        }
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
            public void store(long leaseEpoch, List<TopicSpec> topics) throws IOException {
                exclusive(() -> {
                    checkEpoch(leaseEpoch, "the topic catalog");
                    AtomicFiles.write(disk, file, Json.bytes(new CatalogFile(topics)));
                    return null;
                });
            }
        };
    }

    @Override
    public AssignmentStore assignments() {
        Path file = clusterDir.resolve("assignment.json");
        return new AssignmentStore() {
            @Override
            public Optional<Assignment> load() throws IOException {
                var bytes = AtomicFiles.read(file);
                return bytes.isEmpty() ? Optional.empty() : Optional.of(Json.read(bytes.get(), Assignment.class));
            }

            @Override
            public void store(long leaseEpoch, String json) throws IOException {
                exclusive(() -> {
                    checkEpoch(leaseEpoch, "the assignment");
                    AtomicFiles.write(disk, file, json.getBytes(StandardCharsets.UTF_8));
                    return null;
                });
            }
        };
    }

    record NextBlock(long nextBlockStart) {
    }

    @Override
    public ProducerIdStore producerIds() {
        Path file = clusterDir.resolve("producer_ids").resolve("next-block.json");
        return leaseEpoch -> exclusive(() -> {
            checkEpoch(leaseEpoch, "a producer id block");
            var bytes = AtomicFiles.read(file);
            long start = bytes.isEmpty() ? 0 : Json.read(bytes.get(), NextBlock.class).nextBlockStart();
            // Durable before handed out: a crash after this line wastes a block, never reuses one.
            AtomicFiles.write(disk, file, Json.bytes(new NextBlock(start + ProducerIdStore.BLOCK_SIZE)));
            return start;
        });
    }

    @Override
    public String clusterId(long leaseEpoch) throws IOException {
        Path file = clusterDir.resolve("cluster.id");
        return exclusive(() -> {
            var bytes = AtomicFiles.read(file);
            if (bytes.isPresent()) {
                return new String(bytes.get(), StandardCharsets.UTF_8).trim();
            }
            checkEpoch(leaseEpoch, "the cluster id");
            String id = Uuid.randomUuid().toString();
            AtomicFiles.write(disk, file, (id + "\n").getBytes(StandardCharsets.UTF_8));
            return id;
        });
    }

    /** The cluster id a broker finds on its data directory, empty when no controller created one there yet. */
    public static String readClusterId(Path dataDir) throws IOException {
        var bytes = AtomicFiles.read(dataDir.toAbsolutePath().resolve("__cluster").resolve("cluster.id"));
        return bytes.map(b -> new String(b, StandardCharsets.UTF_8).trim()).orElse("");
    }
}
