package dev.kaas.broker.data;

import org.apache.kafka.common.protocol.Errors;

/** Apache's check of a client's {@code current_leader_epoch} against the leader's. */
final class LeaderEpochs {
    private LeaderEpochs() {
    }

    static Errors check(int requestEpoch, int leaderEpoch) {
        if (requestEpoch < 0) {
            return Errors.NONE;
        }
        if (requestEpoch > leaderEpoch) {
            return Errors.UNKNOWN_LEADER_EPOCH;
        }
        if (requestEpoch < leaderEpoch) {
            return Errors.FENCED_LEADER_EPOCH;
        }
        return Errors.NONE;
    }
}
