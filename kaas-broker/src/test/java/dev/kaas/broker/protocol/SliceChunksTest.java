package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.storage.FileSlice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.stream.ChunkedWriteHandler;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment slice sent through TLS in chunks: whole and in order with the buffers around it
 * behind Netty's ChunkedWriteHandler, every read on the reader (none on the loop), never more
 * than one chunk read ahead of what the channel took, and nothing left allocated however it ends.
 */
class SliceChunksTest {
    @TempDir
    Path dir;
    byte[] bytes;
    FileChannel file;
    /** The reader's queue: tasks run only when the test runs them. */
    final ArrayDeque<Runnable> reads = new ArrayDeque<>();
    final Tracking alloc = new Tracking();

    @BeforeEach
    void segment() throws IOException {
        bytes = new byte[300_000];
        new Random(3).nextBytes(bytes);
        Path segment = dir.resolve("00000000000000000000.log");
        Files.write(segment, bytes);
        file = FileChannel.open(segment, StandardOpenOption.READ);
    }

    @AfterEach
    void closeFile() throws IOException {
        file.close();
    }

    @Test
    void aSliceGoesOutWholeAndInOrderWithTheBuffersAroundIt() {
        ChunkedWriteHandler handler = new ChunkedWriteHandler();
        EmbeddedChannel channel = new EmbeddedChannel(handler);
        FileSlice slice = new FileSlice(file, 1_000, 200_000);
        channel.write(Unpooled.copiedBuffer("head", StandardCharsets.US_ASCII));
        ChannelFuture sent = channel.write(new SliceChunks(slice, reads::add, channel.eventLoop(), handler::resumeTransfer));
        channel.write(Unpooled.copiedBuffer("tail", StandardCharsets.US_ASCII));
        channel.flush();

        int readsRun = 0;
        while (!reads.isEmpty() && readsRun < 100) {
            reads.poll().run();
            readsRun++;
            channel.runPendingTasks();
        }

        assertThat(readsRun).as("one read per chunk, each on the reader").isEqualTo((200_000 + SliceChunks.CHUNK - 1) / SliceChunks.CHUNK);
        assertThat(sent.isSuccess()).isTrue();
        ByteBuf out = Unpooled.buffer();
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            out.writeBytes(b);
            b.release();
        }
        byte[] expected = new byte[4 + 200_000 + 4];
        System.arraycopy("head".getBytes(StandardCharsets.US_ASCII), 0, expected, 0, 4);
        System.arraycopy(bytes, 1_000, expected, 4, 200_000);
        System.arraycopy("tail".getBytes(StandardCharsets.US_ASCII), 0, expected, 200_004, 4);
        byte[] got = new byte[out.readableBytes()];
        out.readBytes(got);
        assertThat(got).isEqualTo(expected);
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void nothingIsReadMoreThanOneChunkAheadOfWhatTheChannelTook() throws Exception {
        List<Runnable> resumed = new ArrayList<>();
        SliceChunks chunks = new SliceChunks(new FileSlice(file, 0, 300_000), reads::add, Runnable::run, () -> resumed.add(() -> { }));

        assertThat(chunks.readChunk(alloc)).as("nothing read yet").isNull();
        assertThat(chunks.readChunk(alloc)).isNull();
        assertThat(reads).as("one read under way, however often asked").hasSize(1);
        reads.poll().run();
        assertThat(resumed).as("the handler is asked to come back").hasSize(1);
        assertThat(reads).as("a chunk ready and not taken: no read beyond it").isEmpty();

        ByteBuf first = chunks.readChunk(alloc);
        assertThat(first.readableBytes()).isEqualTo(SliceChunks.CHUNK);
        assertThat(reads).as("the next chunk is read once this one is taken").hasSize(1);
        assertThat(chunks.progress()).isEqualTo(SliceChunks.CHUNK);
        assertThat(chunks.isEndOfInput()).isFalse();
        first.release();
    }

    @Test
    void closedWithAChunkReadyOrBeingReadNothingStaysAllocated() throws Exception {
        SliceChunks ready = new SliceChunks(new FileSlice(file, 0, 300_000), reads::add, Runnable::run, () -> { });
        ready.readChunk(alloc);
        reads.poll().run();
        ready.close();

        SliceChunks reading = new SliceChunks(new FileSlice(file, 0, 300_000), reads::add, Runnable::run, () -> { });
        reading.readChunk(alloc);
        reading.close();
        reads.poll().run();

        assertThat(alloc.made).hasSize(2).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        assertThat(reads).isEmpty();
    }

    @Test
    void aSliceBeyondTheEndOfItsFileFailsTheWriteAndLeavesTheSegmentOpen() {
        ChunkedWriteHandler handler = new ChunkedWriteHandler();
        EmbeddedChannel channel = new EmbeddedChannel(handler);
        ChannelFuture sent = channel.writeAndFlush(new SliceChunks(new FileSlice(file, 250_000, 100_000), reads::add, channel.eventLoop(),
                handler::resumeTransfer));
        while (!reads.isEmpty()) {
            reads.poll().run();
            channel.runPendingTasks();
        }

        assertThat(sent.isDone()).isTrue();
        assertThat(sent.cause()).isInstanceOf(IOException.class).hasMessageContaining("segment ended");
        assertThat(file.isOpen()).as("the segment owns its channel").isTrue();
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            b.release();
        }
        channel.finishAndReleaseAll();
    }

    /** A stopping broker's reader refuses the read: readChunk says so itself, without re-entering the handler. */
    @Test
    void aReadTheReaderRefusesFailsTheChunkAtOnce() {
        List<Runnable> resumed = new ArrayList<>();
        SliceChunks chunks = new SliceChunks(new FileSlice(file, 0, 300_000), task -> {
            throw new java.util.concurrent.RejectedExecutionException("stopped");
        }, Runnable::run, () -> resumed.add(() -> { }));

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> chunks.readChunk(alloc)).isInstanceOf(IOException.class)
                .hasMessageContaining("stopping");
        assertThat(resumed).isEmpty();
        assertThat(alloc.made).isEmpty();
    }

    /** An allocator that remembers what it made, to check it was all given back. */
    static final class Tracking extends AbstractByteBufAllocator {
        final List<ByteBuf> made = new ArrayList<>();

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = Unpooled.buffer(initialCapacity, maxCapacity);
            made.add(b);
            return b;
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            throw new AssertionError("chunks are read into the heap");
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }
}
