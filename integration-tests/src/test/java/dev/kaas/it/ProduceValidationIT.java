package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Crc32C;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Produce writes exactly what it validated, through a real broker: bytes after the last batch
 * and batches whose records are not well formed never reach the log, and after a broker restart
 * every acknowledged record and nothing else is served, to the Java consumer.
 */
class ProduceValidationIT {
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("trail", 1, (short) 1), new NewTopic("poison", 1, (short) 1)))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    private static Errors produceError(String topic, ByteBuffer payload) throws Exception {
        ProduceRequestData req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0)
                        .setRecords(MemoryRecords.readableRecords(payload)))));
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            var resp = (ProduceResponse) c.send(ApiKeys.PRODUCE, (short) 9, req);
            return Errors.forCode(resp.data().responses().find(topic).partitionResponses().get(0).errorCode());
        }
    }

    private static ByteBuffer batch(String value) {
        MemoryRecords r = MemoryRecords.withRecords(CompressionType.NONE,
                new SimpleRecord(System.currentTimeMillis(), value.getBytes(StandardCharsets.UTF_8)));
        ByteBuffer b = ByteBuffer.allocate(r.sizeInBytes());
        b.put(r.buffer().duplicate()).flip();
        return b;
    }

    /** A batch edited in place, its CRC made valid again: only record-level validation can refuse it. */
    private static ByteBuffer edited(ByteBuffer b, Consumer<ByteBuffer> edit) {
        edit.accept(b);
        b.putInt(17, (int) Crc32C.compute(b, 21, b.limit() - 21));
        return b;
    }

    private static void sendWithJavaProducer(String topic, String... values) throws Exception {
        Properties p = cluster.clientProps();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(topic, 0, null, v)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static List<String> consumeAll(String topic, int expected) {
        Properties p = cluster.clientProps();
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                    out.add(r.offset() + ":" + r.value());
                }
            }
            // One more poll: anything past the expected records would show here.
            c.poll(Duration.ofMillis(500)).forEach(r -> out.add(r.offset() + ":" + r.value()));
        }
        return out;
    }

    private static long latest(String topic) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
        }
    }

    @Test
    void bytesAfterTheLastBatchAreNotWrittenAndEveryAcknowledgedRecordSurvivesARestart() throws Exception {
        ByteBuffer one = batch("a");
        // A trailer that looks like the start of another batch header announcing 5,000 bytes.
        ByteBuffer payload = ByteBuffer.allocate(one.remaining() + 70);
        payload.put(one).putLong(0).putInt(5000).putInt(0).put((byte) 2).position(payload.capacity()).flip();
        assertThat(produceError("trail", payload)).isEqualTo(Errors.NONE);
        sendWithJavaProducer("trail", "b", "c");

        cluster.stopBroker();
        cluster.startBroker();

        assertThat(consumeAll("trail", 3)).containsExactly("0:a", "1:b", "2:c");
        assertThat(latest("trail")).isEqualTo(3);
        sendWithJavaProducer("trail", "d");
        assertThat(consumeAll("trail", 4)).containsExactly("0:a", "1:b", "2:c", "3:d");
    }

    @Test
    void poisonBatchesAreRefusedAndConsumersNeverSeeThem() throws Exception {
        sendWithJavaProducer("poison", "ok");
        // One real record claiming 0x7fffffff records (count and last offset delta agree with each other).
        assertThat(produceError("poison", edited(batch("x"), b -> b.putInt(57, Integer.MAX_VALUE).putInt(23, Integer.MAX_VALUE - 1))))
                .isEqualTo(Errors.INVALID_RECORD);
        // A record whose declared length runs past the batch.
        assertThat(produceError("poison", edited(batch("x"), b -> b.put(61, (byte) 0x7e)))).isEqualTo(Errors.INVALID_RECORD);
        // Compression codec id 5: no such codec.
        assertThat(produceError("poison", edited(batch("x"), b -> b.putShort(21, (short) ((b.getShort(21) & ~0x7) | 5)))))
                .isEqualTo(Errors.INVALID_RECORD);
        // An idempotent batch with sequence -1.
        MemoryRecords idem = MemoryRecords.withIdempotentRecords(CompressionType.NONE, 1000L, (short) 0, 0,
                new SimpleRecord(System.currentTimeMillis(), "x".getBytes(StandardCharsets.UTF_8)));
        ByteBuffer noSeq = ByteBuffer.allocate(idem.sizeInBytes());
        noSeq.put(idem.buffer().duplicate()).flip();
        assertThat(produceError("poison", edited(noSeq, b -> b.putInt(53, -1)))).isEqualTo(Errors.INVALID_RECORD);

        assertThat(latest("poison")).isEqualTo(1);
        sendWithJavaProducer("poison", "after");
        assertThat(consumeAll("poison", 2)).containsExactly("0:ok", "1:after");
    }
}
