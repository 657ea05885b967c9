package dev.kaas.broker.storage;

import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
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

    final class Channel extends FileChannel {
        private final FileChannel inner;

        Channel(FileChannel inner) {
            this.inner = inner;
        }

        private int halfThenFail(ByteBuffer src, long position) throws IOException {
            ByteBuffer half = src.duplicate();
            half.limit(half.position() + Math.max(1, src.remaining() / 2));
            inner.write(half, position);
            throw new IOException("No space left on device");
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            return full ? halfThenFail(src, position) : inner.write(src, position);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return full ? halfThenFail(src, inner.position()) : inner.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            if (full) {
                throw new IOException("No space left on device");
            }
            return inner.write(srcs, offset, length);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return inner.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return inner.read(dsts, offset, length);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return inner.read(dst, position);
        }

        @Override
        public long position() throws IOException {
            return inner.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            inner.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return inner.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            inner.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            if (fsyncFails) {
                throw new IOException("No space left on device (reported by fsync)");
            }
            inner.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return inner.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            if (full) {
                throw new IOException("No space left on device");
            }
            return inner.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return inner.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return inner.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return inner.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            inner.close();
        }
    }
}
