package dev.kaas.broker.group;

import dev.kaas.broker.storage.VerificationGuards;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** The offsets half of a slot on its own, against a fake membership half and a store that can fail. */
class GroupOffsetsTest {
    final MockScheduler scheduler = new MockScheduler();
    final Map<String, ClassicGroup> groups = new HashMap<>();
    final List<String> active = new ArrayList<>();
    boolean closed;
    boolean failWrites;
    final Map<String, GroupStore.StoredGroup> saved = new HashMap<>();
    final TopicPartition tp = new TopicPartition("t", 0);

    final GroupStore store = new GroupStore() {
        @Override
        public Map<String, StoredGroup> loadAll() {
            return new HashMap<>(saved);
        }

        @Override
        public void save(StoredGroup group) throws IOException {
            if (failWrites) {
                throw new IOException("disk gone");
            }
            saved.put(group.groupId(), group);
        }

        @Override
        public void delete(String groupId) throws IOException {
            if (failWrites) {
                throw new IOException("disk gone");
            }
            saved.remove(groupId);
        }
    };

    final GroupCounters counters = new GroupCounters();
    final GroupOffsets offsets = new GroupOffsets(0, GroupConfig.defaults(), scheduler.clock::get, scheduler, store,
            p -> p.topic().equals("t"), new GroupOffsets.Membership() {
                public boolean closed() {
                    return closed;
                }

                public ClassicGroup group(String groupId) {
                    return groups.get(groupId);
                }

                public Collection<ClassicGroup> groups() {
                    return List.copyOf(groups.values());
                }

                public void add(ClassicGroup group) {
                    groups.put(group.groupId(), group);
                }

                public void removeGroup(ClassicGroup group) {
                    groups.remove(group.groupId());
                }

                public Errors validateCurrentMember(ClassicGroup group, String memberId, String groupInstanceId) {
                    return group.has(memberId) ? null : Errors.UNKNOWN_MEMBER_ID;
                }

                public void memberActive(ClassicGroup group, String memberId) {
                    active.add(memberId);
                }

                public void maybeDropEmpty(ClassicGroup group) {
                }
            }, counters);

    List<GroupShard.OffsetToCommit> commitOf(long offset) {
        return List.of(new GroupShard.OffsetToCommit(tp, offset, -1, ""));
    }

    @Test
    void aCommitIsAppliedOnlyOnceTheStoreHasIt() throws Exception {
        // Given a simple group with offset 1 committed
        assertThat(offsets.commit("g", "", null, -1, commitOf(1), -1)).containsEntry(tp, Errors.NONE);

        // When the next commit's write fails
        failWrites = true;
        assertThatThrownBy(() -> offsets.commit("g", "", null, -1, commitOf(2), -1)).isInstanceOf(IOException.class);

        // Then the group still serves what is on the store, and only the stored commit is counted
        assertThat(offsets.fetch("g", List.of(tp)).get(tp).offset()).isEqualTo(1);
        assertThat(saved.get("g").offsets().get(tp).offset()).isEqualTo(1);
        assertThat(counters.offsetCommits()).isEqualTo(1);
    }

    @Test
    void aFirstCommitThatFailsCreatesNoGroup() {
        failWrites = true;
        assertThatThrownBy(() -> offsets.commit("new", "", null, -1, commitOf(1), -1)).isInstanceOf(IOException.class);
        assertThat(groups).doesNotContainKey("new");
    }

    @Test
    void aMemberCommitCountsAsASignOfLifeAndAClosedSlotAnswersNotCoordinator() throws Exception {
        // Given a live group with one member at generation 0
        ClassicGroup g = new ClassicGroup("live", GroupState.EMPTY, 0);
        g.add(new Member("m", null, "c", "h", 1000, 10_000, "consumer", Map.of("range", new byte[0])), null);
        groups.put("live", g);

        // When / Then
        assertThat(offsets.commit("live", "m", null, 0, commitOf(5), -1)).containsEntry(tp, Errors.NONE);
        assertThat(active).containsExactly("m");
        closed = true;
        assertThat(offsets.commit("live", "m", null, 0, commitOf(6), -1)).containsEntry(tp, Errors.NOT_COORDINATOR);
        assertThat(offsets.fetch("live", null).get(tp).offset()).isEqualTo(5);
    }

