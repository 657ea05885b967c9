package dev.kaas.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;

/** Every transition of the coordinator's state machine and every error code it answers, as Apache 3.7. */
class TxnStateMachineTest {
    static final long NOW = 1_000_000;
    static final TopicPartition A = new TopicPartition("a", 0);
    static final TopicPartition B = new TopicPartition("b", 1);
    static final long NO_PID = RecordBatch.NO_PRODUCER_ID;
    static final short NO_EPOCH = RecordBatch.NO_PRODUCER_EPOCH;

    final TxnStateMachine m = new TxnStateMachine(900_000, 604_800_000L);

    /** Applies a write decision (as the runtime does once it is durable) and returns its answer. */
    Errors run(TxnStateMachine.Decision d) {
        if (d instanceof TxnStateMachine.Decision.Write w) {
            m.apply(w.next());
            return w.answer();
        }
        assertThat(d).isInstanceOf(TxnStateMachine.Decision.Answer.class);
        return ((TxnStateMachine.Decision.Answer) d).error();
    }

    TxnMetadata init(String id, long newPid) {
        TxnStateMachine.Decision d = m.initProducerId(id, 60_000, NO_PID, NO_EPOCH, -1, NOW);
        if (d instanceof TxnStateMachine.Decision.NeedProducerId) {
            d = m.initProducerId(id, 60_000, NO_PID, NO_EPOCH, newPid, NOW);
        }
        assertThat(run(d)).isEqualTo(Errors.NONE);
        return m.get(id);
    }

    TxnMetadata ongoing(String id) {
        TxnMetadata t = init(id, 100);
        assertThat(run(m.addPartitions(id, t.producerId(), t.producerEpoch(), Set.of(A, B), NOW + 1))).isEqualTo(Errors.NONE);
        return m.get(id);
    }

    @Test
    void aNewIdNeedsAProducerIdAndStartsEmptyAtEpochZero() {
        assertThat(m.initProducerId("t", 60_000, NO_PID, NO_EPOCH, -1, NOW)).isInstanceOf(TxnStateMachine.Decision.NeedProducerId.class);
        TxnMetadata t = init("t", 100);
        assertThat(t.producerId()).isEqualTo(100);
        assertThat(t.producerEpoch()).isEqualTo((short) 0);
        assertThat(t.state()).isEqualTo(TxnState.EMPTY);
    }

    @Test
    void initProducerIdAgainBumpsTheEpochAndKeepsTheId() {
        init("t", 100);
        TxnMetadata again = init("t", 999);
        assertThat(again.producerId()).isEqualTo(100);
        assertThat(again.producerEpoch()).isEqualTo((short) 1);
    }

