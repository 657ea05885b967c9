package dev.kaas.bench;

import dev.kaas.broker.storage.LogCleaner;
import dev.kaas.broker.storage.LogConfig;
import dev.kaas.broker.storage.PartitionLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * One compaction pass, in process: what the cleaner's CPU costs per megabyte of dirty log, the
 * part of issue 12's produce-impact target that the side-by-side windows are too noisy to
 * attribute. The log is the (compact) workload's: 1 KiB values, one key in ten live (every key
 * written ten times), 64-record batches as the bench's producer sends them, 16 MiB segments; each
 * iteration cleans a freshly written copy. Run with {@code ./kaas bench --jmh CleanerBench}; the
 * score is seconds per pass over {@code records} records (about {@code records} KiB).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 8)
@Fork(1)
public class CleanerBench {
    @Param({"200000"})
    public int records;

    @Param({"NONE"})
    public String compression;

    private Path dir;
    private ExecutorService flusher;
    private ScheduledThreadPoolExecutor reaper;
    private LogCleaner cleaner;
    private PartitionLog log;

    @Setup(Level.Trial)
    public void start() {
        flusher = Executors.newFixedThreadPool(2);
        reaper = new ScheduledThreadPoolExecutor(1);
        // Apache's defaults for one cleaner thread: 128 MiB map, 512 KiB buffers, no throttle.
        cleaner = new LogCleaner(new LogCleaner.Settings(128 << 20, 512 << 10, Double.MAX_VALUE), System::currentTimeMillis);
    }

    @Setup(Level.Iteration)
    public void write() throws IOException {
        dir = Files.createTempDirectory("kaas-cleaner-jmh");
        log = PartitionLog.open(dir.resolve("p"), new TopicPartition("bench", 0), "CCCCCCCCCCCCCCCCCCCCCC", 0, 1,
                LogConfig.from(Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(16 << 20),
                        "min.cleanable.dirty.ratio", "0.01", "file.delete.delay.ms", "3600000")),
                System::currentTimeMillis, flusher);
        int keys = Math.max(1, records / 10);
        byte[] value = new byte[1024];
        SimpleRecord[] batch = new SimpleRecord[64];
        CompressionType type = CompressionType.forName(compression.toLowerCase());
        for (int written = 0; written < records; ) {
            int n = Math.min(batch.length, records - written);
            SimpleRecord[] b = n == batch.length ? batch : new SimpleRecord[n];
            for (int i = 0; i < n; i++, written++) {
                // Spread so each key's ten versions lie far apart, as a producer cycling its keys writes them.
                ByteBuffer key = ByteBuffer.wrap(("key-" + (written % keys)).getBytes());
                b[i] = new SimpleRecord(System.currentTimeMillis(), key, ByteBuffer.wrap(value));
            }
            log.append(MemoryRecords.withRecords(type, b));
        }
        log.awaitDurable(log.logEndOffset()).join();
    }

    @Benchmark
    public Object pass() throws Exception {
        return cleaner.clean(log, Runnable::run, reaper).orElseThrow(() -> new IllegalStateException("no pass ran"));
    }

    @TearDown(Level.Iteration)
    public void remove() throws IOException {
        log.abandon();
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        reaper.shutdownNow();
        flusher.shutdownNow();
    }
}
