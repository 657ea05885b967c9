package dev.kaas.controller.status;

import dev.kaas.common.cluster.LeaseRecord;
import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Json;
import dev.kaas.common.model.Assignment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One look at a data directory, taken without any lock: the lease and the assignment as the
 * controller last wrote them (each file is replaced whole by rename, so a read sees one version or
 * the next, never a mix; the two files may be from different moments), and this machine's run
 * directory.
 */
record StatusSnapshot(Optional<LeaseRecord> lease, Optional<Assignment> assignment, RunDir run) {
    /** The data directory holds no cluster: no controller ever started on it. */
    static final class NoClusterException extends IOException {
        NoClusterException(String message) {
            super(message);
        }
    }

    static StatusSnapshot read(Path dataDir) throws IOException {
        Path cluster = dataDir.resolve("__cluster");
        if (!Files.isDirectory(cluster)) {
            throw new NoClusterException("no kaas cluster in " + dataDir + " (it has no __cluster/ directory)");
        }
        Optional<LeaseRecord> lease = readJson(cluster.resolve("controller.lease"), LeaseRecord.class);
        Optional<Assignment> assignment = readJson(cluster.resolve("assignment.json"), Assignment.class);
        return new StatusSnapshot(lease, assignment, RunDir.read(dataDir.resolve("run")));
    }

    private static <T> Optional<T> readJson(Path file, Class<T> type) throws IOException {
        Optional<byte[]> bytes = AtomicFiles.read(file);
        if (bytes.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(Json.read(bytes.get(), type));
        } catch (IOException e) {
            throw new IOException("cannot parse " + file + ": " + e.getMessage(), e);
        }
    }
}
