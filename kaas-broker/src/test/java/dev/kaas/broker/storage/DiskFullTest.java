package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.common.fs.Disk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume that runs out of space (ENOSPC at the file-channel seam, as a non-root test cannot
 * fill a real file system): the append that meets it fails and leaves nothing a reader or a
 * recovery would take for a record, reads go on, and appends work again once space returns.
 */
class DiskFullTest {
    static final TopicPartition TP = new TopicPartition("full", 0);
    static final String TOPIC_ID = "DDDDDDDDDDDDDDDDDDDDDD";

    /** Writes fail with ENOSPC while {@link #full}, after writing half of what they were given (a short write, then the error). */
    static final class FullDisk implements Disk {
        volatile boolean full;

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

    @TempDir
    Path tmp;

    final ExecutorService flusher = Executors.newFixedThreadPool(2);
    final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    PartitionLog open(int epoch, Disk disk, Map<String, String> configs) throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("full-" + TOPIC_ID).resolve("0"), TP, TOPIC_ID, epoch, 1,
                LogConfig.from(configs), System::currentTimeMillis, flusher, disk);
        opened.add(log);
        return log;
    }

    static MemoryRecords batch(String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(CompressionType.NONE, records);
    }

    static void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    /** Everything readable, segment after segment (one read stops at a segment's end). */
    static List<String> values(PartitionLog log) throws IOException {
        List<String> out = new ArrayList<>();
        long next = 0;
        while (next < log.highWatermark()) {
            long before = next;
            for (RecordBatch b : log.read(next, 1 << 20, true, log.highWatermark()).batches()) {
                for (Record r : b) {
                    out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.value()));
                }
                next = b.lastOffset() + 1;
            }
            if (next == before) {
                break;
            }
        }
        return out;
    }

    @Test
    void anAppendThatMeetsAFullDiskFailsAndLeavesNothingBehind() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of());
        appendDurably(log, batch("a", "b"));

        disk.full = true;
        assertThatThrownBy(() -> log.append(batch("lost-1", "lost-2", "lost-3"))).isInstanceOf(IOException.class);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(values(log)).as("reads go on").containsExactly("0:a", "1:b");

        disk.full = false;
        appendDurably(log, batch("c"));
        assertThat(values(log)).containsExactly("0:a", "1:b", "2:c");
        log.close();

        PartitionLog reopened = open(1, Disk.SYSTEM, Map.of());
        assertThat(reopened.logEndOffset()).isEqualTo(3);
        assertThat(values(reopened)).as("the short write is not a record").containsExactly("0:a", "1:b", "2:c");
    }

    @Test
    void aRollThatMeetsAFullDiskFailsTheAppendAndTheNextOneRolls() throws Exception {
        FullDisk disk = new FullDisk();
        PartitionLog log = open(0, disk, Map.of("segment.bytes", "100"));
        appendDurably(log, batch("x".repeat(80)));

        disk.full = true;
        assertThatThrownBy(() -> log.append(batch("y".repeat(80)))).isInstanceOf(IOException.class);
        assertThat(values(log)).hasSize(1);

        disk.full = false;
        appendDurably(log, batch("z".repeat(80)));
        assertThat(log.segmentCount()).isEqualTo(2);
        log.close();
        assertThat(values(open(1, Disk.SYSTEM, Map.of("segment.bytes", "100")))).containsExactly("0:" + "x".repeat(80), "1:" + "z".repeat(80));
    }
}
