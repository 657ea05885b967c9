package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The fence of state that has one writer per epoch (a partition's leader, a coordinator slot's
 * owner): one file per epoch, {@code <name>s/<epoch:08x>} (a directory of its own, so the check
 * every acknowledgement makes lists a handful of names, not the state's files), written once
 * (temp + fsync + rename, then the directory fsyncs: at once in {@link #claim}, or when the
 * claimer says so in {@link #claimDeferringSync}) and never by another epoch. The holder is the
 * owner named in the highest epoch's file.
 *
 * <p>Why not one file rewritten by each new owner: an opener that read an older fence and then
 * paused would, on resuming, write its older epoch back over a newer one, and both could pass
 * their checks. With a file per epoch nothing can take the fence back; a newer claim always wins.
 *
 * <p>Claim order for a new owner: write its file, then check that no newer one exists, then read
 * the old owner's state. An owner acknowledges a write only after it is durable and {@link #holds}
 * still answers true, so whatever it acknowledged happened before the newer file existed, and the
 * newer owner reads it. Blocking I/O: never on an event loop.
 *
 * <p>{@link #holds} runs before every acknowledgement, so it reads as little as the answer needs:
 * the directory's names (fresh every time: a newer epoch is a new name), and the holder's and the
 * legacy file's contents only when their identity (file key, modification time, size) differs
 * from the last read. Every write here replaces a file by rename, which gives it a new file key,
 * so a file that still has the identity it had when read still says what it said then.
 */
public final class EpochFence {
    /** Who holds the fence, under which epoch. */
    public record Holder(long epoch, int owner) {
    }

    /** What a file said when it had this identity; a replaced file never has the same one. */
    private record Seen(Path file, Object fileKey, FileTime modified, long size, Holder holder) {
        boolean same(Path f, BasicFileAttributes a) {
            return file.equals(f) && fileKey != null && fileKey.equals(a.fileKey()) && modified.equals(a.lastModifiedTime())
                    && size == a.size();
        }
    }

    private final Disk disk;
    private final Path parent;
    private final Path dir;
    private final Path legacyFile;
    private final Function<byte[], Holder> legacyReader;
    private final Function<Holder, byte[]> legacyWriter;
    private volatile Seen epochFileSeen;
    private volatile Seen legacySeen;

    /**
     * @param legacyReader reads the single fence file {@code name} that older kaas versions rewrote in place
     * @param legacyWriter writes it: kept up to date with each claim, so an older kaas binary still
     *                     running against the same volume (a rolling upgrade) sees the newest epoch
     */
    public EpochFence(Disk disk, Path parent, String name, Function<byte[], Holder> legacyReader,
                      Function<Holder, byte[]> legacyWriter) {
        this.disk = disk;
        this.parent = parent;
        this.dir = parent.resolve(name + "s");
        this.legacyFile = parent.resolve(name);
        this.legacyReader = legacyReader;
        this.legacyWriter = legacyWriter;
    }

    private Path fileOf(long epoch) {
        String hex = Long.toHexString(epoch);
        return dir.resolve(hex.length() >= 8 ? hex : "00000000".substring(hex.length()) + hex);
    }

    /** An epoch file's name: eight or more lowercase hex digits (as {@code %08x} writes them). */
    private static long epochOf(String name) {
        if (name.length() < 8 || name.length() > 15) {
            return -1;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return -1;
            }
        }
        return Long.parseLong(name, 16);
    }

    /**
     * Claims the fence for {@code epoch}.
     *
     * @return null when claimed; otherwise the holder that refused it (a newer epoch, or the same
     *         epoch claimed by another owner)
     */
    public Holder claim(long epoch, int owner) throws IOException {
        Holder refused = claimDeferringSync(epoch, owner);
        if (refused == null) {
            syncDirectories();
        }
        return refused;
    }

    /**
     * As {@link #claim}, without its directory fsyncs. The claim is visible to every reader as soon
     * as this returns, which is what fences the old owner; it is durable only after
     * {@link #syncDirectories}, which the claimer must call before it acknowledges anything under
     * {@code epoch}. Until then a crash can only undo a claim under which nothing was acknowledged.
     * For an opener that changes other names in the fence's parent directory too (a partition's
     * new segment) and so makes them all durable with one fsync: taking over thousands of
     * partitions at once is bounded by fsyncs.
     */
    public Holder claimDeferringSync(long epoch, int owner) throws IOException {
        Holder current = holder();
        if (current != null && current.epoch() > epoch) {
            return current;
        }
        if (!java.nio.file.Files.isDirectory(dir)) {
            java.nio.file.Files.createDirectories(dir);
        }
        AtomicFiles.replace(disk, fileOf(epoch), Json.bytes(new Holder(epoch, owner)));
        Holder after = holder();
        if (after == null || after.epoch() != epoch || after.owner() != owner) {
            return after == null ? new Holder(-1, -1) : after;
        }
        AtomicFiles.replace(disk, legacyFile, legacyWriter.apply(after));
        prune(epoch);
        return null;
    }

    /** Makes a claim and every other name change in the fence's directory and its parent durable. */
    public void syncDirectories() {
        disk.fsyncDirectory(dir);
        disk.fsyncDirectory(parent);
    }

    /**
     * True when the highest epoch's file names {@code epoch} and {@code owner}: the directory is
     * listed fresh from the volume; a file is re-read only when it was replaced since last read.
     */
    public boolean holds(long epoch, int owner) throws IOException {
        Holder h = holder();
        return h != null && h.epoch() == epoch && h.owner() == owner;
    }

    /** The current holder, or null when nobody ever claimed. */
    public Holder holder() throws IOException {
        long newest = newestEpoch();
        Holder h = newest >= 0 ? read(fileOf(newest), true) : null;
        Holder l = read(legacyFile, false);
        if (l != null && (h == null || l.epoch() > h.epoch())) {
            h = l;
        }
        return h;
    }

    private long newestEpoch() throws IOException {
        long newest = -1;
        try (var names = Files.newDirectoryStream(dir)) {
            for (Path p : names) {
                newest = Math.max(newest, epochOf(p.getFileName().toString()));
            }
        } catch (NoSuchFileException e) {
            // No claim under this version yet: only the legacy file can say anything.
        }
        return newest;
    }

    /** The holder a file names, or null when it is gone; parsed again only when the file was replaced. */
    private Holder read(Path file, boolean epochFile) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return null;
        }
        Seen seen = epochFile ? epochFileSeen : legacySeen;
        // Bound to the name too: a freed inode can come back under another epoch's name.
        if (seen != null && seen.same(file, attrs)) {
            return seen.holder();
        }
        // Read after the attributes: what is parsed is at least as new as the identity remembered with it.
        var bytes = AtomicFiles.read(file);
        if (bytes.isEmpty()) {
            return null;
        }
        Holder h = epochFile ? Json.read(bytes.get(), Holder.class) : legacyReader.apply(bytes.get());
        Seen now = new Seen(file, attrs.fileKey(), attrs.lastModifiedTime(), attrs.size(), h);
        if (epochFile) {
            epochFileSeen = now;
        } else {
            legacySeen = now;
        }
        return h;
    }

    /** Removes the files of epochs before {@code epoch}: only the highest decides, older ones are history. */
    private void prune(long epoch) throws IOException {
        List<Path> older = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                long e = epochOf(n);
                if (e >= 0 && e < epoch) {
                    older.add(p);
                }
            }
        }
        for (Path p : older) {
            disk.delete(p);
        }
    }
}
