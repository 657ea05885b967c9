package dev.kaas.bench;

import dev.kaas.broker.metrics.BrokerMetrics;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.protocol.ApiKeys;
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
 * What the broker's metrics cost one Produce request, the issue-14 question the side-by-side
 * runs are too noisy to answer to 2 %: the time parts the pipeline takes (six clock reads), the
 * request's histograms and count ({@code requestDone}), and per partition the topic meters
 * ({@code produceRequest}, {@code appended}) and one group commit's histograms (as if every
 * partition's append had its own fsync: an upper bound). Multiplied by the Produce requests and
 * partition appends a workload makes per GB (the broker's own counters, see performance.md), this
 * bounds the metrics' share of the broker's CPU per GB; the same for a consumer's Fetch. Run with {@code ./kaas bench --jmh
 * MetricsBench}, and with {@code -t 2} for both event loops recording at once.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class MetricsBench {
    /** Partitions one Produce request carries. */
    @Param({"1", "12"})
    public int partitions;

    private BrokerMetrics metrics;
    private String[] topics;

    @Setup(Level.Trial)
    public void open() {
        metrics = new BrokerMetrics(BrokerMetrics.Source.NONE, true, 10_000);
        topics = new String[partitions];
        for (int i = 0; i < partitions; i++) {
            // Distinct names: each partition's meters are a map lookup of their own, as with 12 topics (the worse case).
            topics[i] = "bench-" + i;
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        metrics.close();
    }

    /** Per thread, as each event loop keeps its own: the request's time parts. */
    @State(Scope.Thread)
    public static class Request {
        final long[] parts = new long[BrokerMetrics.PARTS];
        long n;

        /**
         * The pipeline's clock reads (arrival, handler start and end, completion, dequeue, sent)
         * into {@link #parts}, spread over the buckets as a real run's (microseconds to
         * milliseconds); returns the spread.
         */
        long time() {
            long received = System.nanoTime();
            long handlerStart = System.nanoTime();
            long handlerEnd = System.nanoTime();
            long completed = System.nanoTime();
            long dequeued = System.nanoTime();
            long sent = System.nanoTime();
            long spread = (n++ & 1023) * 3_000;
            parts[BrokerMetrics.QUEUE] = handlerStart - received + spread;
            parts[BrokerMetrics.LOCAL] = handlerEnd - handlerStart + spread;
            parts[BrokerMetrics.REMOTE] = completed - handlerEnd + spread;
            parts[BrokerMetrics.RESPONSE_QUEUE] = dequeued - completed;
            parts[BrokerMetrics.SEND] = sent - dequeued;
            parts[BrokerMetrics.TOTAL] = sent - received + 3 * spread;
            return spread;
        }
    }

    @Benchmark
    public long produceRequest(Request r) {
        long spread = r.time();
        for (String topic : topics) {
            metrics.produceRequest(topic);
            metrics.appended(topic, 65_536, 64);
            metrics.groupCommit(spread * 100, spread / 10, 2);
        }
        metrics.requestDone(ApiKeys.PRODUCE, (short) 9, false, r.parts, 0, 65_536 * partitions + 100, 0, 0);
        return spread;
    }

    /** A consumer's Fetch: counted as Fetch and as FetchConsumer, and per partition its meters and bytes out. */
    @Benchmark
    public long fetchRequest(Request r) {
        long spread = r.time();
        for (String topic : topics) {
            metrics.fetchRequest(topic);
            metrics.bytesOut(topic, 1_048_576);
        }
        metrics.requestDone(ApiKeys.FETCH, (short) 15, false, r.parts, 0, 100 + 30 * partitions, 0, 0);
        return spread;
    }
}
