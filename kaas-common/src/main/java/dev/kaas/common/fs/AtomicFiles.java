package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.UUID;

/**
 * The one way kaas writes a file that another process may read: write a temp file in the
 * same directory, fsync it, rename it over the target, fsync the directory. A reader
 * therefore sees either the old or the new content, never a torn mix, and a crash after
 * this method returns cannot lose the write (see ARCHITECTURE.md, "Storage on the shared volume").
 *
 * <p>All methods do blocking I/O: never call them on a Vert.x event loop.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    public static void write(Path target, byte[] content) throws IOException {
        write(Disk.SYSTEM, target, content);
    }

    /** As {@link #write(Path, byte[])}, through {@code disk}: the seam durability tests use. */
    public static void write(Disk disk, Path target, byte[] content) throws IOException {
        replace(disk, target, content);
        disk.fsyncDirectory(target.toAbsolutePath().getParent());
    }

    /**
     * {@link #write(Disk, Path, byte[])} without its directory fsync: readers see the old or the
     * new content, never a mix, at once; the new name is durable only once the caller fsyncs the
     * directory. For a caller that changes several names in one directory before anything
     * depends on their durability, and so pays for one directory fsync instead of one each.
     */
    public static void replace(Disk disk, Path target, byte[] content) throws IOException {
        replace(disk, target, content, true);
    }

    /**
     * {@link #replace} without any fsync: readers (on NFS, any client that opens it after the
     * rename) see the old or the whole new content, but a crash may leave nothing or an empty
     * file. Only for messages nobody needs after a crash, such as a question to another broker
     * whose asker retries: a reader must treat an empty or malformed file as absent.
     */
    public static void publish(Disk disk, Path target, byte[] content) throws IOException {
        replace(disk, target, content, false);
    }

    private static void replace(Disk disk, Path target, byte[] content, boolean durable) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + target.getFileName() + ".tmp-" + UUID.randomUUID());
        try {
            try (FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                if (durable) {
                    ch.force(true);
                }
            }
            disk.move(tmp, target);
        } finally {
            disk.delete(tmp);
        }
    }

    /** Reads a whole file fresh from the volume; empty when it does not exist. */
    public static Optional<byte[]> read(Path file) throws IOException {
        try {
            return Optional.of(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** Makes a rename or create in {@code dir} durable. Some file systems refuse to open a directory; they order metadata anyway. */
    public static void fsyncDirectory(Path dir) {
        Disk.SYSTEM.fsyncDirectory(dir);
    }

    /**
     * Deletes a directory tree by first renaming it aside, so a half-deleted tree is never
     * mistaken for live data under its old name.
     */
    public static void deleteTree(Path dir) throws IOException {
        Path aside = renameAside(dir);
        if (aside == null) {
            return;
        }
        fsyncDirectory(dir.getParent());
        removeRecursively(aside);
    }

    /**
     * The first step of {@link #deleteTree}: renames {@code dir} to {@code <name>.deleted-<uuid>}
     * beside it (not yet durable), for a caller that must take that step under its own check.
     *
     * @return the new name, null if {@code dir} does not exist
     */
    public static Path renameAside(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return null;
        }
        Path aside = dir.resolveSibling(dir.getFileName() + ".deleted-" + UUID.randomUUID());
        Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
        return aside;
    }

    public static void removeRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            var sorted = paths.sorted(java.util.Comparator.reverseOrder()).toList();
            for (Path p : sorted) {
                Files.deleteIfExists(p);
            }
        }
    }
}
