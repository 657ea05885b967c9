package dev.kaas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Apache Kafka 3.7.2 distribution the module {@code kaas-bench/apache-dist} lays out (its jars
 * with Kafka's own dependency versions, its log4j configurations), and the command lines its
 * scripts would run. The harness launches Apache with exactly these, so Apache runs as a user
 * would run it from the distribution: nothing of kaas's class path, logging or JVM flags leaks in.
 */
final class ApacheDist {
    static final String VERSION = "3.7.2";

    /** kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS default. */
    static final List<String> PERFORMANCE_OPTS = List.of("-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true");

    /** kafka-run-class.sh's KAFKA_JMX_OPTS default: the local JMX agent, no port. */
    static final List<String> JMX_OPTS = List.of("-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.authenticate=false",
            "-Dcom.sun.management.jmxremote.ssl=false");

    private final Path home;
    private final List<Path> jars;

    private ApacheDist(Path home, List<Path> jars) {
        this.home = home;
        this.jars = jars;
    }

    /** The distribution under the project root, built by {@code ./mvnw package -pl kaas-bench/apache-dist}. */
    static ApacheDist under(Path root) throws IOException {
        Path home = root.resolve("kaas-bench/apache-dist/target/kafka_2.13-" + VERSION);
        Path libs = home.resolve("libs");
        if (!Files.isDirectory(libs) || !Files.isRegularFile(home.resolve("config/log4j.properties"))) {
            throw new IllegalStateException("no Apache Kafka distribution at " + home + "; build it with ./mvnw package -pl kaas-bench/apache-dist");
        }
        List<Path> jars;
        try (Stream<Path> files = Files.list(libs)) {
            // Name order, as the distribution's `for file in libs/*` adds them.
            jars = files.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().toList();
        }
        if (jars.stream().noneMatch(j -> j.getFileName().toString().equals("kafka_2.13-" + VERSION + ".jar"))) {
            throw new IllegalStateException(libs + " holds no kafka_2.13-" + VERSION + ".jar");
        }
        return new ApacheDist(home, jars);
    }

    Path home() {
        return home;
    }

    Path bin(String script) {
        return home.resolve("bin").resolve(script);
    }

    int jarCount() {
        return jars.size();
    }

    String classpath() {
        return jars.stream().map(Path::toString).collect(Collectors.joining(":"));
    }

    /**
     * {@code bin/kafka-server-start.sh server.properties}: 1 GiB heap, GC log, the broker's log4j
     * configuration, logs in {@code logDir}.
     */
    List<String> serverCommand(Path java, Path serverProperties, Path logDir) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(List.of("-Xmx1G", "-Xms1G"));
        cmd.addAll(PERFORMANCE_OPTS);
        cmd.add("-Xlog:gc*:file=" + logDir.resolve("kafkaServer-gc.log") + ":time,tags:filecount=10,filesize=100M");
        cmd.addAll(JMX_OPTS);
        cmd.add("-Dkafka.logs.dir=" + logDir);
        cmd.add("-Dlog4j.configuration=file:" + home.resolve("config/log4j.properties"));
        cmd.addAll(List.of("-cp", classpath(), "kafka.Kafka", serverProperties.toString()));
        return cmd;
    }

    /**
     * A tool as its {@code bin/} script runs it through kafka-run-class.sh: {@code heap} is the
     * script's KAFKA_HEAP_OPTS (512 MiB for the perf tests, else kafka-run-class.sh's 256 MiB),
     * logging is the tools' WARN-to-stderr configuration.
     */
    List<String> toolCommand(Path java, String heap, Path logDir, String mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.add(heap);
        cmd.addAll(PERFORMANCE_OPTS);
        cmd.addAll(JMX_OPTS);
        cmd.add("-Dkafka.logs.dir=" + logDir);
        cmd.add("-Dlog4j.configuration=file:" + home.resolve("config/tools-log4j.properties"));
        cmd.addAll(List.of("-cp", classpath(), mainClass));
        cmd.addAll(args);
        return cmd;
    }

    /** A command line for people to read: the class path of the distribution's jars abbreviated, everything else exact. */
    String show(List<String> cmd) {
        String cp = classpath();
        return cmd.stream()
                .map(a -> a.equals(cp) ? home.resolve("libs") + "/{" + jars.size() + " jars, in name order}" : a)
                .map(a -> a.isEmpty() || a.matches(".*[\\s*{}$'\"].*") && !a.contains(" jars, in name order}") ? "'" + a + "'" : a)
                .collect(Collectors.joining(" "));
    }
}
