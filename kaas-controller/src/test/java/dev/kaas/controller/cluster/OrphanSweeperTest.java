package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OrphanSweeperTest {
    @TempDir
    Path data;

    private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());

    private Path topicDir(String name, String id) throws Exception {
        Path dir = data.resolve(name + "-" + id);
        Files.createDirectories(dir.resolve("0"));
        Files.writeString(dir.resolve("0/00000000-00000000000000000000.log"), "bytes");
        return dir;
    }

    @Test
    void onlyDirectoriesOfTopicIdsNothingKnowsAreRemoved() throws Exception {
        String live = Uuid.randomUuid().toString();
        String dead = Uuid.randomUuid().toString();
        Path kept = topicDir("orders", live);
        Path orphan = topicDir("orders", dead);
        Path dashed = topicDir("my-topic-with-dashes", Uuid.randomUuid().toString());
        Files.createDirectories(data.resolve("__cluster/groups"));
        Files.createDirectories(data.resolve("__warmup-broker-1"));
        Files.createDirectories(data.resolve("not-a-topic-xyz"));
        OrphanSweeper sweeper = new OrphanSweeper(data, null, clock::get);

        List<Path> removed = sweeper.sweep(Set.of(live));

        assertThat(removed).containsExactlyInAnyOrder(orphan, dashed);
        assertThat(kept.resolve("0")).isDirectory();
        assertThat(orphan).doesNotExist();
        assertThat(data.resolve("__cluster/groups")).isDirectory();
        assertThat(data.resolve("__warmup-broker-1")).isDirectory();
        assertThat(data.resolve("not-a-topic-xyz")).isDirectory();
        try (var left = Files.list(data)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".deleted-"));
        }
    }

    @Test
    void aTopicCreatedAfterTheListingIsNeverRemoved() throws Exception {
        OrphanSweeper sweeper = new OrphanSweeper(data, null, clock::get);
        List<Path> listed = sweeper.candidates();
        String created = Uuid.randomUuid().toString();
        Path fresh = topicDir("new", created);

        sweeper.sweep(listed, Set.of(created));

        assertThat(fresh).isDirectory();
    }

    @Test
    void halfRemovedTreesAreFinishedOnlyOnceNoBrokerCanStillBeRemovingThem() throws Exception {
        Path old = Files.createDirectories(data.resolve("t-" + Uuid.randomUuid() + ".deleted-" + java.util.UUID.randomUUID()));
        Path young = Files.createDirectories(data.resolve("u-" + Uuid.randomUuid() + ".deleted-" + java.util.UUID.randomUUID()));
        Files.setLastModifiedTime(old, FileTime.fromMillis(clock.get() - OrphanSweeper.DELETED_MIN_AGE_MS - 1_000));
        OrphanSweeper sweeper = new OrphanSweeper(data, null, clock::get);

        sweeper.sweep(Set.of());

        assertThat(old).doesNotExist();
        assertThat(young).isDirectory();
    }
}
