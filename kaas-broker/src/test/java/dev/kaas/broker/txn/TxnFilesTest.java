package dev.kaas.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.fs.AtomicFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The slot file under the volume contract: fenced by the slot epoch, ids never become names, untrusted bytes validated. */
class TxnFilesTest {
    @TempDir
    Path data;

    static TxnMetadata txn(String id, TxnState state, long pid) {
        return new TxnMetadata(id, pid, -1, (short) 1, (short) -1, 60_000, state, List.of(new TopicPartition("t", 0)), 5, 6);
    }

    @Test
    void aNewOwnerReadsWhatTheOldOneWroteAndFencesItsLaterWrites() throws Exception {
        TxnFiles old = new TxnFiles(data, 4, 1, 1);
        old.acquire();
        old.save(List.of(txn("a", TxnState.PREPARE_COMMIT, 10)));

        TxnFiles successor = new TxnFiles(data, 4, 2, 2);
        successor.acquire();
        assertThat(successor.load()).containsExactly(txn("a", TxnState.PREPARE_COMMIT, 10));
        successor.save(successor.load());

        assertThatThrownBy(() -> old.save(List.of(txn("a", TxnState.ONGOING, 99)))).isInstanceOf(NotCoordinatorException.class);
        // Whatever the deposed owner left in its own epoch's file, the next owner reads the successor's.
        TxnFiles third = new TxnFiles(data, 4, 3, 1);
        third.acquire();
        assertThat(third.load()).containsExactly(txn("a", TxnState.PREPARE_COMMIT, 10));
    }

    /**
     * A decision the coordinator answered survives a power loss; a loss mid-write leaves the old or
     * the new state, never neither: for a journal append and for a new owner's first write (a snapshot).
     */
    @Test
    void aSaveThatReturnedSurvivesPowerLossAndALossMidWriteLeavesTheOldOrTheNew() throws Exception {
        for (boolean snapshot : new boolean[] {false, true}) {
            int cuts = 0;
            for (int step = 0; step < 24; step++) {
                Path dir = Files.createDirectories(data.resolve("cut-" + snapshot + "-" + step));
                dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
                TxnFiles owner = new TxnFiles(dir, 4, 1, 1, disk);
                owner.acquire();
                owner.save(List.of(txn("a", TxnState.ONGOING, 10)));
                TxnFiles writer = owner;
                if (snapshot) {
                    writer = new TxnFiles(dir, 4, 2, 2, disk);
                    writer.acquire();
                    writer.load();
                }
                TxnFiles cutOne = writer;
                boolean returned = disk.cutAfter(step, () -> cutOne.save(List.of(txn("a", TxnState.PREPARE_COMMIT, 10))));
                cuts += returned ? 0 : 1;

                TxnFiles next = new TxnFiles(dir, 4, 3, 3);
                next.acquire();
                var loaded = next.load();
                assertThat(loaded).as("after a loss at step %d the transaction is still there", step).hasSize(1);
                TxnState state = loaded.iterator().next().state();
                assertThat(state).as("loss at step %d", step).isIn(TxnState.ONGOING, TxnState.PREPARE_COMMIT);
                if (returned) {
                    assertThat(state).as("a save that returned, loss at step %d", step).isEqualTo(TxnState.PREPARE_COMMIT);
                }
            }
            assertThat(cuts).as("writes cut (snapshot=%s)", snapshot).isGreaterThanOrEqualTo(2);
        }
    }

