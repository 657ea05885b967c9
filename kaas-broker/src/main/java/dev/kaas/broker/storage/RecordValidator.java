package dev.kaas.broker.storage;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;

/**
 * Proves that the records inside a v2 batch are well formed before its bytes are written, as
 * Apache's {@code LogValidator} does on the produce path, without materialising a record: each
 * record is walked field by field (varints, lengths, headers) and its key, value and header bytes
 * are skipped. Compressed batches are walked through a streaming decompressor and refused once
 * they inflate past {@link #MAX_INFLATION}× {@code max.message.bytes}, so a decompression bomb
 * costs a bounded amount of work and no memory.
 *
 * <p>Checked per record (format: {@code length:varint attributes:int8 timestampDelta:varlong
 * offsetDelta:varint keyLength:varint key valueLength:varint value headerCount:varint
 * (headerKeyLength:varint headerKey headerValueLength:varint headerValue)*}): the declared length
 * matches the fields and stays inside the batch, offset deltas run 0..count-1 (so the count the
 * header declares is the count that is there), lengths are -1 or more (header keys 0 or more), a
 * header count fits the bytes left, the timestamp is within {@code message.timestamp.*.max.ms}
 * (CREATE_TIME), and a compacted topic's records have keys. Nothing may follow the last record.
 * Every count and length is bounded by the bytes that are left before anything is read for it.
 *
 * <p>Threading: stateless; runs on the partition's writer, never on an event loop.
 */
final class RecordValidator {
    /** How far a compressed batch may inflate, relative to {@code max.message.bytes}. See durability.md. */
    static final int MAX_INFLATION = 256;
    private static final int MIN_RECORD_BYTES = 6;

    /** What the walk learnt: the largest record timestamp, to put in the batch header as Apache does. */
    record Result(long maxTimestamp) {
    }

    private RecordValidator() {
    }

    static Result validate(DefaultRecordBatch batch, ByteBuffer batchBytes, LogConfig config, long now) {
        CompressionType codec;
        try {
            codec = batch.compressionType();
        } catch (IllegalArgumentException e) {
            throw new InvalidRecordException("Record batch has an unknown compression type: " + e.getMessage());
        }
        int count = batch.countOrNull();
        ByteBuffer records = batchBytes.duplicate();
        records.position(records.position() + BatchHeader.SIZE);
        Source source;
        if (codec == CompressionType.NONE) {
            source = new BufferSource(records.slice());
        } else {
            long budget = (long) MAX_INFLATION * Math.max(config.maxMessageBytes(), 1 << 20);
            source = new StreamSource(codec.wrapForInput(records.slice(), RecordBatch.MAGIC_VALUE_V2, BufferSupplier.NO_CACHING), budget);
        }
        try (Source in = source) {
            return walk(in, batch, count, config, now);
        } catch (InvalidRecordException | InvalidTimestampException e) {
            throw e;
        } catch (EOFException | RuntimeException e) {
            throw new InvalidRecordException("Found invalid record structure in a batch of " + count + " records: " + e);
        } catch (IOException e) {
            throw new InvalidRecordException("Could not decompress a " + codec.name + " record batch: " + e.getMessage());
        }
    }

    private static Result walk(Source in, DefaultRecordBatch batch, int count, LogConfig config, long now) throws IOException {
        boolean createTime = !config.logAppendTime();
        if (createTime && batch.timestampType() == TimestampType.LOG_APPEND_TIME) {
            throw new InvalidTimestampException("Invalid timestamp type in a batch: producers may not set LogAppendTime");
        }
        long base = batch.baseTimestamp();
        long max = RecordBatch.NO_TIMESTAMP;
        for (int i = 0; i < count; i++) {
            int length = in.varint();
            if (length < MIN_RECORD_BYTES || length > in.remainingBound()) {
                throw new InvalidRecordException("Invalid record size " + length + " of record " + i);
            }
            long start = in.consumed();
            long end = start + length;
            in.skip(1); // attributes: unused in v2
            long timestamp = base + in.varlong();
            int offsetDelta = in.varint();
            if (offsetDelta != i) {
                throw new InvalidRecordException("Record " + i + " has offset delta " + offsetDelta + ", expected " + i);
            }
            int keyLength = in.varint();
            checkLength(keyLength, -1, end - in.consumed(), "key", i);
            if (keyLength < 0 && config.compacted()) {
                throw new InvalidRecordException("Compacted topic cannot accept message without key");
            }
            in.skip(Math.max(keyLength, 0));
            int valueLength = in.varint();
            checkLength(valueLength, -1, end - in.consumed(), "value", i);
            in.skip(Math.max(valueLength, 0));
            int headers = in.varint();
            // Each header takes at least two bytes (two one-byte varints).
            if (headers < 0 || headers > (end - in.consumed()) / 2) {
                throw new InvalidRecordException("Invalid number of headers " + headers + " in record " + i);
            }
            for (int h = 0; h < headers; h++) {
                int hk = in.varint();
                checkLength(hk, 0, end - in.consumed(), "header key", i);
                in.skip(hk);
                int hv = in.varint();
                checkLength(hv, -1, end - in.consumed(), "header value", i);
                in.skip(Math.max(hv, 0));
            }
            if (in.consumed() != end) {
                throw new InvalidRecordException("Invalid record size: expected to read " + length + " bytes in record " + i
                        + ", but read " + (in.consumed() - start));
            }
            if (createTime && timestamp != RecordBatch.NO_TIMESTAMP) {
                long diff = now - timestamp;
                if (diff > config.timestampBeforeMaxMs() || -diff > config.timestampAfterMaxMs()) {
                    throw new InvalidTimestampException("Timestamp " + timestamp + " of message is out of range. The timestamp should be within ["
                            + (now - config.timestampBeforeMaxMs()) + ", " + (now + config.timestampAfterMaxMs()) + "]");
                }
            }
            max = Math.max(max, timestamp);
        }
        if (!in.atEnd()) {
            throw new InvalidRecordException("Incorrect declared batch size, records still remaining after " + count + " records");
        }
        return new Result(max);
    }

