package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OrphanSweeperTest {
    @TempDir
    Path data;

    private Path topicDir(String name, String id) throws Exception {
        Path dir = data.resolve(name + "-" + id);
        Files.createDirectories(dir.resolve("0"));
        Files.writeString(dir.resolve("0/00000000-00000000000000000000.log"), "bytes");
        return dir;
    }

    @Test
    void onlyDirectoriesOfTopicIdsTheControllerDeletedAreRemoved() throws Exception {
        String deleted = Uuid.randomUuid().toString();
        String deletedWithDashes = Uuid.randomUuid().toString();
        String neverSeen = Uuid.randomUuid().toString();
        Path orphan = topicDir("orders", deleted);
        Path dashed = topicDir("my-topic-with-dashes", deletedWithDashes);
        Path unknown = topicDir("restored", neverSeen);
        Files.createDirectories(data.resolve("__cluster/groups"));
        Files.createDirectories(data.resolve("__warmup-broker-1"));
        OrphanSweeper sweeper = new OrphanSweeper(data, null);

        Set<String> done = sweeper.sweep(sweeper.candidates(), Set.of(deleted, deletedWithDashes),
                (id, dir) -> dev.kaas.common.fs.AtomicFiles.renameAside(dir));

        assertThat(done).containsExactlyInAnyOrder(deleted, deletedWithDashes);
        assertThat(orphan).doesNotExist();
        assertThat(dashed).doesNotExist();
        assertThat(unknown.resolve("0")).as("an id never seen deleted is never swept").isDirectory();
        assertThat(data.resolve("__cluster/groups")).isDirectory();
        assertThat(data.resolve("__warmup-broker-1")).isDirectory();
        try (var left = Files.list(data)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".deleted-"));
        }
    }

    @Test
    void halfRemovedTreesAreFinished() throws Exception {
        Path half = Files.createDirectories(data.resolve("t-" + Uuid.randomUuid() + ".deleted-" + java.util.UUID.randomUUID())
                .resolve("0"));
        OrphanSweeper sweeper = new OrphanSweeper(data, null);

        sweeper.sweep(sweeper.candidates(), Set.of(), (id, dir) -> dev.kaas.common.fs.AtomicFiles.renameAside(dir));

        assertThat(half.getParent()).doesNotExist();
    }

    @Test
    void anIdMadeLiveAgainAfterTheListingIsLeftAlone() throws Exception {
        String id = Uuid.randomUuid().toString();
        Path dir = topicDir("orders", id);
        OrphanSweeper sweeper = new OrphanSweeper(data, null);
        var listed = sweeper.candidates();

        // Between the listing and the rename, the catalog took the id back: the loop's check says no.
        Set<String> done = sweeper.sweep(listed, Set.of(id), (topicId, d) -> null);

        assertThat(dir.resolve("0")).isDirectory();
        assertThat(done).as("still tracked").doesNotContain(id);
    }
}
