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
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment slice sent through TLS in chunks: whole and in order with the buffers around it
 * behind Netty's ChunkedWriteHandler, every read on the reader (none on the loop), never more
 * than a window read ahead of what the channel took and never more than the shared allowance
 * beyond one chunk, and nothing left allocated or borrowed however it ends.
 */
class SliceChunksTest {
    @TempDir
    Path dir;
    byte[] bytes;
    FileChannel file;
    /** The reader's queue: tasks run only when the test runs them. */
    final ArrayDeque<Runnable> reads = new ArrayDeque<>();
    final Tracking alloc = new Tracking();
    /** The listeners' allowance of chunks beyond one per slice. */
    final Semaphore allowance = new Semaphore(100);

    @BeforeEach
    void segment() throws IOException {
        bytes = new byte[1_000_000];
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
        ChannelFuture sent = channel.write(new SliceChunks(slice, reads::add, new SliceChunks.Share(allowance), alloc, channel.eventLoop(), handler::resumeTransfer));
        channel.write(Unpooled.copiedBuffer("tail", StandardCharsets.US_ASCII));
        channel.flush();

        int readsRun = 0;
        while (!reads.isEmpty() && readsRun < 100) {
            reads.poll().run();
            readsRun++;
            channel.runPendingTasks();
        }

        assertThat(readsRun).as("the slice's two chunks read by one task on the reader").isEqualTo(1);
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
        assertThat(allowance.availablePermits()).as("everything borrowed given back").isEqualTo(100);
    }

    @Test
    void readingStartsAtOnceAndStaysAWindowAheadOfWhatTheChannelTook() throws Exception {
        List<Runnable> resumed = new ArrayList<>();
        SliceChunks chunks = new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, new SliceChunks.Share(allowance), alloc, Runnable::run, () -> resumed.add(() -> { }));
        assertThat(reads).as("one task asked for before the handler ever asks").hasSize(1);

        assertThat(chunks.readChunk(alloc)).as("nothing read yet").isNull();
        assertThat(reads).as("one task under way, however often asked").hasSize(1);
        reads.poll().run();
        // Not yet asked, every chunk is borrowed: a window less the one that becomes its own.
        assertThat(resumed).as("the handler is asked to come back for each chunk").hasSize(SliceChunks.AHEAD - 1);
        assertThat(alloc.made).as("the chunks read back to back").hasSize(SliceChunks.AHEAD - 1);
        assertThat(chunks.readChunk(alloc)).isNotNull().satisfies(ByteBuf::release);
        assertThat(reads).as("the window refilled by what the channel took").hasSize(1);
        reads.poll().run();
        assertThat(alloc.made).as("asked, a whole window held: one chunk its own").hasSize(SliceChunks.AHEAD + 1);
        assertThat(allowance.availablePermits()).as("chunks held beyond the first borrowed").isEqualTo(100 - (SliceChunks.AHEAD - 1));

        long taken = SliceChunks.CHUNK;
        for (ByteBuf b; (b = chunks.readChunk(alloc)) != null; ) {
            taken += b.readableBytes();
            b.release();
            reads.forEach(Runnable::run);
            reads.clear();
        }
        assertThat(taken).isEqualTo(1_000_000);
        assertThat(chunks.isEndOfInput()).isTrue();
        assertThat(chunks.progress()).isEqualTo(1_000_000);
        assertThat(allowance.availablePermits()).as("nothing borrowed once everything was taken").isEqualTo(100);
        chunks.close();
        assertThat(alloc.made).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    /**
     * Slices queued behind the one being sent read ahead only out of the allowance, and stalled
     * consumers together hold no more than the allowance beyond one chunk each.
     */
    @Test
    void beyondOneChunkOfTheSliceBeingSentEverythingReadAheadComesOutOfTheAllowance() throws Exception {
        Semaphore scarce = new Semaphore(1);
        List<SliceChunks> queued = new ArrayList<>();
        SliceChunks.Share oneConnection = new SliceChunks.Share(scarce);
        for (int i = 0; i < 3; i++) {
            queued.add(new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, oneConnection, alloc, Runnable::run, () -> { }));
        }
        runReads();
        assertThat(alloc.made).as("slices not yet asked for: only the allowance's one chunk").hasSize(1);
        queued.forEach(SliceChunks::close);
        assertThat(scarce.availablePermits()).isEqualTo(1);
        alloc.made.clear();