    @Test
    void requestValidation() {
        assertThat(run(m.initProducerId("", 60_000, NO_PID, NO_EPOCH, 1, NOW))).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(run(m.initProducerId("t", 0, NO_PID, NO_EPOCH, 1, NOW))).isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
        assertThat(run(m.initProducerId("t", 900_001, NO_PID, NO_EPOCH, 1, NOW))).isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
        assertThat(run(m.addPartitions("", 1, (short) 0, Set.of(A), NOW))).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(run(m.endTxn("", 1, (short) 0, true, NOW))).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(run(m.addPartitions("unknown", 1, (short) 0, Set.of(A), NOW))).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(run(m.endTxn("unknown", 1, (short) 0, true, NOW))).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void addPartitionsChecksProducerIdThenEpoch() {
        TxnMetadata t = init("t", 100);
        assertThat(run(m.addPartitions("t", 101, t.producerEpoch(), Set.of(A), NOW))).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(run(m.addPartitions("t", 100, (short) 5, Set.of(A), NOW))).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(m.get("t").state()).isEqualTo(TxnState.EMPTY);
    }

    @Test
    void addPartitionsOpensTheTransactionOnceAndGrowsIt() {
        TxnMetadata t = init("t", 100);
        assertThat(run(m.addPartitions("t", 100, t.producerEpoch(), Set.of(A), NOW + 5))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").state()).isEqualTo(TxnState.ONGOING);
        assertThat(m.get("t").startTimestamp()).isEqualTo(NOW + 5);
        // Already in: nothing to write.
        assertThat(m.addPartitions("t", 100, t.producerEpoch(), Set.of(A), NOW + 6)).isInstanceOf(TxnStateMachine.Decision.Answer.class);
        assertThat(run(m.addPartitions("t", 100, t.producerEpoch(), Set.of(B), NOW + 7))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").partitionSet()).containsExactly(A, B);
        assertThat(m.get("t").startTimestamp()).as("the start stays").isEqualTo(NOW + 5);
    }

    @Test
    void endTxnPreparesThenCompletesWithMarkers() {
        TxnMetadata t = ongoing("t");
        TxnStateMachine.Decision d = m.endTxn("t", t.producerId(), t.producerEpoch(), true, NOW + 10);
        assertThat(d).isInstanceOfSatisfying(TxnStateMachine.Decision.Write.class, w -> {
            assertThat(w.sendMarkers()).isTrue();
            assertThat(w.next().state()).isEqualTo(TxnState.PREPARE_COMMIT);
        });
        run(d);
        TxnMetadata done = m.complete("t", t.producerId(), t.producerEpoch(), NOW + 20);
        assertThat(done.state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(done.partitions()).isEmpty();
        m.apply(done);
        // A new transaction may begin after it.
        assertThat(run(m.addPartitions("t", t.producerId(), t.producerEpoch(), Set.of(A), NOW + 30))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").startTimestamp()).isEqualTo(NOW + 30);
    }

    @Test
    void endTxnInEveryStateAnswersAsApache() {
        TxnMetadata t = init("t", 100);
        short e = t.producerEpoch();
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).as("Empty").isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).as("Empty").isEqualTo(Errors.INVALID_TXN_STATE);
        run(m.addPartitions("t", 100, e, Set.of(A), NOW));
        assertThat(run(m.endTxn("t", 100, (short) (e + 1), true, NOW))).as("epoch mismatch").isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).isEqualTo(Errors.NONE);
        // PrepareCommit: a retried commit waits, an abort is invalid; so is adding partitions.
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(run(m.addPartitions("t", 100, e, Set.of(B), NOW))).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(run(m.initProducerId("t", 60_000, NO_PID, NO_EPOCH, -1, NOW))).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        m.apply(m.complete("t", 100, e, NOW));
        // CompleteCommit: the retried commit is answered as the first; an abort is invalid.
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).isEqualTo(Errors.NONE);
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).isEqualTo(Errors.INVALID_TXN_STATE);

        run(m.addPartitions("t", 100, e, Set.of(A), NOW));
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).isEqualTo(Errors.NONE);
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).as("PrepareAbort").isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).as("PrepareAbort").isEqualTo(Errors.INVALID_TXN_STATE);
        m.apply(m.complete("t", 100, e, NOW));
        assertThat(run(m.endTxn("t", 100, e, false, NOW))).as("CompleteAbort").isEqualTo(Errors.NONE);
        assertThat(run(m.endTxn("t", 100, e, true, NOW))).as("CompleteAbort").isEqualTo(Errors.INVALID_TXN_STATE);
    }

    @Test
    void initProducerIdDuringAnOpenTransactionAbortsItUnderABumpedEpoch() {
        TxnMetadata t = ongoing("t");
        TxnStateMachine.Decision d = m.initProducerId("t", 60_000, NO_PID, NO_EPOCH, -1, NOW + 10);
        assertThat(d).isInstanceOfSatisfying(TxnStateMachine.Decision.Write.class, w -> {
            assertThat(w.answer()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
            assertThat(w.sendMarkers()).isTrue();
            assertThat(w.next().state()).isEqualTo(TxnState.PREPARE_ABORT);
            assertThat(w.next().producerEpoch()).isEqualTo((short) (t.producerEpoch() + 1));
        });
        run(d);
        // The old producer is fenced from here on.
        assertThat(run(m.endTxn("t", t.producerId(), t.producerEpoch(), true, NOW))).isEqualTo(Errors.PRODUCER_FENCED);
        m.apply(m.complete("t", t.producerId(), (short) (t.producerEpoch() + 1), NOW + 20));
        TxnMetadata after = init("t", -1);
        assertThat(after.producerEpoch()).as("Apache: the fencing bump, then the new producer's").isEqualTo((short) (t.producerEpoch() + 2));
    }

    @Test
    void kip360BumpsRetriesAndFencing() {
        TxnMetadata t = init("t", 100);
        short e = t.producerEpoch();
        // A producer recovering from an abortable error bumps with its current id and epoch.
        assertThat(run(m.initProducerId("t", 60_000, 100, e, -1, NOW))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").producerEpoch()).isEqualTo((short) (e + 1));
        assertThat(m.get("t").lastProducerEpoch()).isEqualTo(e);
        // Its retry (the answer was lost) gets the same epoch again.
        assertThat(run(m.initProducerId("t", 60_000, 100, e, -1, NOW))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").producerEpoch()).isEqualTo((short) (e + 1));
        // Anything else is a zombie.
        assertThat(run(m.initProducerId("t", 60_000, 100, (short) (e + 7), -1, NOW))).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(run(m.initProducerId("t", 60_000, 555, e, -1, NOW))).isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void anExhaustedEpochRotatesToANewProducerId() {
        short exhausted = (short) (Short.MAX_VALUE - 1);
        m.apply(new TxnMetadata("t", 100, NO_PID, exhausted, NO_EPOCH, 60_000, TxnState.EMPTY, List.of(), -1, NOW));
        assertThat(m.initProducerId("t", 60_000, 100, exhausted, -1, NOW)).isInstanceOf(TxnStateMachine.Decision.NeedProducerId.class);
        assertThat(run(m.initProducerId("t", 60_000, 100, exhausted, 200, NOW))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").producerId()).isEqualTo(200);
        assertThat(m.get("t").producerEpoch()).isEqualTo((short) 0);
        assertThat(m.get("t").lastProducerId()).isEqualTo(100);
        // The producer's retry of that rotation (its answer lost) names the old id at the exhausted epoch: it gets the new id again.
        assertThat(run(m.initProducerId("t", 60_000, 100, exhausted, -1, NOW))).isEqualTo(Errors.NONE);
        assertThat(m.get("t").producerId()).isEqualTo(200);
        assertThat(m.get("t").producerEpoch()).isEqualTo((short) 0);
        // Without an expected epoch, an exhausted epoch rotates as well.
        m.apply(new TxnMetadata("u", 300, NO_PID, exhausted, NO_EPOCH, 60_000, TxnState.COMPLETE_ABORT, List.of(), -1, NOW));
        assertThat(run(m.initProducerId("u", 60_000, NO_PID, NO_EPOCH, 301, NOW))).isEqualTo(Errors.NONE);
        assertThat(m.get("u").producerId()).isEqualTo(301);
    }

    @Test
    void timedOutTransactionsAbortUnderABumpedEpochOnlyPastTheirTimeout() {
        TxnMetadata t = ongoing("t");
        assertThat(m.timedOut(NOW + 1 + 60_000)).isEmpty();
        List<TxnMetadata> out = m.timedOut(NOW + 1 + 60_001);
        assertThat(out).singleElement().satisfies(n -> {
            assertThat(n.state()).isEqualTo(TxnState.PREPARE_ABORT);
            assertThat(n.producerEpoch()).isEqualTo((short) (t.producerEpoch() + 1));
            assertThat(n.partitionSet()).containsExactly(A, B);
        });
    }

    @Test
    void onlySettledIdsExpire() {
        ongoing("open");
        init("idle", 101);
        assertThat(m.expired(NOW + 604_800_000L)).containsExactly("idle");
    }

    @Test
    void verifyOnlyReportsMembership() {
        TxnMetadata t = init("t", 100);
        run(m.addPartitions("t", 100, t.producerEpoch(), Set.of(A), NOW));
        assertThat(m.verify("t", 100, t.producerEpoch(), Set.of(A, B)))
                .containsEntry(A, Errors.NONE).containsEntry(B, Errors.INVALID_TXN_STATE);
        assertThat(m.verify("t", 100, (short) 9, Set.of(A))).containsEntry(A, Errors.PRODUCER_FENCED);
    }

    @Test
    void anIllegalTransitionIsAnError() {
        TxnMetadata t = init("t", 100);
        assertThatThrownBy(() -> t.to(TxnState.COMPLETE_COMMIT, 100, NO_PID, (short) 0, NO_EPOCH, 1, List.of(), -1, NOW))
                .isInstanceOf(IllegalStateException.class);
    }
}
