package dev.kaas.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.group.MockScheduler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;

/** The slot runtime on a mock clock: durable before answered, markers until written, takeover, timeouts. */
class TxnSlotTest {
    static final TopicPartition A = new TopicPartition("a", 0);
    static final TopicPartition B = new TopicPartition("b", 0);

    /** A store in memory that can be made to fail, keeping every durable state it was given. */
    static final class MemoryStore implements TxnStore {
        final List<List<TxnMetadata>> saves = new ArrayList<>();
        List<TxnMetadata> initial = List.of();
        RuntimeException failWith;
        boolean ioFailure;

        @Override
        public Collection<TxnMetadata> load() {
            return initial;
        }

        @Override
        public void save(Collection<TxnMetadata> all) throws IOException {
            if (failWith != null) {
                throw failWith;
            }
            if (ioFailure) {
                throw new IOException("disk full");
            }
            saves.add(List.copyOf(all));
        }

        @Override
        public void close() {
        }

        TxnMetadata last(String id) {
            return saves.get(saves.size() - 1).stream().filter(m -> m.transactionalId().equals(id)).findFirst().orElse(null);
        }
    }

    /** Marker delivery the test completes by hand. */
    static final class Markers implements MarkerWriter {
        record Sent(TopicPartition tp, long pid, short epoch, int coordinatorEpoch, boolean commit, CompletableFuture<Void> result) {
        }

        final List<Sent> sent = new ArrayList<>();

        @Override
        public CompletableFuture<Void> write(int slot, TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
                                             boolean commit) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            sent.add(new Sent(tp, producerId, producerEpoch, coordinatorEpoch, commit, f));
            return f;
        }

