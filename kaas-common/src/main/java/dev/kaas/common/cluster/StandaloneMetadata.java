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
import org.apache.kafka.common.Uuid;

/**
 * The standalone binding of {@link ClusterMetadata}: plain files under {@code <data>/__cluster/},
 * each written with {@link AtomicFiles#write}. Same semantics as the Kubernetes binding
 * (holder, renew deadline, monotonic transitions, one writer).
 *
 * <pre>
 * __cluster/controller.lock           held (OS file lock) while a binding is open
 * __cluster/controller.lease          {"holder":…,"renewDeadlineMs":…,"transitions":…}
 * __cluster/cluster.id                the cluster ID, one line
 * __cluster/assignment.json           the published Assignment
 * __cluster/catalog/topics.json       {"topics":[TopicSpec…]}
 * __cluster/producer_ids/next-block.json {"nextBlockStart":…}
 * </pre>
 *
 * <p>Exclusivity: {@link #open} takes an OS lock on {@code controller.lock} for as long as the
 * binding is open, so two controller processes on one machine never share a data directory.
 * Fencing: every write first reads the lease file and refuses unless its {@code transitions}
 * equals the writer's epoch and it has a holder; lease updates and fenced writes take one
 * monitor, so within a process no write can slip between a takeover and its check. (Across
 * processes the check and the write are two steps; the OS lock is what keeps a second process
 * out. The Kubernetes binding makes the check part of the update through the resource version.)
 */
public final class StandaloneMetadata implements ClusterMetadata {
    private final Path clusterDir;
    private final FileChannel lockChannel;
    private final FileLock processLock;
    private final Path leaseFile;
    private final Disk disk;

    private StandaloneMetadata(Path clusterDir, FileChannel lockChannel, FileLock processLock, Disk disk) {
        this.disk = disk;
        this.clusterDir = clusterDir;
        this.lockChannel = lockChannel;
        this.processLock = processLock;
        this.leaseFile = clusterDir.resolve("controller.lease");
    }

    /**
     * Opens the binding on {@code dataDir}, taking its process lock.
     *
     * @throws IllegalStateException if another controller (process, or binding in this process) has it open
     */
    public static StandaloneMetadata open(Path dataDir) throws IOException {
        return open(dataDir, Disk.SYSTEM);
    }

    /** As {@link #open(Path)}, writing through {@code disk} (the durability tests' seam). */
    public static StandaloneMetadata open(Path dataDir, Disk disk) throws IOException {
        Path clusterDir = dataDir.toAbsolutePath().resolve("__cluster");
        Files.createDirectories(clusterDir);
        FileChannel channel = FileChannel.open(clusterDir.resolve("controller.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new IllegalStateException("another kaas controller is already running on data directory " + dataDir);
        }
        return new StandaloneMetadata(clusterDir, channel, lock, disk);
    }

    public Path clusterDir() {
        return clusterDir;
    }

    @Override
    public synchronized void close() throws IOException {
        if (lockChannel.isOpen()) {
            processLock.release();
            lockChannel.close();
        }
    }

    @Override
    public ControllerLease lease() {
        return new ControllerLease() {
            @Override
            public LeaseRecord acquireOrRenew(String holder, long nowMs, long durationMs) throws IOException {
                synchronized (StandaloneMetadata.this) {
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
                }
            }

            @Override
            public void release(String holder) throws IOException {
                synchronized (StandaloneMetadata.this) {
                    LeaseRecord current = readLease();
                    if (current != null && holder.equals(current.holder())) {
                        AtomicFiles.write(disk, leaseFile, Json.bytes(new LeaseRecord(null, 0, current.transitions())));
                    }
                }
            }
        };
    }

    private LeaseRecord readLease() throws IOException {
        var bytes = AtomicFiles.read(leaseFile);
        return bytes.isEmpty() ? null : Json.read(bytes.get(), LeaseRecord.class);
    }

    /** Call with the monitor held, right before the write it guards. */
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
                synchronized (StandaloneMetadata.this) {
                    checkEpoch(leaseEpoch, "the topic catalog");
                    AtomicFiles.write(disk, file, Json.bytes(new CatalogFile(topics)));
                }
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
                synchronized (StandaloneMetadata.this) {
                    checkEpoch(leaseEpoch, "the assignment");
                    AtomicFiles.write(disk, file, json.getBytes(StandardCharsets.UTF_8));
                }
            }
        };
    }

    record NextBlock(long nextBlockStart) {
    }

    @Override
    public ProducerIdStore producerIds() {
        Path file = clusterDir.resolve("producer_ids").resolve("next-block.json");
        return leaseEpoch -> {
            synchronized (StandaloneMetadata.this) {
                checkEpoch(leaseEpoch, "a producer id block");
                var bytes = AtomicFiles.read(file);
                long start = bytes.isEmpty() ? 0 : Json.read(bytes.get(), NextBlock.class).nextBlockStart();
                // Durable before handed out: a crash after this line wastes a block, never reuses one.
                AtomicFiles.write(disk, file, Json.bytes(new NextBlock(start + ProducerIdStore.BLOCK_SIZE)));
                return start;
            }
        };
    }

    @Override
    public synchronized String clusterId(long leaseEpoch) throws IOException {
        Path file = clusterDir.resolve("cluster.id");
        var bytes = AtomicFiles.read(file);
        if (bytes.isPresent()) {
            return new String(bytes.get(), StandardCharsets.UTF_8).trim();
        }
        checkEpoch(leaseEpoch, "the cluster id");
        String id = Uuid.randomUuid().toString();
        AtomicFiles.write(disk, file, (id + "\n").getBytes(StandardCharsets.UTF_8));
        return id;
    }
}
