package dev.kaas.controller.cluster;

import dev.kaas.common.fs.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.Uuid;
import org.jboss.logging.Logger;

/**
 * Removes what deletes left on the volume: topic directories ({@code <name>-<topic id>}) whose
 * topic the catalog no longer holds (deleted while no broker had the partition open: all down,
 * or mid-handoff), and trees a crash left half-removed ({@code ….deleted-<uuid>}).
 *
 * <p>Only the leading controller sweeps, on its own thread (a scan of thousands of directories
 * must not delay lease renewals on the controller loop). The directories are listed first and
 * the known topic ids read after ({@link ControllerCore#knownTopicIds}): a directory exists only
 * after its topic entered the catalog and topic ids are never reused, so an id unknown at that
 * later moment belongs to a deleted topic. Known ids include every id a declaration (a
 * KafkaTopic resource) still carries, so nothing is removed while its resource exists. Removal
 * renames aside first ({@link AtomicFiles#deleteTree}).
 */
final class OrphanSweeper {
    private static final Logger LOG = Logger.getLogger(OrphanSweeper.class);
    private static final Pattern TOPIC_DIR = Pattern.compile(".+-([A-Za-z0-9_-]{22})");
    private static final Pattern DELETED = Pattern.compile(".+\\.deleted-[0-9a-f-]{36}");
    /** A half-removed tree younger than this may still be being removed by a broker. */
    static final long DELETED_MIN_AGE_MS = 60_000;

    private final Path dataDir;
    private final ControllerRuntime runtime;
    private final LongSupplier clock;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-orphan-sweeper");
        t.setDaemon(true);
        return t;
    });

    OrphanSweeper(Path dataDir, ControllerRuntime runtime, LongSupplier clock) {
        this.dataDir = dataDir;
        this.runtime = runtime;
        this.clock = clock;
    }

    void start(long everyMs) {
        thread.scheduleWithFixedDelay(this::sweepQuietly, everyMs, everyMs, TimeUnit.MILLISECONDS);
    }

    void close() {
        thread.shutdownNow();
    }

    private void sweepQuietly() {
        try {
            if (runtime.isLeader()) {
                sweep(runtime.submit(ControllerCore::knownTopicIds).get(60, TimeUnit.SECONDS));
            }
        } catch (Exception e) {
            LOG.warnf("orphan sweep skipped: %s", e.toString());
        }
    }

    /** Lists candidates, then asks {@code knownIds} (called after listing); returns the directories removed. */
    List<Path> sweep(Set<String> knownIds) throws IOException {
        return sweep(candidates(), knownIds);
    }

    List<Path> candidates() throws IOException {
        List<Path> out = new ArrayList<>();
        try (var list = Files.list(dataDir)) {
            list.filter(Files::isDirectory).forEach(out::add);
        }
        return out;
    }

    List<Path> sweep(List<Path> candidates, Set<String> knownIds) {
        List<Path> removed = new ArrayList<>();
        for (Path dir : candidates) {
            String name = dir.getFileName().toString();
            try {
                if (DELETED.matcher(name).matches()) {
                    if (clock.getAsLong() - Files.getLastModifiedTime(dir).toMillis() > DELETED_MIN_AGE_MS) {
                        AtomicFiles.removeRecursively(dir);
                        removed.add(dir);
                    }
                    continue;
                }
                Matcher m = TOPIC_DIR.matcher(name);
                if (!m.matches() || !isUuid(m.group(1)) || knownIds.contains(m.group(1))) {
                    continue;
                }
                AtomicFiles.deleteTree(dir);
                removed.add(dir);
                LOG.infof("removed the directory of a deleted topic dir=%s topicId=%s", name, m.group(1));
            } catch (IOException | UncheckedIOException e) {
                // A broker removing the same tree at the same moment; the next sweep finishes it.
                LOG.debugf("could not remove %s: %s", dir, e.toString());
            }
        }
        return removed;
    }

    private static boolean isUuid(String s) {
        try {
            Uuid.fromString(s);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