        List<Sent> to(TopicPartition tp) {
            return sent.stream().filter(s -> s.tp().equals(tp)).toList();
        }
    }

    final MockScheduler scheduler = new MockScheduler();
    final MemoryStore store = new MemoryStore();
    final Markers markers = new Markers();
    final AtomicLong pids = new AtomicLong(1000);
    final TxnSlot slot = new TxnSlot(7, 3, new TxnStateMachine(900_000, 604_800_000L), store, markers,
            () -> CompletableFuture.completedFuture(pids.getAndIncrement()), scheduler, scheduler.clock::get, Runnable::run,
            10_000, 3_600_000);

    TxnSlot.Init init(String id) {
        return slot.initProducerId(id, 60_000, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH).join();
    }

    @Test
    void endTxnIsAnsweredOnceThePrepareIsDurableAndCompletesOnceEveryMarkerIs() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        assertThat(p.error()).isEqualTo(Errors.NONE);
        assertThat(store.last("t").producerId()).isEqualTo(p.producerId());
        assertThat(slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A, B)).join()).isEqualTo(Errors.NONE);

        assertThat(slot.endTxn("t", p.producerId(), p.epoch(), true)).isEqualTo(Errors.NONE);
        assertThat(store.last("t").state()).isEqualTo(TxnState.PREPARE_COMMIT);
        assertThat(markers.sent).extracting(Markers.Sent::tp).containsExactlyInAnyOrder(A, B);
        assertThat(markers.sent).allSatisfy(s -> {
            assertThat(s.commit()).isTrue();
            assertThat(s.coordinatorEpoch()).isEqualTo(3);
        });

        markers.to(A).get(0).result().complete(null);
        assertThat(store.last("t").state()).as("one marker is not all").isEqualTo(TxnState.PREPARE_COMMIT);
        markers.to(B).get(0).result().complete(null);
        assertThat(slot.state().get("t").state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        // The completion rides on the slot's next write: a crash before it leaves Prepare, whose markers are sent again.
        assertThat(store.last("t").state()).isEqualTo(TxnState.PREPARE_COMMIT);
        assertThat(slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join()).isEqualTo(Errors.NONE);
        assertThat(store.last("t").state()).isEqualTo(TxnState.ONGOING);
    }

    @Test
    void theNextTransactionsAddPartitionsWaitsForTheLastOnesMarkersThenProceeds() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join();
        slot.endTxn("t", p.producerId(), p.epoch(), true);
        CompletableFuture<Errors> next = slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(B));
        assertThat(next).as("markers are still out").isNotDone();
        markers.to(A).get(0).result().complete(null);
        assertThat(next).isCompletedWithValue(Errors.NONE);
        assertThat(slot.state().get("t").state()).isEqualTo(TxnState.ONGOING);
        assertThat(slot.state().get("t").partitionSet()).containsExactly(B);
    }

    @Test
    void aWaitForMarkersIsBoundedAndThenAnsweredConcurrentTransactions() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join();
        slot.endTxn("t", p.producerId(), p.epoch(), true);
        CompletableFuture<Errors> next = slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(B));
        scheduler.advance(TxnSlot.MARKER_WAIT_MS - 1);
        assertThat(next).isNotDone();
        scheduler.advance(1);
        assertThat(next).isCompletedWithValue(Errors.CONCURRENT_TRANSACTIONS);
        // A wrong epoch is not worth waiting for.
        assertThat(slot.addPartitions("t", p.producerId(), (short) 9, Set.of(B))).isCompletedWithValue(Errors.PRODUCER_FENCED);
    }

    @Test
    void aWriteThatIsNotDurableIsNeitherAnsweredNorApplied() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join();
        store.ioFailure = true;
        assertThat(slot.endTxn("t", p.producerId(), p.epoch(), true)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(slot.state().get("t").state()).isEqualTo(TxnState.ONGOING);
        assertThat(markers.sent).isEmpty();
    }

    @Test
    void aSlotTakenOverAnswersNotCoordinatorFromThenOn() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        store.failWith = new NotCoordinatorException("fenced");
        assertThat(slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join()).isEqualTo(Errors.NOT_COORDINATOR);
        store.failWith = null;
        assertThat(slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A)).join()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(init("t").error()).isEqualTo(Errors.NOT_COORDINATOR);
    }

    @Test
    void aMarkerThatCannotBeWrittenYetIsRetriedAndAGonePartitionIsDropped() throws Exception {
        slot.open();
        TxnSlot.Init p = init("t");
        slot.addPartitions("t", p.producerId(), p.epoch(), Set.of(A, B)).join();
        slot.endTxn("t", p.producerId(), p.epoch(), false);
        markers.to(A).get(0).result().completeExceptionally(new NotLeaderOrFollowerException("moving"));
        markers.to(B).get(0).result().completeExceptionally(new UnknownTopicOrPartitionException("deleted"));
        assertThat(markers.to(A)).hasSize(1);
        scheduler.advance(TxnSlot.MARKER_RETRY_MIN_MS);
        assertThat(markers.to(A)).as("retried after the back-off").hasSize(2);
        assertThat(markers.to(B)).as("a deleted partition is not retried").hasSize(1);
        markers.to(A).get(1).result().complete(null);
        assertThat(slot.state().get("t").state()).isEqualTo(TxnState.COMPLETE_ABORT);
    }

    @Test
    void aNewOwnerFinishesPreparedTransactionsAndLeavesOngoingOnesToTheirTimeout() throws Exception {
        long now = scheduler.clock.get();
        store.initial = List.of(
                new TxnMetadata("prepared", 10, -1, (short) 4, (short) -1, 60_000, TxnState.PREPARE_COMMIT, List.of(A), now - 100, now - 50),
                new TxnMetadata("open", 11, -1, (short) 2, (short) -1, 60_000, TxnState.ONGOING, List.of(B), now - 100, now - 50));
        slot.open();
        assertThat(store.saves).as("the new owner writes the slot under its own epoch first").isNotEmpty();
        assertThat(markers.sent).singleElement().satisfies(s -> {
            assertThat(s.tp()).isEqualTo(A);
            assertThat(s.commit()).isTrue();
            assertThat(s.epoch()).isEqualTo((short) 4);
        });
        markers.sent.get(0).result().complete(null);
        assertThat(slot.state().get("prepared").state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(slot.state().get("open").state()).isEqualTo(TxnState.ONGOING);

        scheduler.advance(60_000);
        assertThat(markers.to(B)).singleElement().satisfies(s -> {
            assertThat(s.commit()).isFalse();
            assertThat(s.epoch()).as("the abort fences the producer").isEqualTo((short) 3);
        });
        assertThat(store.last("open").state()).isEqualTo(TxnState.PREPARE_ABORT);
        markers.to(B).get(0).result().complete(null);
        assertThat(slot.state().get("open").state()).isEqualTo(TxnState.COMPLETE_ABORT);
    }

    @Test
    void initProducerIdFencingAnOpenTransactionAnswersConcurrentUntilTheAbortCompletes() throws Exception {
        slot.open();
        TxnSlot.Init first = init("t");
        slot.addPartitions("t", first.producerId(), first.epoch(), Set.of(A)).join();
        assertThat(init("t").error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(init("t").error()).as("markers pending").isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        markers.to(A).get(0).result().complete(null);
        TxnSlot.Init second = init("t");
        assertThat(second.error()).isEqualTo(Errors.NONE);
        assertThat(second.producerId()).isEqualTo(first.producerId());
        assertThat(second.epoch()).isEqualTo((short) (first.epoch() + 2));
    }

    @Test
    void idleIdsExpire() throws Exception {
        slot.open();
        init("t");
        scheduler.advance(604_800_000L + 3_600_000);
        assertThat(slot.state().get("t")).isNull();
        assertThat(store.last("t")).isNull();
    }
}
