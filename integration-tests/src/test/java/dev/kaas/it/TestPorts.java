package dev.kaas.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

/**
 * Loopback ports for the servers the ITs launch, chosen outside the kernel's ephemeral range
 * ({@code net.ipv4.ip_local_port_range}). A port from {@code bind(0)} is an ephemeral one: between
 * the probe and the child's own bind (seconds: a JVM starts), any client connection opened
 * meanwhile — the suite opens thousands — can take it as its local port, and the child then exits
 * during start-up. Outside the range only another server can take it. Machines differ in the
 * range (32768–60999 by default, wider in some containers), so both sides of it are used.
 */
final class TestPorts {
    private static final int LOWEST = 10_000;
    private static final int HIGHEST = 65_535;
    /** Fewer ports than this outside the ephemeral range and there is no point avoiding it. */
    private static final int ENOUGH = 1_000;

    /** Ports handed out in this JVM, never twice even once their first user stopped; guarded by the class. */
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private TestPorts() {
    }

    /** One free port. */
    static int one() {
        return block(1);
    }

    /** The first of {@code count} consecutive free ports (the {@code kaas} script derives a process's ports from a base). */
    static int block(int count) {
        List<int[]> spans = outsideEphemeral(ephemeralRange(), count);
        int room = spans.stream().mapToInt(s -> s[1] - s[0] + 1).sum();
        var random = ThreadLocalRandom.current();
        for (int attempt = 0; room >= ENOUGH && attempt < 500; attempt++) {
            int pick = random.nextInt(room);
            int base = -1;
            for (int[] s : spans) {
                int size = s[1] - s[0] + 1;
                if (pick < size) {
                    base = s[0] + pick;
                    break;
                }
                pick -= size;
            }
            if (claim(base, count)) {
                return base;
            }
        }
        for (int attempt = 0; attempt < 500; attempt++) {
            int base = count == 1 ? ephemeralProbe() : random.nextInt(LOWEST, HIGHEST - count + 2);
            if (claim(base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free loopback ports");
    }

    /** The spans of bases whose {@code count} ports all lie in [LOWEST, HIGHEST] and outside {@code ephemeral}. */
    static List<int[]> outsideEphemeral(int[] ephemeral, int count) {
        List<int[]> spans = new ArrayList<>();
        int belowTop = Math.min(ephemeral[0] - 1, HIGHEST) - count + 1;
        if (belowTop >= LOWEST) {
            spans.add(new int[] {LOWEST, belowTop});
        }
        int aboveBottom = Math.max(ephemeral[1] + 1, LOWEST);
        if (HIGHEST - count + 1 >= aboveBottom) {
            spans.add(new int[] {aboveBottom, HIGHEST - count + 1});
        }
        return spans;
    }

    private static synchronized boolean claim(int base, int count) {
        if (IntStream.range(base, base + count).anyMatch(p -> HANDED_OUT.contains(p) || !free(p))) {
            return false;
        }
        IntStream.range(base, base + count).forEach(HANDED_OUT::add);
        return true;
    }

    static boolean free(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int ephemeralProbe() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The kernel's ephemeral range, low and high (Linux's default where it cannot be read). */
    static int[] ephemeralRange() {
        try {
            String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
            return new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[1])};
        } catch (IOException | RuntimeException e) {
            return new int[] {32_768, 60_999};
        }
    }
}
