package dev.kaas.broker.storage;

import dev.kaas.common.fs.Disk;
import dev.kaas.common.fs.ForwardingFileChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * A volume that runs out of space, at the file-channel seam (a non-root test cannot fill a real
 * one): while {@link #full}, writes fail with ENOSPC after writing half of what they were given (a
 * short write, then the error) and files cannot be opened; while {@link #fsyncFails}, every force
 * fails, as NFS reports a full volume.
 */
public final class FullDisk implements Disk {
    public volatile boolean full;
    /** NFS reports a full volume at the fsync, after the writes were taken into the page cache. */
    public volatile boolean fsyncFails;

    @Override
    public FileChannel open(Path file, OpenOption... options) throws IOException {
        if (full) {
            throw new IOException("No space left on device: " + file);
        }
        return new Channel(Disk.SYSTEM.open(file, options));
    }

    @Override
    public void move(Path from, Path to) throws IOException {
        Disk.SYSTEM.move(from, to);
    }

    @Override
    public void delete(Path file) throws IOException {
        Disk.SYSTEM.delete(file);
    }

    @Override
    public void fsyncDirectory(Path dir) {
        Disk.SYSTEM.fsyncDirectory(dir);
    }

    final class Channel extends ForwardingFileChannel {
        Channel(FileChannel real) {
            super(real);
        }

        private int halfThenFail(ByteBuffer src, long position) throws IOException {
            ByteBuffer half = src.duplicate();
            half.limit(half.position() + Math.max(1, src.remaining() / 2));
            real.write(half, position);
            throw new IOException("No space left on device");
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            return full ? halfThenFail(src, position) : real.write(src, position);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return full ? halfThenFail(src, real.position()) : real.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            if (full) {
                throw new IOException("No space left on device");
            }
            return real.write(srcs, offset, length);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            if (full) {
                throw new IOException("No space left on device");
            }
            return real.transferFrom(src, position, count);
        }

        @Override
        public void force(boolean metaData) throws IOException {
            if (fsyncFails) {
                throw new IOException("No space left on device (reported by fsync)");
            }
            real.force(metaData);
        }
    }
}
