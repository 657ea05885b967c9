package dev.kaas.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs an Apache Kafka 3.7.2 shell tool as {@code bin/*.sh} would: its main class in a child JVM
 * with the Maven-resolved 3.7.2 jars on the class path. Every run is bounded in time.
 */
final class ShellTools {
    record Result(int exitCode, String stdout, String stderr) {
    }

    private ShellTools() {
    }

    static String classpath() throws IOException {
        return Files.readString(Path.of(System.getProperty("kaas.tools.classpath", "target/tools.classpath"))).trim();
    }

    static Result run(String mainClass, String stdin, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        // A tool runs for a second or two: C1 alone and the serial collector spend a third less CPU starting it.
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-cp");
        cmd.add(classpath());
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("tool", ".out");
        Path err = Files.createTempFile("tool", ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(mainClass + " did not finish in 120 s: " + Files.readString(err));
        }
        Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        return r;
    }
}