    @Test
    void transactionalOffsetsArePendingUntilTheCommitMarkerAndDroppedOnAbort() throws Exception {
        // Given offsets committed in producer 7's transaction (a producer-only client: no member, generation -1)
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(10), VerificationGuards.Ticket.DISABLED)).containsEntry(tp, Errors.NONE);
        assertThat(offsets.fetch("g", List.of(tp)).get(tp)).as("not visible before the marker").isNull();
        assertThat(offsets.unstable("g")).containsExactly(tp);
        assertThat(saved.get("g").pending()).containsKey(7L);

        // When the COMMIT marker arrives
        offsets.completeTxn(7L, (short) 0, 3, true);

        // Then they are committed, durably, and nothing is pending
        assertThat(offsets.fetch("g", List.of(tp)).get(tp).offset()).isEqualTo(10);
        assertThat(saved.get("g").offsets().get(tp).offset()).isEqualTo(10);
        assertThat(saved.get("g").pending()).isEmpty();
        assertThat(offsets.unstable("g")).isEmpty();

        // And an aborted transaction's offsets are dropped
        offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(20), VerificationGuards.Ticket.DISABLED);
        offsets.completeTxn(7L, (short) 0, 3, false);
        assertThat(offsets.fetch("g", List.of(tp)).get(tp).offset()).isEqualTo(10);
    }

    /**
     * KIP-890 for offsets: the first TxnOffsetCommit of a transaction here needs the guard its
     * verification started with; a marker in between (the transaction ended) voids it.
     */
    @Test
    void transactionalOffsetsNeedAVerifiedGuardUnlessTheTransactionIsAlreadyOpenHere() throws Exception {
        VerificationGuards.Ticket unconfirmed = offsets.startTxnVerification(7L, (short) 0);
        assertThat(unconfirmed.asks()).isTrue();
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(10), unconfirmed))
                .as("no answer from the coordinator").containsEntry(tp, Errors.INVALID_TXN_STATE);
        VerificationGuards.Ticket ticket = offsets.startTxnVerification(7L, (short) 0);
        assertThat(ticket.asks()).as("the refused verification is over").isTrue();
        ticket.outcome().complete(Errors.NONE);
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(10), ticket)).containsEntry(tp, Errors.NONE);
        assertThat(offsets.startTxnVerification(7L, (short) 0)).as("open here: no verification").isNull();
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(11), VerificationGuards.Ticket.UNVERIFIED))
                .containsEntry(tp, Errors.NONE);
        offsets.completeTxn(7L, (short) 0, 3, true);

        // The race: a verification starts, the transaction's marker arrives, then the late commit.
        VerificationGuards.Ticket late = offsets.startTxnVerification(7L, (short) 0);
        offsets.completeTxn(7L, (short) 0, 3, false);
        late.outcome().complete(Errors.NONE);
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 0, commitOf(99), late)).containsEntry(tp, Errors.INVALID_TXN_STATE);
        assertThat(offsets.unstable("g")).as("nothing pending that no marker would end").isEmpty();
        assertThat(offsets.fetch("g", List.of(tp)).get(tp).offset()).isEqualTo(11);
    }

    @Test
    void zombiesAndDeposedCoordinatorsAreRefused() throws Exception {
        offsets.txnCommit("g", "", null, -1, 7L, (short) 2, commitOf(10), VerificationGuards.Ticket.DISABLED);
        // A zombie producer of an older epoch
        assertThat(offsets.txnCommit("g", "", null, -1, 7L, (short) 1, commitOf(99), VerificationGuards.Ticket.DISABLED)).containsEntry(tp, Errors.INVALID_PRODUCER_EPOCH);
        offsets.completeTxn(7L, (short) 2, 5, true);
        // The next transaction's offsets, then a late marker from a deposed coordinator (epoch 4)
        offsets.txnCommit("g", "", null, -1, 7L, (short) 2, commitOf(20), VerificationGuards.Ticket.DISABLED);
        assertThatThrownBy(() -> offsets.completeTxn(7L, (short) 2, 4, true))
                .isInstanceOf(org.apache.kafka.common.errors.TransactionCoordinatorFencedException.class);
        assertThat(offsets.fetch("g", List.of(tp)).get(tp).offset()).isEqualTo(10);
        assertThat(offsets.unstable("g")).containsExactly(tp);
    }

    @Test
    void aTransactionalCommitFromAMemberIsCheckedLikeApache() throws Exception {
        ClassicGroup g = new ClassicGroup("live", GroupState.EMPTY, 0);
        g.add(new Member("m", null, "c", "h", 1000, 10_000, "consumer", Map.of("range", new byte[0])), null);
        groups.put("live", g);
        assertThat(offsets.txnCommit("live", "other", null, 0, 7L, (short) 0, commitOf(1), VerificationGuards.Ticket.DISABLED)).containsEntry(tp, Errors.UNKNOWN_MEMBER_ID);
        assertThat(offsets.txnCommit("live", "m", null, 3, 7L, (short) 0, commitOf(1), VerificationGuards.Ticket.DISABLED)).containsEntry(tp, Errors.ILLEGAL_GENERATION);
        assertThat(offsets.txnCommit("live", "", null, -1, 7L, (short) 0, commitOf(1), VerificationGuards.Ticket.DISABLED)).as("producer-only clients may")
                .containsEntry(tp, Errors.NONE);
        assertThat(offsets.txnCommit("", "", null, -1, 7L, (short) 0, commitOf(1), VerificationGuards.Ticket.DISABLED)).containsEntry(tp, Errors.INVALID_GROUP_ID);
    }
}
