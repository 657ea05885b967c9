package dev.kaas.common.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AssignmentChunksTest {
    @Test
    void aPayloadLargerThanGrpcsDefaultMessageLimitCrossesInPiecesUnderIt() {
        byte[] payload = new byte[9 * 1024 * 1024 + 17];
        new Random(1).nextBytes(payload);
        List<byte[]> pieces = AssignmentChunks.split(payload, AssignmentChunks.CHUNK_BYTES);
        assertThat(pieces).hasSize(10).allSatisfy(p -> assertThat(p.length).isLessThanOrEqualTo(4 * 1024 * 1024 - 1024));

        AssignmentChunks.Assembler assembler = new AssignmentChunks.Assembler();
        Optional<byte[]> whole = Optional.empty();
        for (int i = 0; i < pieces.size(); i++) {
            assertThat(whole).isEmpty();
            whole = assembler.accept(42, i, pieces.size(), pieces.get(i));
        }
        assertThat(whole).hasValueSatisfying(w -> assertThat(w).isEqualTo(payload));
    }

    @Test
    void emptyAndSmallPayloadsAreOnePiece() {
        assertThat(AssignmentChunks.split(new byte[0], 10)).hasSize(1);
        assertThat(AssignmentChunks.split(new byte[10], 10)).hasSize(1);
        assertThat(AssignmentChunks.split(new byte[11], 10)).hasSize(2);
        assertThat(new AssignmentChunks.Assembler().accept(1, 0, 1, new byte[] {7})).hasValue(new byte[] {7});
    }

    @Test
    void aPieceOutOfSequenceDropsTheHalfBuiltAssignmentAndTheNextWholeOneIsApplied() {
        AssignmentChunks.Assembler assembler = new AssignmentChunks.Assembler();
        assembler.accept(1, 0, 3, new byte[] {1});
        assertThatThrownBy(() -> assembler.accept(1, 2, 3, new byte[] {3})).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> assembler.accept(1, 1, 3, new byte[] {2})).isInstanceOf(IllegalStateException.class);
        assembler.accept(2, 0, 2, new byte[] {1});
        assertThatThrownBy(() -> assembler.accept(3, 1, 2, new byte[] {2})).isInstanceOf(IllegalStateException.class);
        assertThat(assembler.accept(4, 0, 2, new byte[] {5})).isEmpty();
        assertThat(assembler.accept(4, 1, 2, new byte[] {6})).hasValue(new byte[] {5, 6});
    }
}
