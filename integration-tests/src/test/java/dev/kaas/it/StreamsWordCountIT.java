package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A Kafka Streams 3.7.2 at-least-once word count (repartition + changelog topics) runs, restarts and resumes. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class StreamsWordCountIT {
    @TempDir
    Path tmp;

    static final String IN = "lines";
    static final String OUT = "word-counts";

    KafkaStreams start(KaasCluster cluster) {
        StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(IN)
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
                .groupBy((k, word) -> word)
                .count()
                .toStream()
                .to(OUT, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "wordcount");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.STATE_DIR_CONFIG, tmp.resolve("state").toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10_000);
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.start();
        return streams;
    }

    static void produce(KaasCluster cluster, String... lines) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            for (String l : lines) {
                p.send(new ProducerRecord<>(IN, l)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Latest count per word on the output topic, waiting until {@code expected} is reached. */
    static Map<String, Long> awaitCounts(KaasCluster cluster, Map<String, Long> expected) {
        Map<String, Long> latest = new HashMap<>();
        Properties p = cluster.clientProps();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> tps = c.partitionsFor(OUT, Duration.ofSeconds(30)).stream()
                    .map(i -> new TopicPartition(OUT, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(300)).forEach(r -> latest.put(r.key(), r.value()));
                if (latest.entrySet().containsAll(expected.entrySet())) {
                    break;
                }
            }
        }
        return latest;
    }

    @Test
    void wordCountRunsRestartsAndResumesFromCommittedOffsets() throws Exception {
        try (KaasCluster cluster = KaasCluster.startForClients(tmp.resolve("data"))) {
            try (Admin admin = Admin.create(cluster.clientProps())) {
                admin.createTopics(List.of(new NewTopic(IN, 2, (short) 1), new NewTopic(OUT, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            KafkaStreams first = start(cluster);
            produce(cluster, "the quick brown fox", "the lazy dog", "The end");
            Map<String, Long> counts = awaitCounts(cluster, Map.of("the", 3L, "fox", 1L, "end", 1L));
            assertThat(counts).containsEntry("the", 3L).containsEntry("quick", 1L).containsEntry("dog", 1L);
            first.close(Duration.ofSeconds(30));

            try (Admin admin = Admin.create(cluster.clientProps())) {
                var names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                assertThat(names).anyMatch(n -> n.startsWith("wordcount-") && n.endsWith("-repartition"))
                        .anyMatch(n -> n.startsWith("wordcount-") && n.endsWith("-changelog"));
                var offsets = admin.listConsumerGroupOffsets("wordcount").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                assertThat(offsets.keySet()).anyMatch(tp -> tp.topic().equals(IN));
            }

            produce(cluster, "the fox returns");
            KafkaStreams second = start(cluster);
            try {
                Map<String, Long> after = awaitCounts(cluster, Map.of("the", 4L, "fox", 2L, "returns", 1L));
                // Resumed, not reprocessed: a restart from scratch would have counted "quick" and "dog" twice.
                assertThat(after).containsEntry("the", 4L).containsEntry("fox", 2L).containsEntry("returns", 1L)
                        .containsEntry("quick", 1L).containsEntry("dog", 1L);
            } finally {
                second.close(Duration.ofSeconds(30));
            }
        }
    }
}
