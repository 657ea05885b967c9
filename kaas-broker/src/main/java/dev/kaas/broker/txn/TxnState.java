package dev.kaas.broker.txn;

import java.util.EnumSet;
import java.util.Set;

/**
 * Apache 3.7's transaction states ({@code TransactionState}), with the names DescribeTransactions
 * and ListTransactions report. Transitions (Apache's {@code validPreviousStates}):
 * <pre>
 * Empty          ← Empty, CompleteCommit, CompleteAbort        (InitProducerId)
 * Ongoing        ← Ongoing, Empty, CompleteCommit, CompleteAbort (AddPartitionsToTxn / AddOffsetsToTxn)
 * PrepareCommit  ← Ongoing                                      (EndTxn commit)
 * PrepareAbort   ← Ongoing                                      (EndTxn abort, timeout, fencing InitProducerId)
 * CompleteCommit ← PrepareCommit                                (every marker written)
 * CompleteAbort  ← PrepareAbort                                 (every marker written)
 * </pre>
 * Apache's transient {@code PrepareEpochFence} and {@code Dead} never reach the slot file here:
 * fencing bumps the epoch in the same write that enters PrepareAbort, and an expired id is removed.
 */
public enum TxnState {
    EMPTY("Empty"),
    ONGOING("Ongoing"),
    PREPARE_COMMIT("PrepareCommit"),
    PREPARE_ABORT("PrepareAbort"),
    COMPLETE_COMMIT("CompleteCommit"),
    COMPLETE_ABORT("CompleteAbort");

    private final String apacheName;

    TxnState(String apacheName) {
        this.apacheName = apacheName;
    }

    /** The name Apache's admin APIs use ("Ongoing", "PrepareCommit", …). */
    public String apacheName() {
        return apacheName;
    }

    public static TxnState forApacheName(String name) {
        for (TxnState s : values()) {
            if (s.apacheName.equals(name)) {
                return s;
            }
        }
        return null;
    }

    boolean canTransitionTo(TxnState next) {
        return switch (next) {
            case EMPTY -> EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT).contains(this);
            case ONGOING -> EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT).contains(this);
            case PREPARE_COMMIT, PREPARE_ABORT -> this == ONGOING;
            case COMPLETE_COMMIT -> this == PREPARE_COMMIT;
            case COMPLETE_ABORT -> this == PREPARE_ABORT;
        };
    }

    /** States in which no transaction is open or finishing: the id may expire, a new transaction may begin. */
    static final Set<TxnState> SETTLED = EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);

    boolean preparing() {
        return this == PREPARE_COMMIT || this == PREPARE_ABORT;
    }
}
