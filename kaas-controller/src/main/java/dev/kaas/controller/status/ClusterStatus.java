package dev.kaas.controller.status;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.function.LongPredicate;

/**
 * {@code ./kaas status}: prints who holds the controller lease, the published assignment and each
 * broker's share of it, read from the data directory without taking any lock, so it works while
 * the cluster runs, after it stopped, and from any machine that mounts the volume. A plain main
 * class, run on the controller's fast-jar class path without booting Quarkus:
 *
 * <pre>java -cp 'kaas-controller/target/quarkus-app/app/*:kaas-controller/target/quarkus-app/lib/main/*' \
 *     dev.kaas.controller.status.ClusterStatus DATA_DIR</pre>
 *
 * Exit code 0 when it could read the directory, 1 (with one line on stderr) when it holds no
 * cluster or a file cannot be read. See src/docs/running.md, "Several brokers".
 */
public final class ClusterStatus {
    private ClusterStatus() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, System.currentTimeMillis()));
    }

    static int run(String[] args, PrintStream out, PrintStream err, long nowMs) {
        if (args.length != 1) {
            err.println("kaas: usage: ClusterStatus DATA_DIR");
            return 1;
        }
        Path dataDir = Path.of(args[0]).toAbsolutePath().normalize();
        StatusSnapshot snapshot;
        try {
            snapshot = StatusSnapshot.read(dataDir);
        } catch (StatusSnapshot.NoClusterException e) {
            err.println("kaas: " + e.getMessage() + "; start one with ./kaas up --data " + dataDir);
            return 1;
        } catch (IOException | RuntimeException e) {
            err.println("kaas: cannot read the cluster state in " + dataDir + ": " + e.getMessage());
            return 1;
        }
        out.print(StatusReport.format(dataDir, snapshot, nowMs, ourProcess(dataDir)));
        out.flush();
        return 0;
    }

    /**
     * A pid from a pid file is ours if it is alive and, where the OS shows its command line, that line
     * names this data directory (the script passes {@code -Dkaas.data-dir=DIR}): a pid file left by a
     * killed process may name a pid that another program has since been given.
     */
    static LongPredicate ourProcess(Path dataDir) {
        String marker = "kaas.data-dir=" + dataDir;
        return pid -> ProcessHandle.of(pid)
                .filter(ProcessHandle::isAlive)
                .map(p -> p.info().commandLine().map(cmd -> cmd.contains(marker)).orElse(true))
                .orElse(false);
    }
}
