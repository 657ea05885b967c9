package dev.kaas.common.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The link key as this process knows it now, re-read every second off the caller's thread: gRPC
 * calls start on event loops, which must not touch a file on an NFS volume, and a rotated Secret
 * (Kubernetes replaces the mounted file) or a key a controller has just made reaches the process
 * without a restart. The last key read stays in use while the file is missing or unreadable.
 */
public final class LinkKeySource implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(LinkKeySource.class);

    private final Path file;
    private final ScheduledExecutorService refresher;
    private volatile byte[] key;
    private volatile String lastProblem;

    private LinkKeySource(Path file) {
        this.file = file;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kaas-link-key");
            t.setDaemon(true);
            return t;
        });
    }

    /** Follows {@code file}, which holds a key already or will (a broker started before any controller). */
    public static LinkKeySource follow(Path file) {
        LinkKeySource source = new LinkKeySource(file);
        source.refresh();
        source.refresher.scheduleWithFixedDelay(source::refresh, 1, 1, TimeUnit.SECONDS);
        return source;
    }

    /** Follows {@code file} starting from {@code key}, which the caller has just read or made there. */
    public static LinkKeySource follow(Path file, byte[] key) {
        LinkKeySource source = new LinkKeySource(file);
        source.key = key;
        source.refresher.scheduleWithFixedDelay(source::refresh, 1, 1, TimeUnit.SECONDS);
        return source;
    }

    public Optional<byte[]> current() {
        return Optional.ofNullable(key);
    }

    public Path file() {
        return file;
    }

    private void refresh() {
        try {
            Optional<byte[]> read = LinkKey.read(file);
            read.ifPresent(k -> key = k);
            if (read.isEmpty() && key == null) {
                report("no link key at " + file + " yet: calls to the controller are refused until a controller makes it"
                        + " (or kaas.link-key-file names the cluster's key)");
            } else {
                lastProblem = null;
            }
        } catch (IOException | RuntimeException e) {
            report("cannot read the link key " + file + ": " + e.getMessage());
        }
    }

    /** Says a problem once, not every second. */
    private void report(String problem) {
        if (!problem.equals(lastProblem)) {
            lastProblem = problem;
            LOG.warn(problem);
        }
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
