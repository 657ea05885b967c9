package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.storage.FileSlice;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FramesTest {
    @TempDir
    Path tmp;

    static FetchResponseData fetch(Object records0, Object records1) {
        FetchResponseData d = new FetchResponseData();
        var t = new FetchResponseData.FetchableTopicResponse().setTopic("t");
        t.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(0)
                .setRecords((org.apache.kafka.common.record.BaseRecords) records0));
        t.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(1)
                .setRecords((org.apache.kafka.common.record.BaseRecords) records1));
        d.responses().add(t);
        return d;
    }

    static byte[] concat(List<Object> parts) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object p : parts) {
            if (p instanceof ByteBuffer b) {
                byte[] x = new byte[b.remaining()];
                b.duplicate().get(x);
                out.write(x);
            } else {
                FileSlice s = (FileSlice) p;
                ByteBuffer b = ByteBuffer.allocate(s.size());
                s.channel().read(b, s.position());
                out.write(b.array());
            }
        }
        return out.toByteArray();
    }

    @Test
    void partsConcatenateToTheSameBytesAsTheHeapEncodingAtEveryFetchVersion() throws Exception {
        MemoryRecords a = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes()));
        MemoryRecords b = MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("c".getBytes()));
        Path file = tmp.resolve("segment");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {9, 9, 9}));
            ch.write(b.buffer().duplicate(), 3);
            FileSlice slice = new FileSlice(ch, 3, b.sizeInBytes());
            for (short v = ApiKeys.FETCH.oldestVersion(); v <= ApiKeys.FETCH.latestVersion(false); v++) {
                byte[] expected = concat(List.of(HeapFrames.reference(ApiKeys.FETCH, v, 7, fetch(a, b))));
                List<Object> parts = Frames.encodeResponseParts(ApiKeys.FETCH, v, 7, fetch(a, slice));
                assertThat(concat(parts)).as("fetch v%d", v).isEqualTo(expected);
                assertThat(parts).as("records are parts of their own").hasSizeGreaterThanOrEqualTo(3).contains(slice);
            }
        }
    }
}
