package dev.kaas.controller.status;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the {@code ./kaas} script left in {@code <data>/run/} on this machine: the cluster's shape
 * and one pid file per process it started. Other machines sharing the volume have their own
 * processes, which this directory does not know.
 *
 * <pre>
 * run/cluster.env          PORT=9092, BROKERS=3, CONTROLLERS=1 (KEY=VALUE lines, written by ./kaas up)
 * run/broker-&lt;i&gt;.pid       pid of broker i
 * run/controller-&lt;j&gt;.pid   pid of controller j
 * run/broker.pid, run/controller.pid   the one-broker layout of earlier scripts: broker 1, controller 1
 * </pre>
 *
 * @param port        the Kafka port of broker 1, when {@code cluster.env} records it
 * @param brokers     brokers 1..brokers belong to the cluster (0 when unknown)
 * @param controllers controllers 1..controllers belong to the cluster (0 when unknown)
 */
record RunDir(OptionalInt port, int brokers, int controllers, Map<Integer, Long> brokerPids, Map<Integer, Long> controllerPids) {
    private static final Pattern PID_FILE = Pattern.compile("(broker|controller)(?:-(\\d+))?\\.pid");

    RunDir {
        brokerPids = Map.copyOf(brokerPids);
        controllerPids = Map.copyOf(controllerPids);
    }

    static RunDir empty() {
        return new RunDir(OptionalInt.empty(), 0, 0, Map.of(), Map.of());
    }

    /** Reads {@code run}; a missing directory or file is an empty answer, an unparsable pid file is skipped. */
    static RunDir read(Path run) throws IOException {
        if (!Files.isDirectory(run)) {
            return empty();
        }
        Map<String, String> env = new TreeMap<>();
        readFile(run.resolve("cluster.env")).ifPresent(text -> text.lines()
                .filter(l -> !l.isBlank() && !l.startsWith("#") && l.contains("="))
                .forEach(l -> env.put(l.substring(0, l.indexOf('=')).trim(), l.substring(l.indexOf('=') + 1).trim())));
        Map<Integer, Long> brokers = new TreeMap<>();
        Map<Integer, Long> controllers = new TreeMap<>();
        try (var files = Files.list(run)) {
            for (Path f : files.sorted().toList()) {
                Matcher m = PID_FILE.matcher(f.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                int id = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
                Optional<Long> pid = readFile(f).flatMap(RunDir::parseLong);
                if (pid.isPresent()) {
                    (m.group(1).equals("broker") ? brokers : controllers).putIfAbsent(id, pid.get());
                }
            }
        }
        OptionalInt port = parseLong(env.get("PORT")).map(p -> OptionalInt.of(p.intValue())).orElse(OptionalInt.empty());
        return new RunDir(port, parseLong(env.get("BROKERS")).orElse(0L).intValue(),
                parseLong(env.get("CONTROLLERS")).orElse(0L).intValue(), brokers, controllers);
    }

    private static Optional<String> readFile(Path f) throws IOException {
        try {
            return Optional.of(Files.readString(f, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            return Optional.empty(); // removed between the listing and the read: that process just stopped
        }
    }

    private static Optional<Long> parseLong(String s) {
        if (s == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(s.trim()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
