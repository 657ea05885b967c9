package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The fence of state that has one writer per epoch (a partition's leader, a coordinator slot's
 * owner): one file per epoch, {@code <name>s/<epoch:08x>} (a directory of its own, so the check
 * every acknowledgement makes lists a handful of names, not the state's files), written once
 * (temp + fsync + rename + directory fsync) and never by another epoch. The holder is the owner
 * named in the highest epoch's file.
 *
 * <p>Why not one file rewritten by each new owner: an opener that read an older fence and then
 * paused would, on resuming, write its older epoch back over a newer one, and both could pass
 * their checks. With a file per epoch nothing can take the fence back; a newer claim always wins.
 *
 * <p>Claim order for a new owner: write its file, then check that no newer one exists, then read
 * the old owner's state. An owner acknowledges a write only after it is durable and {@link #holds}
 * still answers true, so whatever it acknowledged happened before the newer file existed, and the
 * newer owner reads it. Blocking I/O: never on an event loop.
 */
public final class EpochFence {
    /** Who holds the fence, under which epoch. */
    public record Holder(long epoch, int owner) {
    }

    private static final Pattern EPOCH = Pattern.compile("[0-9a-f]{8}");

    private final Disk disk;
    private final Path parent;
    private final Path dir;
    private final Path legacyFile;
    private final Function<byte[], Holder> legacyReader;
    private final Function<Holder, byte[]> legacyWriter;

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
        return dir.resolve(String.format("%08x", epoch));
    }

    /**
     * Claims the fence for {@code epoch}.
     *
     * @return null when claimed; otherwise the holder that refused it (a newer epoch, or the same
     *         epoch claimed by another owner)
     */
    public Holder claim(long epoch, int owner) throws IOException {
        Holder current = holder();
        if (current != null && current.epoch() > epoch) {
            return current;
        }
        if (!java.nio.file.Files.isDirectory(dir)) {
            java.nio.file.Files.createDirectories(dir);
            disk.fsyncDirectory(parent);
        }
        AtomicFiles.write(disk, fileOf(epoch), Json.bytes(new Holder(epoch, owner)));
        Holder after = holder();
        if (after == null || after.epoch() != epoch || after.owner() != owner) {
            return after == null ? new Holder(-1, -1) : after;
        }
        AtomicFiles.write(disk, legacyFile, legacyWriter.apply(after));
        prune(epoch);
        return null;
    }

    /** True when the highest epoch's file names {@code epoch} and {@code owner}: read fresh from the volume. */
    public boolean holds(long epoch, int owner) throws IOException {
        Holder h = holder();
        return h != null && h.epoch() == epoch && h.owner() == owner;
    }

    /** The current holder, or null when nobody ever claimed. */
    public Holder holder() throws IOException {
        long newest = -1;
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                if (EPOCH.matcher(n).matches()) {
                    newest = Math.max(newest, Long.parseLong(n, 16));
                }
            }
        } catch (NoSuchFileException e) {
            // No claim under this version yet: only the legacy file can say anything.
        }
        Holder h = null;
        if (newest >= 0) {
            var bytes = AtomicFiles.read(fileOf(newest));
            if (bytes.isPresent()) {
                h = Json.read(bytes.get(), Holder.class);
            }
        }
        var old = AtomicFiles.read(legacyFile);
        if (old.isPresent()) {
            Holder l = legacyReader.apply(old.get());
            if (h == null || l.epoch() > h.epoch()) {
                h = l;
            }
        }
        return h;
    }

    /** Removes the files of epochs before {@code epoch}: only the highest decides, older ones are history. */
    private void prune(long epoch) throws IOException {
        List<Path> older = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                if (EPOCH.matcher(n).matches() && Long.parseLong(n, 16) < epoch) {
                    older.add(p);
                }
            }
        }
        for (Path p : older) {
            disk.delete(p);
        }
    }
}