    /** Writes after the first append only what changed; a reload replays them, across compactions. */
    @Test
    void theJournalCarriesEveryWriteAcrossCompactions() throws Exception {
        TxnFiles files = new TxnFiles(data, 6, 1, 1);
        files.acquire();
        java.util.Map<String, TxnMetadata> state = new java.util.LinkedHashMap<>();
        int writes = TxnFiles.COMPACT_RECORDS * 2 + 17;
        for (int i = 0; i < writes; i++) {
            String id = "id-" + (i % 7);
            state.put(id, txn(id, i % 2 == 0 ? TxnState.ONGOING : TxnState.PREPARE_COMMIT, i));
            if (i % 50 == 49) {
                state.remove("id-3");
            }
            files.save(List.copyOf(state.values()));
        }
        assertThat(new TxnFiles(data, 6, 1, 1).load()).containsExactlyInAnyOrderElementsOf(state.values());
        try (var list = Files.list(TxnFiles.slotDir(data, 6))) {
            assertThat(list.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("journal."))).as("one journal generation left")
                    .containsExactly("journal.00000001.00000002.log");
        }
    }

    /**
     * A deposed owner's compaction must not delete the journal its successor is about to replay:
     * superseded files go only after the fence check, and a snapshot whose journal is missing is
     * refused rather than loaded as if the journal were empty.
     */
    @Test
    void aDeposedOwnersCompactionDeletesNothingItsSuccessorNeeds() throws Exception {
        TxnFiles old = new TxnFiles(data, 6, 1, 1);
        old.acquire();
        old.save(List.of(txn("a", TxnState.EMPTY, 1)));
        old.save(List.of(txn("a", TxnState.PREPARE_COMMIT, 1)));   // journal generation 0

        TxnFiles successor = new TxnFiles(data, 6, 2, 2);
        successor.acquire();
        // The deposed owner keeps writing until a compaction: its snapshot is refused by the fence and removes nothing.
        for (int i = 0; i < TxnFiles.COMPACT_RECORDS + 1; i++) {
            int n = i;
            try {
                old.save(List.of(txn("a", TxnState.PREPARE_COMMIT, 1), txn("b" + n, TxnState.EMPTY, 2)));
            } catch (org.apache.kafka.common.errors.NotCoordinatorException expected) {
                // every write after the successor's fence is refused
            }
        }
        assertThat(TxnFiles.slotDir(data, 6).resolve("journal.00000001.00000000.log")).exists();

        Files.delete(TxnFiles.slotDir(data, 6).resolve("journal.00000001.00000001.log"));
        assertThatThrownBy(successor::load).as("the snapshot names a journal that is gone").isInstanceOf(IOException.class);
    }

    /** A record torn by a crash (never acknowledged) ends the replay; everything before it counts. */
    @Test
    void aTornJournalRecordEndsTheReplay() throws Exception {
        TxnFiles files = new TxnFiles(data, 6, 1, 1);
        files.acquire();
        files.save(List.of(txn("a", TxnState.EMPTY, 1)));
        files.save(List.of(txn("a", TxnState.ONGOING, 1)));
        Path journal = TxnFiles.slotDir(data, 6).resolve("journal.00000001.00000000.log");
        long whole = Files.size(journal);
        files.save(List.of(txn("a", TxnState.PREPARE_COMMIT, 1)));
        long end = Files.size(journal);
        for (long cut = whole; cut < end; cut++) {
            try (var ch = java.nio.channels.FileChannel.open(journal, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            assertThat(new TxnFiles(data, 6, 1, 1).load()).as("cut at %d", cut).containsExactly(txn("a", TxnState.ONGOING, 1));
        }
    }

    @Test
    void anOpenerWithAnOlderEpochCannotTakeTheSlotBack() throws Exception {
        new TxnFiles(data, 4, 5, 1).acquire();
        assertThatThrownBy(() -> new TxnFiles(data, 4, 4, 2).acquire()).isInstanceOf(NotCoordinatorException.class);
    }

    @Test
    void hostileTransactionalIdsStayInsideTheSlotFile() throws Exception {
        TxnFiles files = new TxnFiles(data, 0, 1, 1);
        files.acquire();
        List<TxnMetadata> ids = List.of(txn("../../etc/passwd", TxnState.EMPTY, 1), txn("a/b", TxnState.EMPTY, 2),
                txn("nul\u0000id", TxnState.EMPTY, 3), txn("x".repeat(32767), TxnState.EMPTY, 4));
        files.save(ids);
        assertThat(new TxnFiles(data, 0, 1, 1).load()).containsExactlyInAnyOrderElementsOf(ids);
        try (var walk = Files.walk(data)) {
            assertThat(walk.filter(Files::isRegularFile).map(p -> p.getFileName().toString()))
                    .allMatch(n -> n.startsWith("state.") || n.startsWith("journal.") || n.equals("fence") || n.matches("[0-9a-f]{8}"));
        }
    }

    @Test
    void aSlotFileWithInvalidEntriesIsRefusedWhole() throws Exception {
        TxnFiles files = new TxnFiles(data, 2, 1, 1);
        files.acquire();
        Path file = TxnFiles.slotDir(data, 2).resolve("state.00000001.json");
        for (String bad : List.of(
                "{\"slot\":2,\"epoch\":1,\"transactions\":[{\"transactionalId\":\"a\",\"producerId\":1,\"timeoutMs\":1,\"state\":\"Bogus\"}]}",
                "{\"slot\":2,\"epoch\":1,\"transactions\":[{\"transactionalId\":\"a\",\"producerId\":-5,\"timeoutMs\":1,\"state\":\"Empty\"}]}",
                "{\"slot\":2,\"epoch\":1,\"transactions\":[{\"transactionalId\":\"a\",\"producerId\":1,\"timeoutMs\":1,\"state\":\"Empty\","
                        + "\"partitions\":[{\"topic\":\"t\",\"partition\":-1}]}]}",
                "not json")) {
            AtomicFiles.write(file, bad.getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(files::load).as(bad).isInstanceOf(IOException.class);
        }
    }
}
