package dev.kaas.common.cluster;

import dev.kaas.common.fs.AtomicFiles;
import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The published assignment kept on the volume under a name per controller epoch, for bindings
 * whose lease is not on the volume (Kubernetes): {@code __cluster/assignments/<epoch, 20 digits>.json}.
 *
 * <p>Why per epoch: such a binding checks the lease before a write, but cannot hold it across the
 * rename the way the standalone binding holds its file lock. A controller deposed between its
 * check and its rename therefore writes only its own epoch's file, never over a successor's, and
 * a reader takes the highest epoch: the volume contract's "single writer fenced by epoch". Within
 * one epoch there is one writer (a lease holder identity names one process).
 */
public final class EpochAssignmentFiles {
    private static final Pattern NAME = Pattern.compile("\\d{20}\\.json");
    /** Epoch files kept besides the newest: enough to read back after a successor's first write. */
    private static final int KEEP = 2;

    private EpochAssignmentFiles() {
    }

    public static Path directory(Path clusterDir) {
        return clusterDir.resolve("assignments");
    }

    /** The newest epoch's file, if any. */
    public static Optional<Path> latest(Path clusterDir) throws IOException {
        List<Path> files = files(clusterDir);
        return files.isEmpty() ? Optional.empty() : Optional.of(files.get(files.size() - 1));
    }

    /** The highest epoch an assignment file was written under, 0 when none was. */
    public static long highestEpoch(Path clusterDir) throws IOException {
        Optional<Path> latest = latest(clusterDir);
        if (latest.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(latest.get().getFileName().toString().substring(0, 20));
        } catch (NumberFormatException e) {
            throw new IOException("assignment file name out of range: " + latest.get(), e);
        }
    }

    /**
     * Writes {@code bytes} as epoch {@code epoch}'s assignment (temp + fsync + rename), then drops
     * old epochs' files.
     *
     * @throws LeaseFencedException if a later epoch's file exists: a successor has written
     */
    public static void write(Disk disk, Path clusterDir, long epoch, byte[] bytes) throws IOException {
        if (highestEpoch(clusterDir) > epoch) {
            throw new LeaseFencedException("refused to write the assignment under epoch " + epoch
                    + ": the volume holds one of epoch " + highestEpoch(clusterDir));
        }
        Path file = directory(clusterDir).resolve(String.format("%020d.json", epoch));
        AtomicFiles.write(disk, file, bytes);
        List<Path> files = files(clusterDir);
        for (int i = 0; i < files.size() - 1 - KEEP; i++) {
            if (files.get(i).compareTo(file) < 0) {
                Files.deleteIfExists(files.get(i));
            }
        }
    }

    private static List<Path> files(Path clusterDir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (var list = Files.list(directory(clusterDir))) {
            list.filter(p -> NAME.matcher(p.getFileName().toString()).matches()).sorted().forEach(files::add);
        } catch (NoSuchFileException e) {
            return List.of();
        }
        return files;
    }
}
