package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fence of state that has one writer per epoch (a partition's leader, a coordinator slot's
 * owner): one file per epoch, {@code <name>-<epoch:08x>}, written once (temp + fsync + rename +
 * directory fsync) and never by another epoch. The holder is the owner named in the highest
 * epoch's file.
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

    private final Disk disk;
    private final Path dir;
    private final String name;
    private final Pattern pattern;
    private final Function<byte[], Holder> legacy;

    /**
     * @param legacy reads the single fence file {@code name} that older kaas versions rewrote in place (null: none)
     */
    public EpochFence(Disk disk, Path dir, String name, Function<byte[], Holder> legacy) {
        this.disk = disk;
        this.dir = dir;
        this.name = name;
        this.pattern = Pattern.compile(Pattern.quote(name) + "-([0-9a-f]{8})");
        this.legacy = legacy;
    }

    private Path fileOf(long epoch) {
        return dir.resolve(String.format("%s-%08x", name, epoch));
    }

    /** Claims the fence for {@code epoch}; false (and nothing owned) when a newer epoch holds it. */
    public boolean claim(long epoch, int owner) throws IOException {
        Holder current = holder();
        if (current != null && current.epoch() > epoch) {
            return false;
        }
        AtomicFiles.write(disk, fileOf(epoch), Json.bytes(new Holder(epoch, owner)));
        if (!holds(epoch, owner)) {
            return false;
        }
        prune(epoch);
        return true;
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
                Matcher m = pattern.matcher(p.getFileName().toString());
                if (m.matches()) {
                    newest = Math.max(newest, Long.parseLong(m.group(1), 16));
                }
            }
        } catch (NoSuchFileException e) {
            return null;
        }
        Holder h = null;
        if (newest >= 0) {
            var bytes = AtomicFiles.read(fileOf(newest));
            if (bytes.isPresent()) {
                h = Json.read(bytes.get(), Holder.class);
            }
        }
        if (legacy != null) {
            var old = AtomicFiles.read(dir.resolve(name));
            if (old.isPresent()) {
                Holder l = legacy.apply(old.get());
                if (h == null || l.epoch() > h.epoch()) {
                    h = l;
                }
            }
        }
        return h;
    }

    /** Removes the files of epochs before {@code epoch}: only the highest decides, older ones are history. */
    private void prune(long epoch) throws IOException {
        List<Path> older = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Matcher m = pattern.matcher(p.getFileName().toString());
                if (m.matches() && Long.parseLong(m.group(1), 16) < epoch) {
                    older.add(p);
                }
            }
        }
        if (legacy != null) {
            older.add(dir.resolve(name));
        }
        for (Path p : older) {
            disk.delete(p);
        }
    }
}
