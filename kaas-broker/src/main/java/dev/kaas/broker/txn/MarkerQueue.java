package dev.kaas.broker.txn;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.SlotAssignment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * Transaction markers for partitions (and group slots) another broker leads: the volume is the
 * queue and the controller stream the doorbell, since brokers never talk to each other.
 *
 * <pre>
 * __cluster/markers/to-{leader}/{coordinator}-{uuid}.req   {"from":c,"slot":s,"topic":…,"topicId":…,"partition":p,
 *                                                          "producerId":…,"producerEpoch":…,"coordinatorEpoch":…,"commit":…}
 * __cluster/markers/to-{leader}/{coordinator}-{uuid}.res   {"error":code}: the leader's answer
 * </pre>
 *
 * <p>The coordinator writes a request and rings the leader; the leader appends the marker
 * through the partition's writer (durable and fenced like any append), writes the result,
 * deletes the request and rings the coordinator back, which reads and deletes the result. Both
 * files are published temp + rename without an fsync: nothing depends on them surviving a crash.
 * The coordinator's Prepare state is the durable record, and it sends again whatever got no
 * answer or a malformed one (after {@link #TIMEOUT_MS}, or when it takes the slot over); a result
 * says NONE only after the marker itself is durable. An fsync here would only add a disk flush
 * per partition, one after another on the single I/O thread, to the time from EndTxn to the
 * markers. A request is idempotent in effect: a second marker for a transaction already closed on
 * the partition closes nothing. A request from a deposed coordinator is refused by the partition
 * (coordinator epoch) or, before that, by the leader when the assignment shows a newer epoch of
 * the slot. Files are untrusted: a request that does not parse or is out of range is deleted.
 *
 * <p>The same queue carries KIP-890 verifications the other way, from a partition's leader to
 * the transaction's coordinator (Apache's AddPartitionsToTxn v4 {@code verify_only}):
 *
 * <pre>
 * __cluster/markers/to-{coordinator}/{leader}-{uuid}.vreq  {"from":l,"transactionalId":…,"producerId":…,"producerEpoch":…,
 *                                                          "partitions":[{"topic":…,"partition":p}]}
 * __cluster/markers/to-{coordinator}/{leader}-{uuid}.vres  {"partitions":[{"topic":…,"partition":p,"error":code}]}
 * </pre>
 *
 * A verification is a question, not a change: losing one only makes the producer retry, so its
 * files are published without fsync (temp + rename: whole or absent, never torn to a reader), and
 * one that does not parse is treated as lost.
 *
 * <p>A lost doorbell costs latency only: both sides also sweep every {@link #SWEEP_MS}.
 *
 * <p>Threading: file work runs on {@code io} (one thread); appends on the partitions' writers.
 */
final class MarkerQueue {
    private static final Logger LOG = Logger.getLogger(MarkerQueue.class);
    static final long TIMEOUT_MS = 10_000;
    static final long SWEEP_MS = 500;
    /** Results nobody collected (their coordinator died) are removed after this long. */
    static final long ORPHAN_MS = 60_000;

    record Request(int from, int slot, String topic, String topicId, int partition, long producerId, short producerEpoch,
                   int coordinatorEpoch, boolean commit) {
    }

    record Result(short error) {
    }

    record Partition(String topic, int partition, Short error) {
    }

    record Verify(int from, String transactionalId, long producerId, short producerEpoch, List<Partition> partitions) {
    }

    record Verified(List<Partition> partitions) {
    }

    /** Answers a verification for a transaction slot this broker holds (the coordinator's side). */
    interface LocalVerifier {
        CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short producerEpoch,
                                                             Set<TopicPartition> partitions);
    }

    /** Bounds on what a verification file may hold: Apache's transactional id limit, and partitions a request could name. */
    static final int MAX_ID_CHARS = Short.MAX_VALUE;
    static final int MAX_PARTITIONS = 100_000;
    /** Largest verification file read: the id and partitions above, JSON-escaped, fit well within it. */
    static final long MAX_VERIFY_FILE_BYTES = 16L << 20;

    /** Writes a marker on a partition or group slot this broker holds (the leader's side). */
    interface LocalWriter {
        CompletableFuture<Void> write(TopicPartition tp, String topicId, long producerId, short producerEpoch, int coordinatorEpoch,
                                      boolean commit);
    }

    /** A request of ours awaiting its answer: {@code answered} gets the result file's bytes, {@code failed} a timeout or a storage error. */
    private record Pending(int peer, long sentMs, Path request, Answered answered,
                           java.util.function.Consumer<RuntimeException> failed) {
    }

    /** Reads a result file's bytes; a malformed one throws, and its request fails. */
    private interface Answered {
        void accept(byte[] bytes) throws IOException;
    }

    private final Path root;
    private final int me;
    private final Disk disk;
    private final Supplier<Assignment> assignment;
    private final IntConsumer ring;
    private final ScheduledExecutorService io;
    private final LongSupplier clock;
    private volatile LocalWriter local;
    private volatile LocalVerifier verifier;
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    /** Requests to this broker being written now, so a second sweep does not start them again. */
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

    /**
     * @param assignment the applied assignment (slot epochs)
     * @param ring       rings another broker's doorbell ({@link dev.kaas.broker.cluster.Doorbell#ring}); its
     *                   rings of ours go to {@link #rung}
     */
    MarkerQueue(Path dataDir, int me, Supplier<Assignment> assignment, IntConsumer ring, ScheduledExecutorService io,
                LongSupplier clock, Disk disk) {
        this.root = dataDir.resolve("__cluster").resolve("markers");
        this.me = me;
        this.assignment = assignment;
        this.ring = ring;
        this.io = io;
        this.clock = clock;
        this.disk = disk;
    }

    /** Starts serving: marker requests are written by {@code writer}, verifications answered by {@code verifier}; the fallback sweep begins. */
    void start(LocalWriter writer, LocalVerifier verifier) {
        this.local = writer;
        this.verifier = verifier;
        io.scheduleWithFixedDelay(this::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
    }

    /** Our doorbell rang: {@code from} queued requests for us, or answered ours. Any thread; does not block. */
    void rung(int from) {
        io.execute(() -> {
            drainRequests();
            collectResults(from);
        });
    }

    /** The leader's queue changed hands or a partition opened here: look for requests now. */
    void poke() {
        io.execute(this::drainRequests);
    }

    // ------------------------------------------------------------------ coordinator side

    /** Asks {@code leader} to write a marker; completes when its result comes back (or fails on the leader's error or a timeout). */
    CompletableFuture<Void> send(int leader, int slot, TopicPartition tp, String topicId, long producerId, short producerEpoch,
                                 int coordinatorEpoch, boolean commit) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        post(leader, ".req", new Request(me, slot, tp.topic(), topicId, tp.partition(), producerId, producerEpoch, coordinatorEpoch,
                commit), bytes -> {
                    Errors error = Errors.forCode(Json.read(bytes, Result.class).error());
                    if (error == Errors.NONE) {
                        result.complete(null);
                    } else {
                        result.completeExceptionally(error.exception());
                    }
                }, result::completeExceptionally);
        return result;
    }

    /**
     * Asks {@code coordinator} whether {@code partitions} are part of the producer's transaction.
     * Never fails: no answer in time is NETWORK_EXCEPTION for every partition, as Apache's broker
     * reports a coordinator that did not answer.
     */
    CompletableFuture<Map<TopicPartition, Errors>> verify(int coordinator, String transactionalId, long producerId, short producerEpoch,
                                                         Set<TopicPartition> partitions) {
        CompletableFuture<Map<TopicPartition, Errors>> result = new CompletableFuture<>();
        List<Partition> asked = partitions.stream().map(tp -> new Partition(tp.topic(), tp.partition(), null)).toList();
        post(coordinator, ".vreq", new Verify(me, transactionalId, producerId, producerEpoch, asked), bytes -> {
            Map<TopicPartition, Errors> answer = new java.util.LinkedHashMap<>();
            partitions.forEach(tp -> answer.put(tp, Errors.UNKNOWN_SERVER_ERROR));
            Verified v = Json.read(bytes, Verified.class);
            for (Partition p : v.partitions() == null ? List.<Partition>of() : v.partitions()) {
                TopicPartition tp = p == null || p.topic() == null ? null : new TopicPartition(p.topic(), p.partition());
                if (tp != null && answer.containsKey(tp) && p.error() != null) {
                    answer.put(tp, Errors.forCode(p.error()));
                }
            }
            result.complete(answer);
        }, e -> {
            Map<TopicPartition, Errors> answer = new java.util.LinkedHashMap<>();
            partitions.forEach(tp -> answer.put(tp, Errors.NETWORK_EXCEPTION));
            result.complete(answer);
        });
        return result;
    }

    /**
     * Queues {@code request} for {@code peer} and rings it; {@code answered} gets its result,
     * {@code failed} what went wrong. Published, not fsynced: the asker retries what a crash loses.
     */
    private void post(int peer, String suffix, Object request, Answered answered,
                      java.util.function.Consumer<RuntimeException> failed) {
        io.execute(() -> {
            String name = me + "-" + UUID.randomUUID();
            Path file = dir(peer).resolve(name + suffix);
            // Its age counts from before the file is visible: whoever sees the file sees a clock
            // at or past this reading, so a timeout measured from it is never pushed later.
            long sentMs = clock.getAsLong();
            try {
                AtomicFiles.publish(disk, file, Json.bytes(request));
            } catch (IOException | RuntimeException e) {
                failed.accept(new org.apache.kafka.common.errors.KafkaStorageException("could not queue a request for broker "
                        + peer + ": " + e.getMessage()));
                return;
            }
            pending.put(name, new Pending(peer, sentMs, file, answered, failed));
            ring.accept(peer);
        });
    }

    /** Results {@code peer} wrote for us: hand them to their requests, remove the files. */
    private void collectResults(int peer) {
        if (pending.isEmpty()) {
            return;
        }
        for (Path p : list(dir(peer))) {
            String file = p.getFileName().toString();
            String suffix = file.endsWith(".res") ? ".res" : file.endsWith(".vres") ? ".vres" : null;
            if (!file.startsWith(me + "-") || suffix == null) {
                continue;
            }
            String name = file.substring(0, file.length() - suffix.length());
            Pending waiting = pending.remove(name);
            byte[] bytes = null;
            try {
                bytes = Files.readAllBytes(p);
            } catch (IOException e) {
                LOG.warnf("unreadable result file=%s: %s", p, e.toString());
            }
            delete(p);
            if (waiting == null) {
                continue;
            }
            try {
                if (bytes == null) {
                    throw new IllegalArgumentException("unreadable");
                }
                waiting.answered().accept(bytes);
            } catch (IOException | RuntimeException e) {
                LOG.warnf("malformed result file=%s: %s", p, e.toString());
                waiting.failed().accept(Errors.UNKNOWN_SERVER_ERROR.exception());
            }
        }
    }

    // ------------------------------------------------------------------ leader side

    private void drainRequests() {
        LocalWriter writer = local;
        if (writer == null) {
            return;
        }
        long now = clock.getAsLong();
        for (Path p : list(dir(me))) {
            String file = p.getFileName().toString();
            if (file.endsWith(".res") || file.endsWith(".vres")) {
                if (now - modified(p) > ORPHAN_MS) {
                    delete(p);
                }
                continue;
            }
            if (file.startsWith(".")) {
                continue;
            }
            if (file.endsWith(".vreq")) {
                answerVerification(p, file.substring(0, file.length() - ".vreq".length()));
                continue;
            }
            if (!file.endsWith(".req")) {
                continue;
            }
            String name = file.substring(0, file.length() - ".req".length());
            if (!inFlight.add(name)) {
                continue;
            }
            Request r;
            try {
                r = valid(Json.read(Files.readAllBytes(p), Request.class));
            } catch (NoSuchFileException e) {
                inFlight.remove(name);
                continue;
            } catch (IOException | RuntimeException e) {
                LOG.warnf("dropping an unreadable marker request file=%s: %s", p, e.toString());
                delete(p);
                inFlight.remove(name);
                continue;
            }
            Errors refused = staleCoordinator(r);
            CompletableFuture<Void> written;
            try {
                written = refused != null ? CompletableFuture.failedFuture(refused.exception())
                        : writer.write(new TopicPartition(r.topic(), r.partition()), r.topicId() == null ? "" : r.topicId(),
                                r.producerId(), r.producerEpoch(), r.coordinatorEpoch(), r.commit());
            } catch (RuntimeException e) {
                written = CompletableFuture.failedFuture(e);
            }
            written.whenComplete((v, e) -> io.execute(() -> answer(name, r, p, e)));
        }
    }

    private void answer(String name, Request r, Path request, Throwable failure) {
        Errors error = failure == null ? Errors.NONE : Errors.forException(unwrap(failure));
        try {
            AtomicFiles.publish(disk, dir(me).resolve(name + ".res"), Json.bytes(new Result(error.code())));
            delete(request);
        } catch (IOException | RuntimeException e) {
            LOG.warnf("could not answer marker request %s: %s", name, e.toString());
        } finally {
            inFlight.remove(name);
        }
        ring.accept(r.from());
    }

    /** The coordinator's side of a verification: the slot answers from memory; the answer goes back as a file and a ring. */
    private void answerVerification(Path p, String name) {
        LocalVerifier answering = verifier;
        if (answering == null || !inFlight.add(name)) {
            return;
        }
        Verify v;
        Set<TopicPartition> asked = new java.util.LinkedHashSet<>();
        try {
            if (Files.size(p) > MAX_VERIFY_FILE_BYTES) {
                throw new IllegalArgumentException("verification request of " + Files.size(p) + " bytes");
            }
            v = Json.read(Files.readAllBytes(p), Verify.class);
            if (v == null || v.transactionalId() == null || v.transactionalId().isEmpty() || v.transactionalId().length() > MAX_ID_CHARS
                    || v.partitions() == null || v.partitions().isEmpty() || v.partitions().size() > MAX_PARTITIONS
                    || v.producerId() < 0 || v.producerEpoch() < 0) {
                throw new IllegalArgumentException("verification request out of range");
            }
            for (Partition tp : v.partitions()) {
                if (tp == null || tp.topic() == null || tp.topic().isEmpty() || tp.topic().length() > 249 || tp.partition() < 0) {
                    throw new IllegalArgumentException("verification request names an invalid partition");
                }
                asked.add(new TopicPartition(tp.topic(), tp.partition()));
            }
        } catch (NoSuchFileException e) {
            inFlight.remove(name);
            return;
        } catch (IOException | RuntimeException e) {
            LOG.warnf("dropping an unreadable verification request file=%s: %s", p, e.toString());
            delete(p);
            inFlight.remove(name);
            return;
        }
        CompletableFuture<Map<TopicPartition, Errors>> answer;
        try {
            answer = answering.verify(v.transactionalId(), v.producerId(), v.producerEpoch(), asked);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((errors, failure) -> io.execute(() -> {
            List<Partition> out = new java.util.ArrayList<>(asked.size());
            for (TopicPartition tp : asked) {
                Errors e = failure != null ? Errors.forException(unwrap(failure)) : errors.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR);
                out.add(new Partition(tp.topic(), tp.partition(), e.code()));
            }
            try {
                AtomicFiles.publish(disk, dir(me).resolve(name + ".vres"), Json.bytes(new Verified(out)));
                delete(p);
            } catch (IOException | RuntimeException e) {
                LOG.warnf("could not answer verification request %s: %s", name, e.toString());
            } finally {
                inFlight.remove(name);
            }
            ring.accept(v.from());
        }));
    }

    /** A request from a coordinator epoch older than the slot's current one in our assignment: a deposed coordinator's. */
    private Errors staleCoordinator(Request r) {
        Assignment a = assignment.get();
        for (SlotAssignment s : a.txnSlots()) {
            if (s.slot() == r.slot() && s.epoch() > r.coordinatorEpoch()) {
                return Errors.TRANSACTION_COORDINATOR_FENCED;
            }
        }
        return null;
    }

    private static Request valid(Request r) {
        if (r == null || r.topic() == null || r.topic().isEmpty() || r.topic().length() > 249 || r.partition() < 0
                || r.slot() < 0 || r.slot() >= Assignment.SLOTS || r.producerId() < 0 || r.producerEpoch() < 0
                || (!r.topic().equals(TxnStateMachine.GROUP_OFFSETS) && Topic.isInternal(r.topic()))) {
            throw new IllegalArgumentException("marker request out of range: " + r);
        }
        return r;
    }

    // ------------------------------------------------------------------ both

    /** The fallback for lost rings, and the timeout of requests nobody answers. */
    void sweep() {
        try {
            drainRequests();
            long now = clock.getAsLong();
            Set<Integer> leaders = ConcurrentHashMap.newKeySet();
            pending.forEach((name, p) -> {
                leaders.add(p.peer());
                if (now - p.sentMs() > TIMEOUT_MS && pending.remove(name, p)) {
                    delete(p.request());
                    p.failed().accept(new org.apache.kafka.common.errors.TimeoutException("no answer from broker " + p.peer()
                            + " within " + TIMEOUT_MS + " ms"));
                }
            });
            leaders.forEach(this::collectResults);
        } catch (RuntimeException e) {
            LOG.warnf(e, "marker sweep failed");
        }
    }

    private Path dir(int broker) {
        return root.resolve("to-" + broker);
    }

    private static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (var files = Files.list(dir)) {
            return files.toList();
        } catch (IOException e) {
            LOG.debugf("could not list %s: %s", dir, e.toString());
            return List.of();
        }
    }

    private static long modified(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            return Long.MAX_VALUE;
        }
    }

    private void delete(Path p) {
        try {
            disk.delete(p);
        } catch (IOException e) {
            LOG.debugf("could not delete %s: %s", p, e.toString());
        }
    }

    private static Throwable unwrap(Throwable t) {
        return dev.kaas.broker.protocol.ErrorMapper.unwrap(t);
    }
}
