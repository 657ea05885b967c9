package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

/** The cleaner's in-place record walk: what kafka-clients decodes, and a refusal for every malformed length. */
class RecordScanTest {
    static final int RECORDS = 61;

    static ByteBuffer batch() {
        MemoryRecords records = MemoryRecords.withRecords(100L, CompressionType.NONE, 0,
                new SimpleRecord(1_700_000_000_000L, "k1".getBytes(StandardCharsets.UTF_8), "v1".getBytes(StandardCharsets.UTF_8)),
                new SimpleRecord(1_699_999_000_000L, null, "no key".getBytes(StandardCharsets.UTF_8)),
                new SimpleRecord(1_700_000_500_000L, "k3".getBytes(StandardCharsets.UTF_8), null,
                        new Header[] {new RecordHeader("h", new byte[] {7})}));
        return records.buffer();
    }

    static List<String> walk(ByteBuffer buffer) {
        MutableRecordBatch batch = MemoryRecords.readableRecords(buffer).batches().iterator().next();
        RecordScan scan = new RecordScan();
        scan.open(buffer, 0, batch);
        List<String> out = new ArrayList<>();
        while (scan.next()) {
            String key = scan.keyLength < 0 ? null : new String(scan.bytes(), scan.keyStart, scan.keyLength, StandardCharsets.UTF_8);
            out.add(scan.offset + "/" + scan.timestamp + "/" + key + "/" + scan.hasValue);
        }
        return out;
    }

    @Test
    void seesWhatKafkaClientsDecodes() {
        ByteBuffer buffer = batch();
        List<String> expected = new ArrayList<>();
        for (Record r : MemoryRecords.readableRecords(buffer.duplicate()).batches().iterator().next()) {
            String key = r.hasKey() ? StandardCharsets.UTF_8.decode(r.key()).toString() : null;
            expected.add(r.offset() + "/" + r.timestamp() + "/" + key + "/" + r.hasValue());
        }
        assertThat(walk(buffer)).hasSize(3).isEqualTo(expected);
    }

    @Test
    void aRecordCountBeyondTheBatchsBytesIsRefused() {
        ByteBuffer buffer = batch();
        buffer.putInt(RECORDS - 4, Integer.MAX_VALUE);
        assertThatThrownBy(() -> walk(buffer)).isInstanceOf(InvalidRecordException.class);
        buffer.putInt(RECORDS - 4, -1);
        assertThatThrownBy(() -> walk(buffer)).isInstanceOf(InvalidRecordException.class);
    }

    @Test
    void aCountTheRecordsDoNotFillIsRefused() {
        ByteBuffer more = batch();
        more.putInt(RECORDS - 4, 4);
        assertThatThrownBy(() -> walk(more)).isInstanceOf(InvalidRecordException.class);
        ByteBuffer fewer = batch();
        fewer.putInt(RECORDS - 4, 2);
        assertThatThrownBy(() -> walk(fewer)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("after the last record");
    }

    @Test
    void lengthsPastTheirRecordOrBatchAreRefused() {
        // The first record: length varint, attributes, timestamp delta (1 byte: 0), offset delta (0), key length (2 → 4).
        ByteBuffer recordTooLong = batch();
        recordTooLong.put(RECORDS, (byte) 0x7e); // 63 bytes: past the batch
        assertThatThrownBy(() -> walk(recordTooLong)).isInstanceOf(InvalidRecordException.class);
        ByteBuffer keyTooLong = batch();
        keyTooLong.put(RECORDS + 4, (byte) 0x40); // a 32-byte key in a 9-byte record
        assertThatThrownBy(() -> walk(keyTooLong)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("key size");
        // Six bytes with the continuation bit, all inside the first record: past Kafka's 5-byte varint.
        ByteBuffer endlessVarint = batch();
        for (int i = 0; i < 6; i++) {
            endlessVarint.put(RECORDS + 4 + i, (byte) 0xff);
        }
        assertThatThrownBy(() -> walk(endlessVarint)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("Invalid varint");
    }

    @Test
    void headersMustFillTheirRecordExactly() {
        // The third record: 1 header, key "h", value {7}; its header count is the record's fourth byte from the end.
        ByteBuffer buffer = batch();
        int end = buffer.limit();
        ByteBuffer countTooLarge = batch();
        countTooLarge.put(end - 5, (byte) 0x10);
        assertThatThrownBy(() -> walk(countTooLarge)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("headers");
        ByteBuffer negativeKey = batch();
        negativeKey.put(end - 4, (byte) 0x01);
        assertThatThrownBy(() -> walk(negativeKey)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("header key size");
        ByteBuffer bytesLeft = batch();
        bytesLeft.put(end - 5, (byte) 0x00);
        assertThatThrownBy(() -> walk(bytesLeft)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("left after the headers");
        assertThat(walk(buffer)).hasSize(3);
    }
}
