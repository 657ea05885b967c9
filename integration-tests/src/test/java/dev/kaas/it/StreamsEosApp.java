package dev.kaas.it;

import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The word count {@link StreamsEosIT} runs in a child JVM (so that it can be SIGKILLed): lines of
 * space-separated words in, one {@code word -> count} record per word occurrence out (no cache).
 * Arguments: bootstrap, application id, state dir, processing guarantee, input topic, output topic, threads.
 * Exits with 2 if Streams goes to ERROR, so the test sees a dead child instead of waiting.
 */
public final class StreamsEosApp {
    private StreamsEosApp() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String appId = args[1];
        String stateDir = args[2];
        String guarantee = args[3];
        String in = args[4];
        String out = args[5];
        int threads = Integer.parseInt(args[6]);

        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.split(" ")))
                .groupBy((k, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        // Transactions stay open for half a second while their records are sent as they come (Streams' EOS
        // default is 100 ms of linger, 100 ms between commits): a SIGKILL lands in an open transaction on the
        // output, repartition and changelog topics, not between two.
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 500);
        p.put(StreamsConfig.producerPrefix("linger.ms"), 5);
        // Every update is forwarded: the counts of a word on the output topic are 1, 2, 3, ...
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // A SIGKILLed member leaves the group after its session, not after Streams' 45 s default.
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6_000);
        p.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1_500);

        KafkaStreams streams = new KafkaStreams(b.build(), p);
        CountDownLatch forever = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STREAMS-STATE " + before + " -> " + now);
            if (now == KafkaStreams.State.ERROR) {
                System.out.println("STREAMS-ERROR: exiting");
                System.out.flush();
                Runtime.getRuntime().halt(2);
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("STREAMS-UNCAUGHT " + e);
            e.printStackTrace(System.out);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        // SIGTERM closes cleanly; SIGKILL (what the test is about) runs nothing.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("STREAMS-CLOSE");
            streams.close(Duration.ofSeconds(20));
        }));
        streams.start();
        System.out.println("STREAMS-STARTED " + appId + " " + guarantee + " state.dir=" + stateDir);
        forever.await();
    }
}
