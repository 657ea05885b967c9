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

    static GroupStore.StoredMembership twoMembers() {
        return new GroupStore.StoredMembership(5, "range", "m-1", java.util.List.of(
                new GroupStore.StoredMember("m-1", null, "c1", "/127.0.0.1", 30_000, 10_000, new byte[] {1, 2}, new byte[] {3}),
                new GroupStore.StoredMember("m-2", "instance-2", "c2", "/127.0.0.2", 30_000, 45_000, new byte[] {4}, new byte[0])));
    }

    @Test
    void theMembershipOfTheLastRebalanceComesBackWithTheGroupAndAFileWhoseMembershipDoesNotHoldTogetherLoadsWithoutIt() throws Exception {
        GroupFiles owner = new GroupFiles(data, 3, 1, 1);
        owner.acquire();
        GroupStore.StoredGroup g = group("g", 10);
        owner.save(new GroupStore.StoredGroup("g", "consumer", g.offsets(), Map.of(), twoMembers()));

        GroupStore.StoredMembership loaded = new GroupFiles(data, 3, 1, 1).loadAll().get("g").membership();
        assertThat(loaded.generationId()).isEqualTo(5);
        assertThat(loaded.protocolName()).isEqualTo("range");
        assertThat(loaded.leaderId()).isEqualTo("m-1");
        assertThat(loaded.members()).hasSize(2);
        GroupStore.StoredMember second = loaded.members().get(1);
        assertThat(second).extracting(GroupStore.StoredMember::memberId, GroupStore.StoredMember::groupInstanceId,
                GroupStore.StoredMember::clientId, GroupStore.StoredMember::clientHost, GroupStore.StoredMember::sessionTimeoutMs)
                .containsExactly("m-2", "instance-2", "c2", "/127.0.0.2", 45_000);
        assertThat(loaded.members().get(0).subscription()).containsExactly(1, 2);
        assertThat(loaded.members().get(0).assignment()).containsExactly(3);

        // Files another process wrote are not trusted: each of these loads the group's offsets, without members.
        Path file;
        try (var files = Files.list(data.resolve("__cluster/groups/slot-03"))) {
            file = files.filter(f -> f.getFileName().toString().endsWith(".00000001.json")).findFirst().orElseThrow();
        }
        String good = Files.readString(file);
        for (String[] change : new String[][] {
                {"\"leader\" : \"m-1\"", "\"leader\" : \"m-9\""},
                {"\"memberId\" : \"m-2\"", "\"memberId\" : \"m-1\""},
                {"\"generation\" : 5", "\"generation\" : -1"},
                {"\"sessionTimeoutMs\" : 45000", "\"sessionTimeoutMs\" : 0"},
                {"\"protocolName\" : \"range\"", "\"protocolName\" : null"},
                {"\"protocolType\" : \"consumer\"", "\"protocolType\" : null"},
                {"\"groupInstanceId\" : null", "\"groupInstanceId\" : \"instance-2\""},
                {"\"groupInstanceId\" : \"instance-2\"", "\"groupInstanceId\" : \"\""},
                {"\"groupInstanceId\" : \"instance-2\"", "\"groupInstanceId\" : null, \"x\" : 1"}}) {
            assertThat(good).contains(change[0]);
            Files.writeString(file, good.replace(change[0], change[1]));
            GroupStore.StoredGroup read = new GroupFiles(data, 3, 1, 1).loadAll().get("g");
            if (change[1].contains("\"x\"")) {
                assertThat(read.membership()).as("an unknown field is ignored").isNotNull();
            } else {
                assertThat(read.membership()).as(change[1]).isNull();
            }
            assertThat(read.offsets()).hasSize(1);
        }
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
    void aCommitThatReturnedSurvivesPowerLossAndALossMidWriteLeavesTheOldOrTheNewOffsets() throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        int cuts = 0;
        for (int step = 0; step < 24; step++) {
            Path dir = Files.createDirectories(data.resolve("cut-" + step));
            dev.kaas.common.fs.PowerLossDisk disk = new dev.kaas.common.fs.PowerLossDisk();
            GroupFiles owner = new GroupFiles(dir, 7, 1, 1, disk);
            owner.acquire();
            owner.save(group("g", 10));
            boolean returned = disk.cutAfter(step, () -> owner.save(group("g", 11)));
            cuts += returned ? 0 : 1;

            GroupFiles next = new GroupFiles(dir, 7, 2, 2);
            next.acquire();
            var loaded = next.loadAll();
            assertThat(loaded).as("after a loss at step %d the group is still there", step).containsKey("g");
            long offset = loaded.get("g").offsets().get(tp).offset();
            assertThat(offset).as("loss at step %d", step).isIn(10L, 11L);
            if (returned) {
                assertThat(offset).as("a save that returned, loss at step %d", step).isEqualTo(11L);
            }
        }
        assertThat(cuts).isGreaterThan(3);
    }

    @Test
    void deleteRemovesEveryEpochOfTheGroupAtOrBelowOurs() throws Exception {
        GroupFiles files = new GroupFiles(data, 3, 5, 1);
        files.acquire();
        files.save(group("g", 1));
        files.delete("g");
        assertThat(files.loadAll()).isEmpty();
        try (var list = Files.list(data.resolve("__cluster/groups/slot-03"))) {
            assertThat(list.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("fence", "fences");
        }
    }
}
