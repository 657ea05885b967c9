package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Crc32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Produce writes exactly what it validated: the whole batches of the payload, each proven well
 * formed record by record (Apache's LogValidator), and nothing when anything is wrong. Every case
 * ends with a restart that must serve the acknowledged records and nothing else.
 */
class ProduceValidationTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final AtomicLong clock = new AtomicLong(NOW);
    private final ExecutorService flusher = Executors.newFixedThreadPool(1);
    private final List<PartitionLog> opened = new ArrayList<>();
    private int epoch;

    @AfterEach
    void tearDown() {
        opened.forEach(PartitionLog::abandon);
        flusher.shutdownNow();
    }

    private Path dir() {
        return tmp.resolve("orders-" + TOPIC_ID).resolve("0");
    }

    private PartitionLog open(Map<String, String> configs) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, TOPIC_ID, epoch++, 1, LogConfig.from(configs), clock::get, flusher);
        opened.add(log);
        return log;
    }

    /** Crash and take over: what the next leader serves. */
    private List<String> servedAfterRestart(PartitionLog log, Map<String, String> configs) throws IOException {
        log.abandon();
        PartitionLog next = open(configs);
        List<String> out = new ArrayList<>();
        for (RecordBatch b : next.read(0, 1 << 24, true, next.highWatermark()).batches()) {
            b.ensureValid();
            for (Record r : b) {
                out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.value()));
            }
        }
        return out;
    }

    private void appendDurably(PartitionLog log, MemoryRecords records) throws Exception {
        var r = log.append(records);
        log.awaitDurable(r.lastOffset() + 1).get(10, TimeUnit.SECONDS);
    }

    private static MemoryRecords batch(CompressionType codec, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(NOW, ("k" + i).getBytes(StandardCharsets.UTF_8), values[i].getBytes(StandardCharsets.UTF_8),
                    new RecordHeader[] {new RecordHeader("h", new byte[] {1})});
        }
        return MemoryRecords.withRecords(codec, records);
    }

    /** A copy of the batch with {@code edit} applied to its bytes and the CRC made valid again. */
    private static MemoryRecords edited(MemoryRecords records, java.util.function.Consumer<ByteBuffer> edit) {
        ByteBuffer b = ByteBuffer.allocate(records.sizeInBytes());
        b.put(records.buffer().duplicate()).flip();
        edit.accept(b);
        return MemoryRecords.readableRecords(reCrc(b));
    }

    private static ByteBuffer reCrc(ByteBuffer b) {
        long crc = Crc32C.compute(b, BatchHeader.ATTRIBUTES_OFFSET, b.limit() - BatchHeader.ATTRIBUTES_OFFSET);
        b.putInt(BatchHeader.CRC_OFFSET, (int) crc);
        return b;
    }

    private static MemoryRecords withTrailer(MemoryRecords records, byte[] trailer) {
        ByteBuffer b = ByteBuffer.allocate(records.sizeInBytes() + trailer.length);
        b.put(records.buffer().duplicate()).put(trailer).flip();
        return MemoryRecords.readableRecords(b);
    }

    private void assertRefusedAndNothingWritten(PartitionLog log, MemoryRecords bad, Class<? extends Throwable> error) throws Exception {
        long end = log.logEndOffset();
        long bytes = segmentBytes();
        assertThatThrownBy(() -> log.append(bad)).isInstanceOf(error);
        assertThat(log.logEndOffset()).isEqualTo(end);
        assertThat(segmentBytes()).isEqualTo(bytes);
    }

    private long segmentBytes() throws IOException {
        try (var files = Files.list(dir())) {
            return files.filter(p -> p.toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    @Test
    void bytesAfterTheLastWholeBatchAreNotWritten() throws Exception {
        PartitionLog log = open(Map.of());
        // Looks like the start of another batch header announcing 5,000 bytes: Apache reads whole batches only.
        byte[] longTrailer = new byte[70];
        ByteBuffer.wrap(longTrailer).putLong(0).putInt(5000).putInt(0).put((byte) 2);
        appendDurably(log, withTrailer(batch(CompressionType.NONE, "a"), longTrailer));
        // Shorter than the part of a header up to the magic byte (Apache's iterator stops there too).
        appendDurably(log, withTrailer(batch(CompressionType.NONE, "b"), new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 9, 9, 9, 9}));
        appendDurably(log, batch(CompressionType.NONE, "c"));

        assertThat(log.read(0, 1 << 20, true, log.highWatermark()).sizeInBytes()).isEqualTo(3 * batch(CompressionType.NONE, "a").sizeInBytes());
        assertThat(servedAfterRestart(log, Map.of())).containsExactly("0:a", "1:b", "2:c");
    }

    @Test
    void aTrailerThatCannotBeABatchIsRefusedAndNothingIsWritten() throws Exception {
        PartitionLog log = open(Map.of());
        appendDurably(log, batch(CompressionType.NONE, "a"));
        // A size field below the minimum batch overhead: as Apache, CORRUPT_MESSAGE for the whole payload.
        byte[] trailer = new byte[20];
        ByteBuffer.wrap(trailer).putLong(0).putInt(3);
        assertRefusedAndNothingWritten(log, withTrailer(batch(CompressionType.NONE, "x"), trailer), CorruptRecordException.class);
        assertThat(servedAfterRestart(log, Map.of())).containsExactly("0:a");
    }

    @Test
    void aCountThatDisagreesWithTheRecordsIsRefused() throws Exception {
        PartitionLog log = open(Map.of());
        appendDurably(log, batch(CompressionType.NONE, "a"));
        // One real record claiming 0x7fffffff: count and last offset delta agree with each other, not with the records.
        MemoryRecords huge = edited(batch(CompressionType.NONE, "x"), b -> b.putInt(57, Integer.MAX_VALUE).putInt(23, Integer.MAX_VALUE - 1));
        assertRefusedAndNothingWritten(log, huge, InvalidRecordException.class);
        MemoryRecords twoClaimed = edited(batch(CompressionType.NONE, "x"), b -> b.putInt(57, 2).putInt(23, 1));
        assertRefusedAndNothingWritten(log, twoClaimed, InvalidRecordException.class);
        MemoryRecords oneOfTwo = edited(batch(CompressionType.NONE, "x", "y"), b -> b.putInt(57, 1).putInt(23, 0));
        assertRefusedAndNothingWritten(log, oneOfTwo, InvalidRecordException.class);
        assertThat(servedAfterRestart(log, Map.of())).containsExactly("0:a");
    }

    @Test
    void garbageRecordsBehindAValidCrcAreRefused() throws Exception {
        PartitionLog log = open(Map.of());
        MemoryRecords good = batch(CompressionType.NONE, "a", "b");
        int recordsStart = 61;
        for (int at = recordsStart; at < good.sizeInBytes(); at++) {
            for (int value : new int[] {0x00, 0x7f, 0xff, 0x80}) {
                int pos = at;
                MemoryRecords bad = edited(good, b -> b.put(pos, (byte) value));
                boolean same = bad.buffer().get(pos) == good.buffer().get(pos);
                if (same) {
                    continue;
                }
                long end = log.logEndOffset();
                try {
                    log.append(bad);
                    // Some edits leave a well-formed batch (a changed key byte): then it is stored as is.
                    assertThat(log.logEndOffset()).isEqualTo(end + 2);
                } catch (InvalidRecordException | InvalidTimestampException e) {
                    assertThat(log.logEndOffset()).isEqualTo(end);
                }
            }
        }
        // Whatever was accepted decodes record by record with the Java client's own decoder.
        for (RecordBatch b : servedBatches(servedAfterRestartLog(log))) {
            b.ensureValid();
            int n = 0;
            for (Record r : b) {
                assertThat(r.offset()).isEqualTo(b.baseOffset() + n++);
            }
            assertThat(n).isEqualTo(b.countOrNull());
        }
    }

    private PartitionLog servedAfterRestartLog(PartitionLog log) throws IOException {
        log.abandon();
        return open(Map.of());
    }

    private static Iterable<? extends RecordBatch> servedBatches(PartitionLog log) throws IOException {
        return log.read(0, 1 << 24, true, log.highWatermark()).batches();
    }

    @Test
    void recordLevelFieldsAreChecked() throws Exception {
        PartitionLog log = open(Map.of());
        MemoryRecords good = batch(CompressionType.NONE, "a");
        // Record layout after the 61-byte header: length@61, attributes@62, tsDelta@63, offsetDelta@64, keyLen@65, key...
        assertRefusedAndNothingWritten(log, edited(good, b -> b.put(64, (byte) 2)), InvalidRecordException.class); // offset delta 1
        assertRefusedAndNothingWritten(log, edited(good, b -> b.put(65, (byte) 0x7f)), InvalidRecordException.class); // key length -64
        assertRefusedAndNothingWritten(log, edited(good, b -> b.put(65, (byte) 0x7e)), InvalidRecordException.class); // key length 63
        assertRefusedAndNothingWritten(log, edited(good, b -> b.put(61, (byte) 0x7e)), InvalidRecordException.class); // record length 63
        int headersAt = good.sizeInBytes() - 5; // headerCount varint precedes "h"(1+1 bytes) and value(1+1 bytes)
        assertRefusedAndNothingWritten(log, edited(good, b -> b.put(headersAt, (byte) 0x7e)), InvalidRecordException.class); // 63 headers
        assertThat(servedAfterRestart(log, Map.of())).isEmpty();
    }

    /** One record: no key, value "v", then the header count encoded as {@code headerCount} (a zero, padded or not). */
    private static MemoryRecords rawBatch(byte[] headerCount) {
        byte[] body = new byte[5 + 1 + headerCount.length];
        ByteBuffer r = ByteBuffer.wrap(body);
        r.put((byte) 0).put((byte) 0).put((byte) 0).put((byte) 1).put((byte) 2).put((byte) 'v').put(headerCount);
        ByteBuffer b = ByteBuffer.allocate(61 + 1 + body.length);
        b.putLong(0).putInt(b.capacity() - 12).putInt(0).put((byte) 2).putInt(0).putShort((short) 0).putInt(0)
                .putLong(NOW).putLong(NOW).putLong(-1).putShort((short) -1).putInt(-1).putInt(1);
        b.put((byte) (body.length << 1)).put(body).flip();
        return MemoryRecords.readableRecords(reCrc(b));
    }

    @Test
    void varintsAreReadExactlyAsTheClientsReadThem() throws Exception {
        PartitionLog log = open(Map.of());
        // Five bytes, the last without a continuation bit: kafka-clients' ByteUtils accepts it, so do we.
        appendDurably(log, rawBatch(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0}));
        // Six bytes: the clients' decoder throws on the fifth continuation bit; a consumer could never read past it.
        assertRefusedAndNothingWritten(log, rawBatch(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0}),
                InvalidRecordException.class);
        for (RecordBatch b : log.read(0, 1 << 20, true, log.highWatermark()).batches()) {
            for (Record r : b) {
                assertThat(r.headers()).isEmpty();
            }
        }
    }

    @Test
    void everyRecordTimestampIsChecked() throws Exception {
        PartitionLog log = open(Map.of("message.timestamp.before.max.ms", "3600000"));
        SimpleRecord fresh = new SimpleRecord(NOW, "a".getBytes(StandardCharsets.UTF_8));
        SimpleRecord stale = new SimpleRecord(NOW - 7_200_000, "b".getBytes(StandardCharsets.UTF_8));
        // Base timestamp and max timestamp are fine; the second record's is not.
        MemoryRecords mixed = MemoryRecords.withRecords(CompressionType.NONE, fresh, stale);
        assertRefusedAndNothingWritten(log, mixed, InvalidTimestampException.class);
    }

    @Test
    void theHeaderMaxTimestampIsTheRecords() throws Exception {
        PartitionLog log = open(Map.of());
        MemoryRecords lying = edited(batch(CompressionType.NONE, "a"), b -> b.putLong(35, NOW + 1_000_000));
        appendDurably(log, lying);
        RecordBatch stored = log.read(0, 1 << 20, true, 1).batches().iterator().next();
        stored.ensureValid();
        assertThat(stored.maxTimestamp()).isEqualTo(NOW);
    }

    @Test
    void compactedTopicsRefuseRecordsWithoutKeys() throws Exception {
        PartitionLog log = open(Map.of("cleanup.policy", "compact"));
        MemoryRecords keyless = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(NOW, null, "v".getBytes(StandardCharsets.UTF_8)));
        assertRefusedAndNothingWritten(log, keyless, InvalidRecordException.class);
        appendDurably(log, batch(CompressionType.NONE, "keyed"));
    }

    @Test
    void idempotentBatchesNeedASequenceAndMayNotInterleaveWithTheProducersTransaction() throws Exception {
        PartitionLog log = open(Map.of());
        MemoryRecords noSeq = edited(MemoryRecords.withIdempotentRecords(CompressionType.NONE, 5L, (short) 0, 0,
                new SimpleRecord(NOW, "x".getBytes(StandardCharsets.UTF_8))), b -> b.putInt(53, RecordBatch.NO_SEQUENCE));
        assertRefusedAndNothingWritten(log, noSeq, InvalidRecordException.class);
        appendDurably(log, MemoryRecords.withTransactionalRecords(CompressionType.NONE, 5L, (short) 0, 0,
                new SimpleRecord(NOW, "x".getBytes(StandardCharsets.UTF_8))));
        MemoryRecords plain = MemoryRecords.withIdempotentRecords(CompressionType.NONE, 5L, (short) 0, 1,
                new SimpleRecord(NOW, "y".getBytes(StandardCharsets.UTF_8)));
        assertRefusedAndNothingWritten(log, plain, InvalidTxnStateException.class);
    }

    @Test
    void everyCodecRoundTripsAndUnknownCodecIdsAreRefused() throws Exception {
        PartitionLog log = open(Map.of());
        List<String> expected = new ArrayList<>();
        long offset = 0;
        for (CompressionType codec : CompressionType.values()) {
            appendDurably(log, batch(codec, codec.name + "-1", codec.name + "-2"));
            expected.add(offset++ + ":" + codec.name + "-1");
            expected.add(offset++ + ":" + codec.name + "-2");
        }
        for (int id = 5; id <= 7; id++) {
            int codecId = id;
            MemoryRecords bad = edited(batch(CompressionType.NONE, "x"), b -> b.putShort(21, (short) ((b.getShort(21) & ~0x7) | codecId)));
            assertRefusedAndNothingWritten(log, bad, InvalidRecordException.class);
        }
        assertThat(servedAfterRestart(log, Map.of())).containsExactlyElementsOf(expected);
    }

    @Test
    void undecodableCompressedRecordsAreRefused() throws Exception {
        PartitionLog log = open(Map.of());
        for (CompressionType codec : List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD)) {
            MemoryRecords good = batch(codec, "a", "b", "c");
            // Scramble the compressed payload's middle.
            MemoryRecords bad = edited(good, b -> {
                for (int i = 61 + (b.limit() - 61) / 3; i < b.limit() - 2; i += 3) {
                    b.put(i, (byte) (b.get(i) ^ 0x5a));
                }
            });
            assertRefusedAndNothingWritten(log, bad, InvalidRecordException.class);
            // Records cut short: the stream ends before the declared count.
            MemoryRecords fewer = edited(good, b -> b.putInt(57, 4).putInt(23, 3));
            assertRefusedAndNothingWritten(log, fewer, InvalidRecordException.class);
        }
        assertThat(servedAfterRestart(log, Map.of())).isEmpty();
    }

    @Test
    void aDecompressionBombIsRefusedWithoutInflatingIt() throws Exception {
        PartitionLog log = open(Map.of("max.message.bytes", "1048588"));
        // Each record inflates to 1 MiB of zeros; 300 of them exceed 256 x max.message.bytes.
        byte[] zeros = new byte[1 << 20];
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(2 << 20), CompressionType.ZSTD, TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < 300; i++) {
            builder.append(NOW, null, zeros);
        }
        MemoryRecords bomb = builder.build();
        assertThat(bomb.sizeInBytes()).isLessThan(1 << 20);
        long start = System.nanoTime();
        assertRefusedAndNothingWritten(log, bomb, InvalidRecordException.class);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(20);
    }

    @Test
    void aLargeButLegitimateCompressedBatchIsAccepted() throws Exception {
        PartitionLog log = open(Map.of());
        byte[] value = new byte[64 * 1024];
        Arrays.fill(value, (byte) 'x');
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 20), CompressionType.LZ4, TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < 100; i++) {
            builder.append(NOW, null, value);
        }
        appendDurably(log, builder.build());
        assertThat(log.logEndOffset()).isEqualTo(100);
    }
}
