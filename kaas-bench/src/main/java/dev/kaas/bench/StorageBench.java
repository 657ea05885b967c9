package dev.kaas.bench;

import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The storage engine alone, on the local file system: append without and with fsync, group
 * commit under concurrent appenders, reads by offset and index lookups. Run with
 * {@code ./kaas bench --jmh}; one batch is 16 records of 1 KiB (about 16 KiB).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class StorageBench {
    @Param({"1", "1000000"})
    public long flushMessages;

    private Path dir;
    private ExecutorService flusher;
    private PartitionLog log;
    private final AtomicLong readCursor = new AtomicLong();
    private long endAtSetup;

    static MemoryRecords batch() {
        SimpleRecord[] records = new SimpleRecord[16];
        byte[] value = new byte[1024];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, value);
        }
        return MemoryRecords.withRecords(CompressionType.NONE, records);
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        dir = Files.createTempDirectory("kaas-jmh");
        flusher = Executors.newFixedThreadPool(4);
        log = PartitionLog.open(dir.resolve("p"), new TopicPartition("bench", 0), "AAAAAAAAAAAAAAAAAAAAAA", 0, 1,
                LogConfig.from(Map.of("flush.messages", Long.toString(flushMessages), "segment.bytes", Integer.toString(256 << 20))),
                System::currentTimeMillis, flusher);
        for (int i = 0; i < 2000; i++) {
            log.append(batch());
        }
        log.awaitDurable(log.logEndOffset()).join();
        endAtSetup = log.logEndOffset();
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        log.abandon();
        flusher.shutdownNow();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** One appender waiting for its own acknowledgement (fsync per batch when flush.messages=1). */
    @Benchmark
    public long appendAndAwait() throws IOException {
        PartitionLog.AppendResult r;
        synchronized (this) {
            r = log.append(batch());
        }
        log.awaitDurable(r.lastOffset() + 1).join();
        return r.baseOffset();
    }

    /** Eight appenders at once: with flush.messages=1 they share fsyncs (group commit). */
    @Benchmark
    @Threads(8)
    public long appendAndAwaitGroupCommit() throws IOException {
        return appendAndAwait();
    }

    /** Read of about 1 MiB from an offset spread over what setup wrote (index lookup + one positional read). */
    @Benchmark
    public int readByOffset() throws IOException {
        long offset = readCursor.getAndAdd(997) % endAtSetup;
        return log.read(offset, 1 << 20, true, endAtSetup).sizeInBytes();
    }

    /** Index lookup alone: position of a batch, served from the sparse index plus a short header scan. */
    @Benchmark
    public int readSmallByOffset() throws IOException {
        long offset = readCursor.getAndAdd(997) % endAtSetup;
        return log.read(offset, 1, true, endAtSetup).sizeInBytes();
    }
}