    private static void checkLength(int length, int min, long left, String what, int record) {
        if (length < min || length > left) {
            throw new InvalidRecordException("Invalid " + what + " length " + length + " in record " + record);
        }
    }

    /** The bytes of a batch's records, plain or inflating; varints are read the same way from both. */
    private abstract static class Source implements AutoCloseable {
        abstract int readByte() throws IOException;

        abstract void skip(long n) throws IOException;

        abstract long consumed();

        /** An upper bound of the bytes left (exact for plain records, the inflation budget for compressed). */
        abstract long remainingBound();

        abstract boolean atEnd() throws IOException;

        @Override
        public abstract void close() throws IOException;

        /** Zig-zag varint, at most 5 bytes, high bits of the 5th dropped: exactly what the clients' {@code ByteUtils} accepts. */
        final int varint() throws IOException {
            int raw = 0;
            for (int i = 0; i < 5; i++) {
                int x = readByte();
                raw |= (x & 0x7f) << (7 * i);
                if ((x & 0x80) == 0) {
                    return (raw >>> 1) ^ -(raw & 1);
                }
            }
            throw new InvalidRecordException("varint longer than 5 bytes");
        }

        /** Zig-zag varlong, at most 10 bytes (Kafka's {@code ByteUtils} format). */
        final long varlong() throws IOException {
            long raw = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int x = readByte();
                raw |= (long) (x & 0x7f) << shift;
                if ((x & 0x80) == 0) {
                    return (raw >>> 1) ^ -(raw & 1);
                }
            }
            throw new InvalidRecordException("varint longer than 10 bytes");
        }
    }

    private static final class BufferSource extends Source {
        private final ByteBuffer b;

        BufferSource(ByteBuffer b) {
            this.b = b;
        }

        @Override
        int readByte() throws IOException {
            if (!b.hasRemaining()) {
                throw new EOFException("record runs past the batch");
            }
            return b.get() & 0xff;
        }

        @Override
        void skip(long n) throws IOException {
            if (n > b.remaining()) {
                throw new EOFException("record runs past the batch");
            }
            b.position(b.position() + (int) n);
        }

        @Override
        long consumed() {
            return b.position();
        }

        @Override
        long remainingBound() {
            return b.remaining();
        }

        @Override
        boolean atEnd() {
            return !b.hasRemaining();
        }

        @Override
        public void close() {
        }
    }

    private static final class StreamSource extends Source {
        private final InputStream in;
        private final long budget;
        private final byte[] scratch = new byte[8192];
        private long consumed;

        StreamSource(InputStream in, long budget) {
            this.in = in;
            this.budget = budget;
        }

        @Override
        int readByte() throws IOException {
            int x = in.read();
            if (x < 0) {
                throw new EOFException("compressed records end early");
            }
            count(1);
            return x;
        }

        private void count(long n) {
            consumed += n;
            if (consumed > budget) {
                throw new InvalidRecordException("Compressed record batch inflates past " + budget + " bytes");
            }
        }

        @Override
        void skip(long n) throws IOException {
            long left = n;
            while (left > 0) {
                int r = in.read(scratch, 0, (int) Math.min(scratch.length, left));
                if (r < 0) {
                    throw new EOFException("compressed records end early");
                }
                count(r);
                left -= r;
            }
        }

        @Override
        long consumed() {
            return consumed;
        }

        @Override
        long remainingBound() {
            return budget - consumed;
        }

        @Override
        boolean atEnd() throws IOException {
            return in.read() < 0;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
