package dev.kaas.controller.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.EndpointInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.SlotAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongPredicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./kaas status} on data directories written by hand, as a controller and the script would leave them. */
class ClusterStatusTest {
    private static final long NOW = 1_000_000L;

    @TempDir
    Path data;

    private static final LongPredicate RUNNING_4101_ONLY = Set.of(4100L, 4101L)::contains;

    private static BrokerInfo broker(int id, int port) {
        return new BrokerInfo(id, List.of(new EndpointInfo("PLAINTEXT", "localhost", port, "PLAINTEXT")));
    }

    private static List<SlotAssignment> slots(int... ownersInTurn) {
        return IntStream.range(0, Assignment.SLOTS).mapToObj(s -> new SlotAssignment(s, ownersInTurn[s % ownersInTurn.length], 1)).toList();
    }

    private static TopicAssignment topic(String name, int... leaders) {
        List<PartitionAssignment> parts = new ArrayList<>();
        for (int p = 0; p < leaders.length; p++) {
            parts.add(new PartitionAssignment(p, leaders[p], 2));
        }
        return new TopicAssignment(new TopicSpec(name, "id-" + name, leaders.length, Map.of()), parts);
    }

    private void write(String relative, Object json) throws IOException {
        AtomicFiles.write(data.resolve(relative), Json.bytes(json));
    }

    private void writeText(String relative, String text) throws IOException {
        Files.createDirectories(data.resolve(relative).getParent());
        Files.writeString(data.resolve(relative), text);
    }

    private String report(LongPredicate running) throws IOException {
        return StatusReport.format(data, StatusSnapshot.read(data), NOW, running);
    }

    private static String line(String report, String startsWith) {
        return report.lines().filter(l -> l.strip().startsWith(startsWith)).findFirst()
                .orElseThrow(() -> new AssertionError("no line starting with '" + startsWith + "' in\n" + report));
    }

    @Test
    void everyBrokerOfTheClusterGetsALineWithItsShareLivenessAndProcess() throws Exception {
        // Given a three-broker cluster whose broker 2 was stopped and broker 3 killed, and one partition without a leader
        write("__cluster/controller.lease", new LeaseRecord("controller-1", NOW + 4_200, 3));
        write("__cluster/assignment.json", new Assignment(7, 3, "the-cluster", List.of(broker(1, 9092), broker(3, 9100)),
                List.of(topic("a", 1, 3, 1, -1), topic("b", 3)), slots(1, 3), slots(1)));
        writeText("run/cluster.env", "# written by ./kaas up\nPORT=9092\nBROKERS=3\nCONTROLLERS=1\n");
        writeText("run/controller-1.pid", "4100\n");
        writeText("run/broker-1.pid", "4101\n");
        writeText("run/broker-3.pid", "4103\n");

        // When
        String out = report(RUNNING_4101_ONLY);

        // Then
        assertThat(out).startsWith("kaas cluster in " + data + " (port 9092, 3 brokers, 1 controller)\n");
        assertThat(line(out, "lease:")).isEqualTo("lease:       held by controller-1, epoch 3 (valid for 4.2 s more unless renewed)");
        assertThat(line(out, "controller 1")).matches(" *controller 1 +running \\(pid 4100\\) +holds the lease");
        assertThat(line(out, "cluster id:")).endsWith("the-cluster");
        assertThat(line(out, "assignment:")).isEqualTo("assignment:  version 7, controller epoch 3");
        assertThat(line(out, "brokers:")).isEqualTo("brokers:     2 alive (the assignment's live set)");
        assertThat(line(out, "broker 1 ")).matches(" *broker 1 +alive +running \\(pid 4101\\) +partitions 2 +group slots 25 +txn slots 50 +PLAINTEXT://localhost:9092");
        assertThat(line(out, "broker 2 ")).matches(" *broker 2 +not alive +stopped +partitions 0 +group slots 0 +txn slots 0 +-");
        assertThat(line(out, "broker 3 ")).matches(" *broker 3 +alive +not running \\(pid 4103\\) +partitions 2 +group slots 25 +txn slots 0 +PLAINTEXT://localhost:9100");
        assertThat(line(out, "partitions:")).isEqualTo("partitions:  5 in 2 topics, 1 without a leader");
        assertThat(line(out, "slots:")).isEqualTo("slots:       0 group and 0 transaction slots without an owner");
    }

