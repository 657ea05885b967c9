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
 * Then, when a controller runs, what only it knows (broker health, drains, consumer lag) from the
 * leading controller's REST admin API ({@link LiveStatus}; {@code KAAS_REST_URL} and
 * {@code KAAS_REST_TOKEN} point it at another controller and give it credentials,
 * {@code KAAS_REST_CA} the authority its HTTPS certificate is checked against).
 *
 * Exit code 0 when it could read the directory, 1 (with one line on stderr) when it holds no
 * cluster or a file cannot be read. See src/docs/running.md, "Several brokers".
 */
public final class ClusterStatus {
    private ClusterStatus() {
    }

    public static void main(String[] args) {
        String ca = System.getenv("KAAS_REST_CA");
        java.util.function.Function<java.net.URI, java.util.Optional<String>> http;
        try {
            http = LiveStatus.http(System.getenv("KAAS_REST_TOKEN"), ca == null || ca.isEmpty() ? null : Path.of(ca));
        } catch (IllegalArgumentException e) {
            // The data directory's part is still worth printing; the live part cannot be asked.
            System.err.println("kaas: " + e.getMessage() + "; status without the live part");
            http = null;
        }
        System.exit(run(args, System.out, System.err, System.currentTimeMillis(), System.getenv("KAAS_REST_URL"), http));
    }

    /** Without the live part (no controller asked): what the data directory holds. */
    static int run(String[] args, PrintStream out, PrintStream err, long nowMs) {
        return run(args, out, err, nowMs, null, null);
    }

    /**
     * @param restUrl a controller's base URL ({@code http://host:port}) to ask instead of the ones
     *                the run directory implies ({@code KAAS_REST_URL})
     * @param http    how the live part asks the REST API; null: no live part
     */
    static int run(String[] args, PrintStream out, PrintStream err, long nowMs, String restUrl,
                   java.util.function.Function<java.net.URI, java.util.Optional<String>> http) {
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
        if (http != null) {
            out.print(LiveStatus.format(restApis(snapshot.run(), restUrl), http));
        }
        out.flush();
        return 0;
    }

    /**
     * Where the controllers' REST APIs are: {@code restUrl} if given, else those of the controllers
     * {@code ./kaas up} started, on the ports it gives controller j (Kafka port + 4(j-1) + 2).
     */
    static java.util.List<java.net.URI> restApis(RunDir run, String restUrl) {
        if (restUrl != null && !restUrl.isBlank()) {
            String base = restUrl.endsWith("/") ? restUrl : restUrl + "/";
            return java.util.List.of(java.net.URI.create(base + "api/"));
        }
        if (run.port().isEmpty()) {
            return java.util.List.of();
        }
        java.util.List<java.net.URI> out = new java.util.ArrayList<>();
        int controllers = Math.max(run.controllers(), run.controllerPids().keySet().stream().mapToInt(Integer::intValue).max().orElse(1));
        for (int j = 1; j <= controllers; j++) {
            out.add(java.net.URI.create("http://127.0.0.1:" + (run.port().getAsInt() + 4 * (j - 1) + 2) + "/api/"));
        }
        return out;
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
