package dev.kaas.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GroupFilesTest {
    @TempDir
    Path data;

    static GroupStore.StoredGroup group(String id, long offset) {
        return new GroupStore.StoredGroup(id, "consumer",
                Map.of(new TopicPartition("t", 0), new CommittedOffset(offset, 4, "m", 1000, -1)));
    }

    @Test
    void aNewOwnerReadsWhatTheOldOneAcknowledgedAndFencesItsLaterWrites() throws Exception {
        GroupFiles old = new GroupFiles(data, 7, 1, 1);
        old.acquire();
        old.save(group("g", 10));
        old.save(group("weird/../id", 11));

        GroupFiles successor = new GroupFiles(data, 7, 2, 2);
        successor.acquire();
        var loaded = successor.loadAll();
        assertThat(loaded.get("g").offsets().get(new TopicPartition("t", 0)).offset()).isEqualTo(10);
        assertThat(loaded.get("weird/../id").offsets()).hasSize(1);

        assertThatThrownBy(() -> old.save(group("g", 99))).isInstanceOf(NotCoordinatorException.class);
        successor.save(group("g", 12));
        GroupFiles third = new GroupFiles(data, 7, 3, 1);
        third.acquire();
        assertThat(third.loadAll().get("g").offsets().get(new TopicPartition("t", 0)).offset())
                .as("the deposed owner's late file (epoch 1) is never merged").isEqualTo(12);
        assertThatThrownBy(() -> new GroupFiles(data, 7, 2, 2).acquire()).isInstanceOf(NotCoordinatorException.class);
    }

    @Test
    void deleteRemovesEveryEpochOfTheGroupAtOrBelowOurs() throws Exception {
        GroupFiles files = new GroupFiles(data, 3, 5, 1);
        files.acquire();
        files.save(group("g", 1));
        files.delete("g");
        assertThat(files.loadAll()).isEmpty();
        try (var list = Files.list(data.resolve("__cluster/groups/slot-03"))) {
            assertThat(list.map(p -> p.getFileName().toString())).containsExactly("fence");
        }
    }
}
