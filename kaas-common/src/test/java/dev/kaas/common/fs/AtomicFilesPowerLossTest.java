package dev.kaas.common.fs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesPowerLossTest {
    @TempDir
    Path tmp;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String content(Path p) throws Exception {
        Optional<byte[]> b = AtomicFiles.read(p);
        return b.map(x -> new String(x, StandardCharsets.UTF_8)).orElse("<missing>");
    }

    @Test
    void aReturnedWriteSurvivesPowerLoss() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        Path target = tmp.resolve("assignment.json");

        AtomicFiles.write(disk, target, utf8("v1"));
        disk.powerLoss();

        assertThat(content(target)).isEqualTo("v1");
    }

    @Test
    void aLossBetweenAnyTwoStepsLeavesTheOldOrTheNewFileNeverNeither() throws Exception {
        int cuts = 0;
        for (int step = 0; step < 32; step++) {
            Path dir = Files.createDirectories(tmp.resolve("cut-" + step));
            Path target = dir.resolve("catalog.json");
            PowerLossDisk disk = new PowerLossDisk();
            AtomicFiles.write(disk, target, utf8("old"));
            boolean returned = disk.cutAfter(step, () -> AtomicFiles.write(disk, target, utf8("new")));
            cuts += returned ? 0 : 1;

            assertThat(content(target)).as("after a loss at step %d", step).isIn("old", "new");
            if (returned) {
                assertThat(content(target)).as("a write that returned, cut at step %d", step).isEqualTo("new");
            }
        }
        assertThat(cuts).as("the loss must land inside the write at least once per step").isGreaterThan(3);
    }

    @Test
    void withoutTheDirectoryFsyncTheRenameIsNotDurable() throws Exception {
        PowerLossDisk disk = new PowerLossDisk();
        Path target = tmp.resolve("lease");
        AtomicFiles.write(disk, target, utf8("old"));
        Path other = tmp.resolve(".lease.tmp");
        try (var ch = disk.open(other, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(utf8("new")));
            ch.force(true);
        }
        disk.move(other, target);

        disk.powerLoss();

        assertThat(content(target)).as("the model forgets a rename no directory fsync covered").isEqualTo("old");
    }
}