    @Test
    void reassignedPartitionsAreListedWithTheirTargetAndWhetherTheyStillMove() throws Exception {
        // Given a partition kept on broker 2 (done), one moving from broker 1 to 2, one whose handoff from 1 is under way,
        // one not reassigned, and one reassigned onto broker 4, which is not alive
        List<PartitionAssignment> parts = List.of(new PartitionAssignment(0, 2, 3, 2), new PartitionAssignment(1, 1, 2, 2),
                new PartitionAssignment(2, PartitionAssignment.NO_LEADER, 2, 2, 1), new PartitionAssignment(3, 1, 2),
                new PartitionAssignment(4, 1, 2, 4));
        write("__cluster/assignment.json", new Assignment(7, 3, "the-cluster", List.of(broker(1, 9092), broker(2, 9100)),
                List.of(new TopicAssignment(new TopicSpec("orders", "id-orders", 5, Map.of()), parts)), slots(1, 2), slots(1)));

        // When
        String out = report(RUNNING_4101_ONLY);

        // Then
        assertThat(line(out, "reassigned:")).isEqualTo(
                "reassigned:  4 partitions kept on a broker by a reassignment, 2 still moving, 1 waiting for their broker");
        assertThat(line(out, "orders-0 ")).matches(" *orders-0 +on broker 2");
        assertThat(line(out, "orders-1 ")).matches(" *orders-1 +on broker 2 +moving \\(written by broker 1\\)");
        assertThat(line(out, "orders-2 ")).matches(" *orders-2 +on broker 2 +moving \\(broker 1 is handing it off\\)");
        assertThat(line(out, "orders-4 ")).matches(" *orders-4 +on broker 4 +waiting \\(broker 4 not alive; written by broker 1\\)");
        assertThat(out).doesNotContain("orders-3");
        // Under way first, then waiting, then done.
        assertThat(out.indexOf("orders-1 ")).isLessThan(out.indexOf("orders-4 "));
        assertThat(out.indexOf("orders-4 ")).isLessThan(out.indexOf("orders-0 "));
    }

    @Test
    void aPartitionReassignedOntoADrainedBrokerWaitsForTheDrainToEnd() throws Exception {
        // Given broker 2 drained, orders-0 reassigned onto it and still written by broker 1
        List<PartitionAssignment> parts = List.of(new PartitionAssignment(0, 1, 2, 2));
        Assignment drained = new Assignment(7, 3, "the-cluster", List.of(broker(1, 9092), broker(2, 9100)),
                List.of(new TopicAssignment(new TopicSpec("orders", "id-orders", 1, Map.of()), parts)), slots(1, 2), slots(1))
                .withDrained(Map.of(2, "incarnation-2"));
        write("__cluster/assignment.json", drained);

        assertThat(line(report(RUNNING_4101_ONLY), "orders-0 ")).matches(" *orders-0 +on broker 2 +waiting \\(broker 2 drained; written by broker 1\\)");

        // When every live broker is drained the balancer places on them again: it moves
        write("__cluster/assignment.json", drained.withDrained(Map.of(1, "incarnation-1", 2, "incarnation-2")));
        assertThat(line(report(RUNNING_4101_ONLY), "orders-0 ")).matches(" *orders-0 +on broker 2 +moving \\(written by broker 1\\)");
    }

    @Test
    void withoutReassignmentsThereIsNoReassignedLineAndManyAreCut() throws Exception {
        write("__cluster/assignment.json", new Assignment(7, 3, "the-cluster", List.of(broker(1, 9092)),
                List.of(topic("a", 1, 1)), slots(1), slots(1)));
        assertThat(report(RUNNING_4101_ONLY)).doesNotContain("reassigned");

        List<PartitionAssignment> parts = new ArrayList<>();
        for (int p = 0; p < 25; p++) {
            parts.add(new PartitionAssignment(p, 1, 2, 1));
        }
        write("__cluster/assignment.json", new Assignment(8, 3, "the-cluster", List.of(broker(1, 9092)),
                List.of(new TopicAssignment(new TopicSpec("many", "id-many", 25, Map.of()), parts)), slots(1), slots(1)));
        String out = report(RUNNING_4101_ONLY);
        assertThat(line(out, "reassigned:")).isEqualTo("reassigned:  25 partitions kept on a broker by a reassignment, 0 still moving");
        assertThat(out.lines().filter(l -> l.strip().startsWith("many-"))).hasSize(StatusReport.REASSIGNED_LINES);
        assertThat(out).contains("  ... and 5 more\n");
    }

