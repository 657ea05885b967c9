package dev.kaas.controller.cluster;

import dev.kaas.common.fs.AtomicFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.Uuid;
import org.jboss.logging.Logger;

/**
 * Removes what deletes left on the volume: directories ({@code <name>-<topic id>}) of topics this
 * controller deleted that no broker removed (deleted while no broker had the partition open: all
 * down, or mid-handoff), and trees a crash left half-removed ({@code ….deleted-<uuid>}; removing
 * one a broker is removing at the same moment is harmless, both only delete).
 *
 * <p>Only the leading controller sweeps, on its own thread (a scan of thousands of directories
 * must not delay lease renewals on the controller loop), and only ids it saw deleted
 * ({@link ControllerCore#sweepableTopicIds}): never an id it merely does not know, which is what
 * a volume moved under a new catalog or resources restored without their status look like. An id
 * still carried by a declaration (a KafkaTopic resource) or still in the catalog or the published
 * assignment is never swept. Removal renames aside first ({@link AtomicFiles#deleteTree}).
 * Deletions seen by an earlier controller process are not known to this one: their leftovers stay
 * (documented in src/docs/operations.md).
 */
final class OrphanSweeper {
    private static final Logger LOG = Logger.getLogger(OrphanSweeper.class);
    private static final Pattern TOPIC_DIR = Pattern.compile(".+-([A-Za-z0-9_-]{22})");
    private static final Pattern DELETED = Pattern.compile(".+\\.deleted-[0-9a-f-]{36}");

    private final Path dataDir;
    private final ControllerRuntime runtime;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kaas-orphan-sweeper");
        t.setDaemon(true);
        return t;
    });

    OrphanSweeper(Path dataDir, ControllerRuntime runtime) {
        this.dataDir = dataDir;
        this.runtime = runtime;
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
                List<Path> listed = candidates();
                Set<String> sweepable = runtime.submit(ControllerCore::sweepableTopicIds).get(60, TimeUnit.SECONDS);
                // Each rename aside runs on the controller loop right after a fresh check: an id a
                // catalog change made live again between the listing and the rename is left alone.
                Set<String> done = sweep(listed, sweepable, (id, dir) -> runtime.submit(core ->
                        core.isLeader() && core.sweepableTopicIds().contains(id) ? AtomicFiles.renameAside(dir) : null).get(60, TimeUnit.SECONDS));
                runtime.execute(core -> core.swept(done));
            }
        } catch (Exception e) {
            LOG.warnf("orphan sweep skipped: %s", e.toString());
        }
    }

    List<Path> candidates() throws IOException {
        List<Path> out = new ArrayList<>();
        try (var list = Files.list(dataDir)) {
            list.filter(Files::isDirectory).forEach(out::add);
        }
        return out;
    }

    /** Renames a directory aside if its id is still sweepable; returns where, or null to leave it. */
    @FunctionalInterface
    interface Confirm {
        Path renameAsideIfStillSweepable(String topicId, Path dir) throws Exception;
    }

    /**
     * Removes, of {@code candidates}, the directories of {@code sweepable} ids (each renamed aside
     * through {@code confirm}) and half-removed trees; returns the sweepable ids none of whose
     * directories is left (no longer worth tracking).
     */
    Set<String> sweep(List<Path> candidates, Set<String> sweepable, Confirm confirm) {
        Set<String> done = new HashSet<>(sweepable);
        for (Path dir : candidates) {
            String name = dir.getFileName().toString();
            Matcher m = TOPIC_DIR.matcher(name);
            String id = m.matches() && isUuid(m.group(1)) ? m.group(1) : null;
            try {
                if (DELETED.matcher(name).matches()) {
                    AtomicFiles.removeRecursively(dir);
                } else if (id != null && sweepable.contains(id)) {
                    Path aside = confirm.renameAsideIfStillSweepable(id, dir);
                    if (aside == null) {
                        done.remove(id);
                        continue;
                    }
                    AtomicFiles.fsyncDirectory(dataDir);
                    AtomicFiles.removeRecursively(aside);
                    LOG.infof("removed the directory of a deleted topic dir=%s topicId=%s", name, id);
                }
            } catch (Exception e) {
                // A broker removing the same tree at the same moment; the next sweep finishes it.
                done.remove(id);
                LOG.debugf("could not remove %s: %s", dir, e.toString());
            }
        }
        return done;
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
