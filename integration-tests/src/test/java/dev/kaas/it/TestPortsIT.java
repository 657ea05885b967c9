package dev.kaas.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The ITs' port choice, and the harness's recovery when a port it chose is taken before the child binds it. */
class TestPortsIT {
    @TempDir
    Path tmp;

    @Test
    void linuxsDefaultRangeLeavesTheBandBelowIt() {
        List<int[]> spans = TestPorts.outsideEphemeral(new int[] {32_768, 60_999}, 4);
        assertEquals(2, spans.size());
        assertArrayEquals(new int[] {10_000, 32_764}, spans.get(0), "the last base's fourth port is 32767");
        assertArrayEquals(new int[] {61_000, 65_532}, spans.get(1));
    }

    @Test
    void aContainersWideRangeLeavesOnlyTheBandAboveIt() {
        // The CI machine's ports were all ephemeral ones: there the range started below 10000.
        List<int[]> spans = TestPorts.outsideEphemeral(new int[] {1_024, 60_999}, 1);
        assertEquals(1, spans.size());
        assertArrayEquals(new int[] {61_000, 65_535}, spans.get(0));
        assertTrue(TestPorts.outsideEphemeral(new int[] {1_024, 65_535}, 1).isEmpty());
    }

    @Test
    void aBlockIsFreeOutsideTheRangeAndNeverHandedOutTwice() {
        int[] range = TestPorts.ephemeralRange();
        int first = TestPorts.block(4);
        int second = TestPorts.block(4);
        for (int base : new int[] {first, second}) {
            assertTrue(base + 3 < range[0] || base > range[1] || TestPorts.outsideEphemeral(range, 4).isEmpty(),
                    base + " lies in the ephemeral range " + range[0] + "-" + range[1]);
            for (int p = base; p < base + 4; p++) {
                assertTrue(TestPorts.free(p), p + " is free");
            }
        }
        assertTrue(Math.abs(first - second) >= 4, "blocks overlap: " + first + ", " + second);
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aBrokerWhoseHttpPortWasTakenWhileItWasDownStartsOnAnotherAndKeepsItsKafkaPort() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 1, 1, Map.of(), Map.of())) {
            int kafka = cluster.kafkaPort(1);
            int http = cluster.brokerHttpPort(1);
            cluster.killBroker(1);
            try (ServerSocket thief = new ServerSocket(http, 1, InetAddress.getLoopbackAddress())) {
                cluster.startBroker(1);
            }
            assertTrue(Files.readString(cluster.logDir().resolve("broker-1-2.log")).contains("in use"),
                    "the second start found the port taken");
            assertTrue(cluster.brokerHttpPort(1) != http, "a fresh HTTP port");
            assertEquals(kafka, cluster.kafkaPort(1), "clients were told the Kafka port: it stays");
            try (Admin admin = Admin.create(cluster.clientProps())) {
                assertEquals(1, admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size());
            }
        }
    }
}
