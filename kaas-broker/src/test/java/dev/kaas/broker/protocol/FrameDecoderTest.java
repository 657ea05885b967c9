package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Framing without sockets: bytes in, frames out, a frame's size reserved once it is being sent and before its buffer exists. */
class FrameDecoderTest {
    private static final int MAX = 1024;
    private static final Runnable NO_WAKE = () -> { };

    /** A frame as a client sends it: size, then {@code bodySize} bytes counting up from {@code seed}. */
    static byte[] frame(int bodySize, int seed) {
        ByteBuffer b = ByteBuffer.allocate(4 + bodySize).putInt(bodySize);
        for (int i = 0; i < bodySize; i++) {
            b.put((byte) (seed + i));
        }
        return b.array();
    }

    static byte[] body(byte[] frame) {
        return Arrays.copyOfRange(frame, 4, frame.length);
    }

    static byte[] bytes(FrameDecoder.Frame f) {
        ByteBuffer b = f.buffer().duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Test
    void theFirstThreeBytesOfASizeGiveNoFrameAndReserveNothing() throws Exception {
        RequestMemory memory = new RequestMemory(10_000);
        FrameDecoder d = new FrameDecoder(MAX, memory);
        byte[] f = frame(20, 1);

        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, 0, 3)));

        assertThat(d.poll(NO_WAKE)).isNull();
        assertThat(memory.reserved()).isZero();
        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, 3, f.length - 3)));
        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(f));
    }

    @Test
    void aSmallFrameOneByteShortIsHeldWithoutItsReservationUntilTheLastByteArrives() throws Exception {
        RequestMemory memory = new RequestMemory(10_000);
        FrameDecoder d = new FrameDecoder(MAX, memory);
        byte[] f = frame(100, 7);

        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, 0, f.length - 1)));

        assertThat(d.poll(NO_WAKE)).isNull();
        assertThat(memory.reserved()).isZero();
        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, f.length - 1, 1)));
        FrameDecoder.Frame frame = d.poll(NO_WAKE);
        assertThat(bytes(frame)).isEqualTo(body(f));
        assertThat(d.poll(NO_WAKE)).isNull();
        frame.release();
        frame.release();
        assertThat(memory.reserved()).as("release is idempotent").isZero();
    }

    @Test
    void exactlyTwoFramesInOneBufferGiveTwoFramesAndNoMore() throws Exception {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));
        byte[] a = frame(10, 1);
        byte[] b = frame(30, 50);
        ByteBuffer both = ByteBuffer.allocate(a.length + b.length).put(a).put(b).flip();

        d.append(Unpooled.wrappedBuffer(both));

        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(a));
        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(b));
        assertThat(d.poll(NO_WAKE)).isNull();
        assertThat(d.buffered()).isZero();
    }

    @Test
    void framesFedOneByteAtATimeComeOutWhole() throws Exception {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));
        byte[] a = frame(12, 3);
        byte[] b = frame(9, 90);
        ByteBuffer stream = ByteBuffer.allocate(a.length + b.length).put(a).put(b).flip();
        List<byte[]> out = new ArrayList<>();

        while (stream.hasRemaining()) {
            d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(new byte[] {stream.get()})));
            FrameDecoder.Frame f = d.poll(NO_WAKE);
            if (f != null) {
                out.add(bytes(f));
            }
        }

        assertThat(out).containsExactly(body(a), body(b));
    }

    @Test
    void aSizeOverTheLimitIsRefusedBeforeAnyMemoryIsReserved() {
        RequestMemory memory = new RequestMemory(1_000_000);
        FrameDecoder d = new FrameDecoder(MAX, memory);

        d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(MAX + 1).flip()));

        assertThatThrownBy(() -> d.poll(NO_WAKE)).isInstanceOf(FrameDecoder.InvalidFrameException.class);
        assertThat(memory.reserved()).isZero();
    }

    @Test
    void theLargestAllowedSizeIsAccepted() throws Exception {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));
        byte[] f = frame(MAX, 0);

        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f)));

        assertThat(bytes(d.poll(NO_WAKE))).hasSize(MAX);
    }

    @Test
    void aNegativeSizeIsRefused() {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));

        d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(-1).flip()));

        assertThatThrownBy(() -> d.poll(NO_WAKE)).isInstanceOf(FrameDecoder.InvalidFrameException.class);
    }

    @Test
    void aZeroSizeIsRefused() {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));

        d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(0).flip()));

        assertThatThrownBy(() -> d.poll(NO_WAKE)).isInstanceOf(FrameDecoder.InvalidFrameException.class);
    }

    @Test
    void manyConnectionsSendingLargeFramesSlowlyHoldAtMostTheBudget() throws Exception {
        int frameSize = 4 << 20;
        RequestMemory memory = new RequestMemory(10L << 20);
        AtomicInteger woken = new AtomicInteger();
        List<FrameDecoder> decoders = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            FrameDecoder d = new FrameDecoder(8 << 20, memory);
            decoders.add(d);
            // The size and the first MiB of a 4 MiB frame; the rest never comes.
            d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(frameSize).flip()));
            d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(1 << 20)));
            assertThat(d.poll(woken::incrementAndGet)).isNull();
        }

        assertThat(memory.reserved()).isEqualTo(2L * frameSize).isLessThanOrEqualTo(memory.capacity());
        assertThat(decoders.stream().filter(FrameDecoder::awaitingMemory).count()).isEqualTo(18);
        assertThat(memory.waiting()).isEqualTo(18);

        decoders.get(0).close(NO_WAKE);

        assertThat(memory.reserved()).as("a closed connection gives its partial frame's bytes back, to the first in line")
                .isEqualTo(2L * frameSize);
        assertThat(woken.get()).as("only the one they were reserved for is woken").isEqualTo(1);
        assertThat(memory.waiting()).isEqualTo(17);
        FrameDecoder next = decoders.get(2);
        assertThat(next.poll(woken::incrementAndGet)).isNull();
        assertThat(next.awaitingMemory()).isFalse();
        assertThat(memory.reserved()).isEqualTo(2L * frameSize);
    }

    /**
     * Two large frames, most of each sent, with room for only one: the one holding its reservation
     * completes and releases it, then the other gets it. Reserving bytes as they arrived would
     * leave both holding part of the budget, each waiting for the other, forever.
     */
    @Test
    void partlySentFramesThatTogetherExceedTheBudgetStillAllComplete() throws Exception {
        int frameSize = 6 << 20;
        RequestMemory memory = new RequestMemory(10L << 20);
        FrameDecoder a = new FrameDecoder(8 << 20, memory);
        FrameDecoder b = new FrameDecoder(8 << 20, memory);
        AtomicInteger bWoken = new AtomicInteger();
        for (FrameDecoder d : List.of(a, b)) {
            d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(frameSize).flip()));
            d.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(5 << 20)));
        }
        assertThat(a.poll(NO_WAKE)).isNull();
        assertThat(b.poll(bWoken::incrementAndGet)).isNull();
        assertThat(b.awaitingMemory()).isTrue();

        a.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(1 << 20)));
        FrameDecoder.Frame first = a.poll(NO_WAKE);
        assertThat(first).as("the frame holding its reservation completes").isNotNull();
        first.release();
        assertThat(bWoken.get()).isEqualTo(1);
        b.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(1 << 20)));
        FrameDecoder.Frame second = b.poll(NO_WAKE);
        assertThat(second).isNotNull();
        assertThat(second.buffer().remaining()).isEqualTo(frameSize);
        second.release();
        assertThat(memory.reserved()).isZero();
    }

    @Test
    void connectionsAnnouncingTheLargestFrameAndSendingLittleHoldNoneOfTheBudget() throws Exception {
        RequestMemory memory = new RequestMemory(1L << 20);
        for (int i = 0; i < 1000; i++) {
            FrameDecoder slowloris = new FrameDecoder(1 << 20, memory);
            slowloris.append(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).putInt(1 << 20).flip()));
            slowloris.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(new byte[] {0, 18, 0, 3, 0, 0, 0, 1})));
            // ...and then a byte now and then, each appended to the same small buffer.
            for (int b = 0; b < 100; b++) {
                slowloris.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(new byte[] {1})));
            }
            assertThat(slowloris.poll(NO_WAKE)).isNull();
            assertThat(slowloris.awaitingMemory()).isFalse();
            assertThat(slowloris.buffered()).isEqualTo(108);
        }
        assertThat(memory.reserved()).isZero();

        FrameDecoder normal = new FrameDecoder(1 << 20, memory);
        byte[] f = frame(100_000, 5);
        normal.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f)));
        assertThat(bytes(normal.poll(NO_WAKE))).isEqualTo(body(f));
        assertThat(memory.reserved()).isEqualTo(100_000);
    }

    @Test
    void aFrameWaitingForMemoryIsDecodedOnceAnotherIsReleased() throws Exception {
        RequestMemory memory = new RequestMemory(100);
        FrameDecoder a = new FrameDecoder(MAX, memory);
        FrameDecoder b = new FrameDecoder(MAX, memory);
        byte[] fa = frame(80, 1);
        byte[] fb = frame(40, 2);
        a.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(fa)));
        FrameDecoder.Frame first = a.poll(NO_WAKE);
        AtomicInteger woken = new AtomicInteger();
        b.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(fb)));

        assertThat(b.poll(woken::incrementAndGet)).isNull();
        assertThat(b.awaitingMemory()).isTrue();
        first.release();

        assertThat(woken.get()).isEqualTo(1);
        assertThat(bytes(b.poll(NO_WAKE))).isEqualTo(body(fb));
        assertThat(memory.reserved()).isEqualTo(40);
    }

    @Test
    void anUnboundedBudgetNeverWaits() throws Exception {
        RequestMemory memory = new RequestMemory(-1);
        FrameDecoder d = new FrameDecoder(MAX, memory);
        d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(frame(MAX, 0))));

        assertThat(d.poll(NO_WAKE)).isNotNull();
        assertThat(memory.reserved()).isEqualTo(MAX);
    }

    @Test
    void aFrameOfTheGraceIsReservedOnceWholeAndALargerOneOnceItsGraceArrived() throws Exception {
        RequestMemory memory = new RequestMemory(10L << 20);
        FrameDecoder atGrace = new FrameDecoder(1 << 20, memory);
        byte[] f = frame(FrameDecoder.GRACE, 3);
        atGrace.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, 0, f.length - 1)));
        assertThat(atGrace.poll(NO_WAKE)).isNull();
        assertThat(memory.reserved()).isZero();
        atGrace.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(f, f.length - 1, 1)));
        FrameDecoder.Frame whole = atGrace.poll(NO_WAKE);
        assertThat(bytes(whole)).isEqualTo(body(f));
        whole.release();

        FrameDecoder above = new FrameDecoder(1 << 20, memory);
        byte[] g = frame(FrameDecoder.GRACE + 1, 4);
        above.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(g, 0, 4 + FrameDecoder.GRACE - 1)));
        assertThat(above.poll(NO_WAKE)).isNull();
        assertThat(memory.reserved()).isZero();
        above.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(g, 4 + FrameDecoder.GRACE - 1, 1)));
        assertThat(above.poll(NO_WAKE)).isNull();
        assertThat(memory.reserved()).as("its grace arrived: its whole size").isEqualTo(FrameDecoder.GRACE + 1);
        above.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(g, 4 + FrameDecoder.GRACE, 1)));
        assertThat(bytes(above.poll(NO_WAKE))).isEqualTo(body(g));
    }

    /** Small and large reads in any order, a frame ending inside the tail buffer: the bytes come out in order. */
    @Test
    void readsOfEverySizeAroundAPartlyConsumedTailKeepTheirOrder() throws Exception {
        FrameDecoder d = new FrameDecoder(MAX, new RequestMemory(10_000));
        byte[] a = frame(10, 1);
        byte[] b = frame(700, 2);
        byte[] c = frame(30, 3);
        ByteBuffer stream = ByteBuffer.allocate(a.length + b.length + c.length).put(a).put(b).put(c).flip();
        int[] sizes = {1, 3, 12, 600, 2, 1, 90, 5};
        List<byte[]> out = new ArrayList<>();
        int k = 0;
        while (stream.hasRemaining()) {
            int n = Math.min(sizes[k++ % sizes.length], stream.remaining());
            byte[] chunk = new byte[n];
            stream.get(chunk);
            d.append(Unpooled.wrappedBuffer(ByteBuffer.wrap(chunk)));
            for (FrameDecoder.Frame f = d.poll(NO_WAKE); f != null; f = d.poll(NO_WAKE)) {
                out.add(bytes(f));
            }
        }
        assertThat(out).containsExactly(body(a), body(b), body(c));
        assertThat(d.buffered()).isZero();
    }

    /**
     * The decoder owns the pooled buffers the socket hands it: each is released as soon as its
     * bytes are in frames (a small read at once, copied into the tail), and what is still held when
     * the connection closes is released then. A leak here would pin pooled direct memory per read.
     */
    @Test
    void receivedBuffersAreReleasedOnceConsumedAndWhenTheDecoderCloses() throws Exception {
        FrameDecoder d = new FrameDecoder(1 << 20, new RequestMemory(10 << 20));
        byte[] a = frame(2_000, 1);
        byte[] b = frame(10_000, 2);
        ByteBuf first = pooled(a, 0, a.length);
        ByteBuf small = pooled(b, 0, 100);
        ByteBuf rest = pooled(b, 100, 5_000);

        d.append(first);
        d.append(small);
        d.append(rest);
        FrameDecoder.Frame frame = d.poll(NO_WAKE);

        assertThat(bytes(frame)).isEqualTo(body(a));
        assertThat(first.refCnt()).as("consumed").isZero();
        assertThat(small.refCnt()).as("copied into the tail").isZero();
        assertThat(d.poll(NO_WAKE)).isNull();
        assertThat(rest.refCnt()).as("its bytes are not all in a frame yet").isOne();
        d.close(NO_WAKE);
        assertThat(rest.refCnt()).as("released by close").isZero();
        ByteBuf late = pooled(b, 5_100, 100);
        d.append(late);
        assertThat(late.refCnt()).as("released when the decoder is closed").isZero();
    }

    /**
     * A read that fills little of its buffer is copied out and the buffer released: a client
     * sending a few hundred bytes at a time into 64 KiB read buffers must not pin 64 KiB each.
     */
    @Test
    void aReadFillingLessThanHalfItsBufferIsCopiedOutAndTheBufferReleased() throws Exception {
        FrameDecoder d = new FrameDecoder(1 << 20, new RequestMemory(10 << 20));
        byte[] f = frame(200_000, 5);
        ByteBuf sparse = PooledByteBufAllocator.DEFAULT.directBuffer(64 * 1024).writeBytes(f, 0, 5_000);
        ByteBuf full = pooled(f, 5_000, 60_000);

        d.append(sparse);
        d.append(full);

        assertThat(sparse.refCnt()).as("copied out").isZero();
        assertThat(full.refCnt()).as("kept as it is").isOne();
        assertThat(d.buffered()).isEqualTo(65_000);
        d.append(Unpooled.wrappedBuffer(f, 65_000, f.length - 65_000));
        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(f));
        assertThat(full.refCnt()).isZero();
    }

    /**
     * A read whose frames took most of it, with a few bytes of the next frame left: when the
     * connection stops polling, those bytes are copied out and the read buffer released, so a
     * client that stalls there pins no 64 KiB buffer.
     */
    @Test
    void theRestOfAMostlyConsumedReadIsCopiedOutBeforeWaiting() throws Exception {
        FrameDecoder d = new FrameDecoder(1 << 20, new RequestMemory(10 << 20));
        byte[] a = frame(40_000, 1);
        byte[] b = frame(30_000, 2);
        ByteBuf read = PooledByteBufAllocator.DEFAULT.directBuffer(a.length + 10).writeBytes(a).writeBytes(b, 0, 10);
        d.append(read);
        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(a));
        assertThat(read.refCnt()).as("its rest is still to be read").isOne();

        d.trim();

        assertThat(read.refCnt()).as("the rest copied out").isZero();
        assertThat(d.poll(NO_WAKE)).isNull();
        d.append(Unpooled.wrappedBuffer(b, 10, b.length - 10));
        assertThat(bytes(d.poll(NO_WAKE))).isEqualTo(body(b));
    }

    private static ByteBuf pooled(byte[] bytes, int from, int length) {
        return PooledByteBufAllocator.DEFAULT.directBuffer(length).writeBytes(bytes, from, length);
    }
}
