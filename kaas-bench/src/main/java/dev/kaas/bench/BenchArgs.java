package dev.kaas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The options the side-by-side workloads ({@code --sasl-ssl}, {@code --transactions},
 * {@code --compaction}, {@code --cluster}) share: the workload's flag, {@code --root DIR},
 * {@code --records N}, {@code --reps R}, {@code --systems a,b} where the workload lets one choose,
 * and the workload's own whole-number options, each with its default.
 */
final class BenchArgs {
    final Path root;
    final int records;
    final int reps;
    /** Null where the workload fixes its systems. */
    final List<String> systems;
    private final Map<String, Long> own;

    private BenchArgs(Path root, int records, int reps, List<String> systems, Map<String, Long> own) {
        this.root = root;
        this.records = records;
        this.reps = reps;
        this.systems = systems;
        this.own = own;
    }

    /**
     * @param systems the default systems, or null when {@code --systems} is not an option
     * @param own     the workload's own options (with their leading dashes) and defaults, in the order the usage lists them
     */
    static BenchArgs parse(String flag, String[] args, int records, int reps, List<String> systems, Map<String, Long> own) {
        Path root = Path.of(".").toAbsolutePath().normalize();
        Map<String, Long> values = new LinkedHashMap<>(own);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals(flag)) {
                continue;
            } else if (a.equals("--root")) {
                root = Path.of(args[++i]).toAbsolutePath().normalize();
            } else if (a.equals("--records")) {
                records = Integer.parseInt(args[++i]);
            } else if (a.equals("--reps")) {
                reps = Integer.parseInt(args[++i]);
            } else if (a.equals("--systems") && systems != null) {
                systems = List.of(args[++i].split(","));
            } else if (values.containsKey(a)) {
                values.put(a, Long.parseLong(args[++i]));
            } else {
                throw new IllegalArgumentException("unknown option for " + flag + ": " + a + " (options: --records N, --reps R"
                        + (systems != null ? ", --systems kaas,apache,apache-fsync" : "")
                        + own.keySet().stream().map(k -> ", " + k + " N").collect(Collectors.joining()) + ")");
            }
        }
        return new BenchArgs(root, records, reps, systems, values);
    }

    int intOption(String name) {
        return Math.toIntExact(own.get(name));
    }

    /** A new work directory under kaas-bench/target and the launcher for it, with these options. */
    SideBySide launcher(String workPrefix, int e2eMessages, List<String> systems) throws IOException {
        Path work = Files.createTempDirectory(root.resolve("kaas-bench/target"), workPrefix);
        return new SideBySide(new SideBySide.Options(root, work, records, 1024, reps, e2eMessages, systems));
    }
}