        // Three consumers, each sent one chunk before its socket stopped taking more.
        List<SliceChunks> stalled = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            SliceChunks slice = new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, new SliceChunks.Share(scarce), alloc, Runnable::run,
                    () -> { });
            stalled.add(slice);
            assertThat(slice.readChunk(alloc)).isNull();
            runReads();
            slice.readChunk(alloc).release();
            runReads();
        }
        assertThat(alloc.made.stream().filter(b -> b.refCnt() > 0)).as("one chunk each, and the one the allowance lends").hasSize(3 + 1);
        assertThat(scarce.availablePermits()).isZero();

        stalled.get(0).close();
        assertThat(scarce.availablePermits()).as("given back on close").isEqualTo(1);
        stalled.get(1).readChunk(alloc).release();
        runReads();
        assertThat(alloc.made.stream().filter(b -> b.refCnt() > 0)).as("the permit lent to another consumer").hasSize(2 + 1);
        assertThat(scarce.availablePermits()).isZero();
        stalled.forEach(SliceChunks::close);
        assertThat(scarce.availablePermits()).isEqualTo(1);
        assertThat(alloc.made).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    /**
     * A connection borrows at most a window less one chunk, however many slices its pipelined
     * responses hold: twenty consumers that asked for five large fetches each and stopped reading
     * hold twenty windows, not a hundred, and leave the rest of the allowance to everyone else.
     */
    @Test
    void aConnectionHoldsAtMostAWindowWhateverItsResponsesHold() throws Exception {
        List<SliceChunks> all = new ArrayList<>();
        for (int c = 0; c < 20; c++) {
            SliceChunks.Share connection = new SliceChunks.Share(allowance);
            for (int r = 0; r < 5; r++) {
                all.add(new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, connection, alloc, Runnable::run, () -> { }));
            }
            // The first response's slice is being sent: the socket took one chunk and then no more.
            SliceChunks sending = all.get(all.size() - 5);
            runReads();
            sending.readChunk(alloc).release();
            runReads();
            assertThat(connection.borrowed()).as("connection %d", c).isEqualTo(SliceChunks.AHEAD - 1);
        }
        assertThat(alloc.made.stream().filter(b -> b.refCnt() > 0)).as("a window each").hasSize(20 * SliceChunks.AHEAD);
        assertThat(allowance.availablePermits()).isEqualTo(100 - 20 * (SliceChunks.AHEAD - 1));
        all.forEach(SliceChunks::close);
        assertThat(allowance.availablePermits()).isEqualTo(100);
        assertThat(alloc.made).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    /**
     * The slice queued behind the one being sent starts reading as that one's window drains
     * (everything of it asked of the reader), before the handler asks it: what the connection
     * gives back is offered to it then, and not before, while the slice being sent still needs
     * it for its own window.
     */
    @Test
    void theNextSliceStartsReadingAsTheOneBeforeItDrains() throws Exception {
        SliceChunks.Share connection = new SliceChunks.Share(allowance);
        SliceChunks first = new SliceChunks(new FileSlice(file, 0, 900_000), reads::add, connection, alloc, Runnable::run, () -> { });
        SliceChunks second = new SliceChunks(new FileSlice(file, 900_000, 100_000), reads::add, connection, alloc, Runnable::run, () -> { });
        runReads();
        assertThat(alloc.made).as("the connection's window all taken by the first slice").hasSize(SliceChunks.AHEAD - 1);

        first.readChunk(alloc).release();
        assertThat(reads).as("the first slice's window refilling").hasSize(1);
        first.readChunk(alloc).release();
        assertThat(reads).as("what it gave back while that read was under way is kept for its next refill").hasSize(1);

        long taken = 2L * SliceChunks.CHUNK;
        for (ByteBuf b; (b = first.readChunk(alloc)) != null || !reads.isEmpty(); ) {
            if (b != null) {
                taken += b.readableBytes();
                b.release();
            }
            runReads();
        }
        assertThat(taken).isEqualTo(900_000);
        assertThat(second.progress()).isZero();
        assertThat(alloc.made).as("the second slice read before it was asked").hasSize(7 + 1);
        assertThat(second.readChunk(alloc)).as("its chunk ready when asked").isNotNull().satisfies(ByteBuf::release);
        first.close();
        second.close();
        assertThat(allowance.availablePermits()).isEqualTo(100);
        assertThat(alloc.made).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    private void runReads() {
        while (!reads.isEmpty()) {
            reads.poll().run();
        }
    }

    @Test
    void closedWithChunksReadyOrBeingReadNothingStaysAllocatedOrBorrowed() throws Exception {
        SliceChunks ready = new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, new SliceChunks.Share(allowance), alloc, Runnable::run, () -> { });
        reads.poll().run();
        ready.close();

        SliceChunks reading = new SliceChunks(new FileSlice(file, 0, 1_000_000), reads::add, new SliceChunks.Share(allowance), alloc, Runnable::run, () -> { });
        reading.close();
        reads.poll().run();

        assertThat(alloc.made).as("the first one's chunks read; the second's task stopped at the close").hasSize(SliceChunks.AHEAD - 1)
                .allSatisfy(b -> assertThat(b.refCnt()).isZero());
        assertThat(reads).isEmpty();
        assertThat(allowance.availablePermits()).isEqualTo(100);
    }

    @Test
    void aSliceBeyondTheEndOfItsFileFailsTheWriteAndLeavesTheSegmentOpen() {
        ChunkedWriteHandler handler = new ChunkedWriteHandler();
        EmbeddedChannel channel = new EmbeddedChannel(handler);
        ChannelFuture sent = channel.writeAndFlush(new SliceChunks(new FileSlice(file, 950_000, 300_000), reads::add, new SliceChunks.Share(allowance), alloc, channel.eventLoop(),
                handler::resumeTransfer));
        while (!reads.isEmpty()) {
            reads.poll().run();
            channel.runPendingTasks();
        }

        assertThat(sent.isDone()).isTrue();
        assertThat(sent.cause()).isInstanceOf(IOException.class).hasMessageContaining("segment ended");
        assertThat(file.isOpen()).as("the segment owns its channel").isTrue();
        assertThat(allowance.availablePermits()).as("nothing borrowed after the failure").isEqualTo(100);
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            b.release();
        }
        channel.finishAndReleaseAll();
    }

    /** A stopping broker's reader refuses the read: readChunk says so itself, without re-entering the handler. */
    @Test
    void aReadTheReaderRefusesFailsTheChunkAtOnce() {
        List<Runnable> resumed = new ArrayList<>();
        SliceChunks chunks = new SliceChunks(new FileSlice(file, 0, 1_000_000), task -> {
            throw new java.util.concurrent.RejectedExecutionException("stopped");
        }, new SliceChunks.Share(allowance), alloc, Runnable::run, () -> resumed.add(() -> { }));

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> chunks.readChunk(alloc)).isInstanceOf(IOException.class)
                .hasMessageContaining("stopping");
        assertThat(resumed).isEmpty();
        assertThat(alloc.made).isEmpty();
        assertThat(allowance.availablePermits()).isEqualTo(100);
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
