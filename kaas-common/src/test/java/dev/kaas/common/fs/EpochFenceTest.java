package dev.kaas.common.fs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fence's answers, in particular that {@link EpochFence#holds}, which remembers what it read
 * last, still notices every change another process can make: a newer epoch, the same epoch's file
 * replaced by another owner, a newer epoch in the legacy file.
 */
class EpochFenceTest {
    @TempDir
    Path tmp;

    /** The legacy file in the shape tests can write by hand: "epoch owner". */
    private EpochFence fence(Path dir) {
        return new EpochFence(Disk.SYSTEM, dir, "leader-epoch",
                b -> {
                    String[] f = new String(b, StandardCharsets.UTF_8).trim().split(" ");
                    return new EpochFence.Holder(Long.parseLong(f[0]), Integer.parseInt(f[1]));
                },
                h -> (h.epoch() + " " + h.owner()).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aClaimHoldsUntilANewerEpochClaimsAndAnOlderOneIsRefused() throws Exception {
        EpochFence a = fence(tmp);
        EpochFence b = fence(tmp);

        assertThat(a.claim(3, 1)).isNull();
        assertThat(a.holds(3, 1)).isTrue();
        assertThat(a.holds(3, 1)).as("asked again, answered from what it read").isTrue();
        assertThat(b.claim(2, 2)).isEqualTo(new EpochFence.Holder(3, 1));

        assertThat(b.claim(4, 2)).isNull();
        assertThat(a.holds(3, 1)).isFalse();
        assertThat(b.holds(4, 2)).isTrue();
        assertThat(a.holder()).isEqualTo(new EpochFence.Holder(4, 2));
        assertThat(Files.readString(tmp.resolve("leader-epoch"))).isEqualTo("4 2");
        assertThat(Files.list(tmp.resolve("leader-epochs"))).as("older epochs pruned").hasSize(1);
    }

    @Test
    void theSameEpochsFileReplacedByAnotherOwnerIsNoticedAfterACheckThatWasRemembered() throws Exception {
        EpochFence a = fence(tmp);
        assertThat(a.claim(5, 1)).isNull();
        assertThat(a.holds(5, 1)).isTrue();

        // Another process writes the same epoch for itself, the way every fence file is written: temp + rename.
        AtomicFiles.write(Disk.SYSTEM, tmp.resolve("leader-epochs").resolve("00000005"), Json.bytes(new EpochFence.Holder(5, 2)));

        assertThat(a.holds(5, 1)).isFalse();
        assertThat(fence(tmp).holds(5, 2)).isTrue();
    }

    @Test
    void aNewerEpochInTheLegacyFileIsNoticedAfterACheckThatWasRemembered() throws Exception {
        EpochFence a = fence(tmp);
        assertThat(a.claim(7, 1)).isNull();
        assertThat(a.holds(7, 1)).isTrue();

        // An older kaas binary (rolling upgrade) knows only the single file and rewrites it for its newer epoch.
        AtomicFiles.write(Disk.SYSTEM, tmp.resolve("leader-epoch"), "8 3".getBytes(StandardCharsets.UTF_8));

        assertThat(a.holds(7, 1)).isFalse();
        assertThat(a.holder()).isEqualTo(new EpochFence.Holder(8, 3));
        assertThat(fence(tmp).claim(7, 1)).as("the legacy epoch refuses older claims").isEqualTo(new EpochFence.Holder(8, 3));
    }

    @Test
    void aFenceNobodyClaimedHasNoHolderAndTheLegacyFileAloneDecides() throws Exception {
        EpochFence a = fence(tmp);
        assertThat(a.holder()).isNull();
        assertThat(a.holds(0, 1)).isFalse();

        Files.writeString(tmp.resolve("leader-epoch"), "2 9");
        assertThat(a.holder()).isEqualTo(new EpochFence.Holder(2, 9));
        assertThat(a.claim(1, 1)).isEqualTo(new EpochFence.Holder(2, 9));
        assertThat(a.claim(2, 1)).as("the same epoch as the legacy holder, another owner: the epoch file decides").isNull();
        assertThat(a.holds(2, 1)).isTrue();
    }

    @Test
    void namesThatAreNotEpochsAreIgnored() throws Exception {
        EpochFence a = fence(tmp);
        assertThat(a.claim(1, 1)).isNull();
        Path dir = tmp.resolve("leader-epochs");
        Files.writeString(dir.resolve(".00000009.tmp"), "half-written");
        Files.writeString(dir.resolve("0000000G"), "not hex");
        Files.writeString(dir.resolve("0000009"), "too short");

        assertThat(a.holds(1, 1)).isTrue();
        assertThat(a.claim(10, 2)).isNull();
        assertThat(a.holds(1, 1)).isFalse();
        assertThat(Files.exists(dir.resolve("0000000a"))).isTrue();
    }
}