    @Test
    void aRunDirectoryOfTheOneBrokerScriptIsBrokerOneAndControllerOne() throws Exception {
        // Given the pid files of the earlier script and no cluster.env
        write("__cluster/assignment.json", new Assignment(1, 1, "c", List.of(broker(1, 9092)), List.of(), slots(1), slots(1)));
        writeText("run/broker.pid", "4101");
        writeText("run/controller.pid", "4100");

        // When
        String out = report(RUNNING_4101_ONLY);

        // Then
        assertThat(out).startsWith("kaas cluster in " + data + "\n");
        assertThat(line(out, "controller 1")).contains("running (pid 4100)");
        assertThat(line(out, "broker 1 ")).contains("running (pid 4101)").contains("group slots 50");
        assertThat(out.lines().filter(l -> l.strip().startsWith("broker "))).hasSize(1);
    }

    @Test
    void aBrokerTheAssignmentStillNamesIsListedEvenIfTheRunDirectoryDoesNotKnowIt() throws Exception {
        // Given a broker of another machine, owning slots
        write("__cluster/assignment.json", new Assignment(4, 1, "c", List.of(broker(1, 9092)), List.of(topic("t", 1, 2)), slots(2), slots(-1)));

        // When
        String out = report(pid -> false);

        // Then
        assertThat(line(out, "broker 2 ")).matches(" *broker 2 +not alive +- +partitions 1 +group slots 50 +txn slots 0 +-");
        assertThat(line(out, "slots:")).isEqualTo("slots:       0 group and 50 transaction slots without an owner");
        assertThat(out).doesNotContain("controllers:");
    }

    @Test
    void theLeaseReadsAsExpiredFreeOrNotYetTaken() throws Exception {
        Files.createDirectories(data.resolve("__cluster"));
        assertThat(line(report(pid -> true), "lease:")).isEqualTo("lease:       none yet (no controller has taken it)");

        write("__cluster/controller.lease", new LeaseRecord("controller-2", NOW - 12_300, 5));
        assertThat(line(report(pid -> true), "lease:")).isEqualTo("lease:       expired 12.3 s ago, epoch 5 (last holder controller-2)");

        write("__cluster/controller.lease", new LeaseRecord(null, 0, 5));
        assertThat(line(report(pid -> true), "lease:")).isEqualTo("lease:       free, epoch 5 (released by its last holder)");
    }

    @Test
    void anAssignmentFromAnEarlierLeaseEpochSaysSo() throws Exception {
        write("__cluster/controller.lease", new LeaseRecord("controller-2", NOW + 1_000, 6));
        write("__cluster/assignment.json", new Assignment(9, 5, "c", List.of(), List.of(), slots(-1), slots(-1)));

        String out = report(pid -> true);

        assertThat(line(out, "assignment:")).isEqualTo("assignment:  version 9, controller epoch 5 (the lease is at epoch 6)");
        assertThat(line(out, "brokers:")).isEqualTo("brokers:     0 alive (the assignment's live set)");
    }

    @Test
    void aFreshClusterDirectoryHasNothingPublishedYet() throws Exception {
        Files.createDirectories(data.resolve("__cluster"));
        writeText("run/cluster.env", "PORT=19500\nBROKERS=2\nCONTROLLERS=2\n");

        String out = report(pid -> true);

        assertThat(line(out, "assignment:")).startsWith("assignment:  none published yet");
        assertThat(line(out, "broker 2 ")).matches(" *broker 2 +- +stopped +partitions 0 .*");
        assertThat(line(out, "controller 2")).contains("stopped");
    }

    @Test
    void aDirectoryWithoutAClusterIsExitOneWithOneClearLine() {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();

        int code = ClusterStatus.run(new String[] {data.toString()}, new PrintStream(out), new PrintStream(err), NOW);

        assertThat(code).isEqualTo(1);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("kaas: no kaas cluster in " + data
                + " (it has no __cluster/ directory); start one with ./kaas up --data " + data + System.lineSeparator());
    }

    @Test
    void aReadableClusterIsExitZero() throws Exception {
        write("__cluster/controller.lease", new LeaseRecord("x", NOW, 1));
        var out = new ByteArrayOutputStream();

        int code = ClusterStatus.run(new String[] {data.toString()}, new PrintStream(out), System.err, NOW);

        assertThat(code).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("lease:       expired 0.0 s ago, epoch 1 (last holder x)");
    }

    @Test
    void aPidIsOursOnlyIfAliveAndItsCommandLineNamesTheDataDirectory() {
        long self = ProcessHandle.current().pid();
        assertThat(ClusterStatus.ourProcess(data).test(self)).isFalse();
        assertThat(ClusterStatus.ourProcess(data).test(Long.MAX_VALUE)).isFalse();
    }
}
