package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * The operations through which kaas makes bytes and names durable on the volume: opening a file
 * channel (whose {@code force} makes its bytes durable), an atomic rename, a delete and a
 * directory fsync (which makes creates, renames and deletes durable).
 *
 * <p>It exists as a seam: production binds {@link #SYSTEM}; durability tests bind a disk that,
 * on a simulated power loss, forgets every byte and every name change not covered by a completed
 * force (see {@code src/docs/durability.md}). Everything that must survive a crash goes through
 * it; reads do not need to, they see whatever the volume holds.
 */
public interface Disk {
    Disk SYSTEM = new SystemDisk();

    FileChannel open(Path file, OpenOption... options) throws IOException;

    /** Renames {@code from} over {@code to} atomically; durable once the directory is fsynced. */
    void move(Path from, Path to) throws IOException;

    /** Deletes a file if it exists; durable once the directory is fsynced. */
    void delete(Path file) throws IOException;

    /** Makes creates, renames and deletes in {@code dir} durable. */
    void fsyncDirectory(Path dir);
}
