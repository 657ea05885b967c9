package dev.kaas.common.cluster;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How an assignment crosses the broker stream whatever its size: its JSON is cut into pieces of at
 * most {@link #CHUNK_BYTES}, sent as consecutive messages of one version (index 0..count-1), well
 * under gRPC's default 4 MiB message limit; the receiver applies the assignment once the last
 * piece arrived. A gRPC stream delivers in order, so a piece out of sequence means a broken
 * sender: the half-built assignment is dropped and the next complete one is applied.
 *
 * <p>Kept free of the generated gRPC types so both apps (and tests) share one implementation.
 */
public final class AssignmentChunks {
    /** 1 MiB: a quarter of gRPC's default maximum inbound message, leaving room for framing. */
    public static final int CHUNK_BYTES = 1 << 20;

    private AssignmentChunks() {
    }

    /** The pieces of {@code bytes}, each at most {@code chunkBytes} long; one empty piece for empty input. */
    public static List<byte[]> split(byte[] bytes, int chunkBytes) {
        List<byte[]> out = new ArrayList<>();
        for (int from = 0; from < bytes.length || out.isEmpty(); from += chunkBytes) {
            int to = Math.min(bytes.length, from + chunkBytes);
            byte[] piece = new byte[to - from];
            System.arraycopy(bytes, from, piece, 0, piece.length);
            out.add(piece);
        }
        return out;
    }

    /** Reassembles pieces; one per stream, used by one thread at a time. */
    public static final class Assembler {
        private long version = -1;
        private int expectedIndex;
        private ByteArrayOutputStream buffer;

        /**
         * @return the whole payload once {@code index == count - 1} completes a sequence, else empty
         * @throws IllegalStateException if the piece does not continue the sequence under way (it
         *         is dropped, and the next piece with index 0 starts afresh)
         */
        public Optional<byte[]> accept(long pieceVersion, int index, int count, byte[] piece) {
            if (index == 0) {
                version = pieceVersion;
                expectedIndex = 0;
                buffer = new ByteArrayOutputStream(Math.max(piece.length, 16) * Math.max(1, Math.min(count, 64)));
            }
            if (buffer == null || pieceVersion != version || index != expectedIndex || count <= index) {
                String why = "assignment piece out of sequence: version=" + pieceVersion + " index=" + index + "/" + count
                        + " while expecting version=" + version + " index=" + expectedIndex;
                buffer = null;
                version = -1;
                throw new IllegalStateException(why);
            }
            buffer.writeBytes(piece);
            expectedIndex++;
            if (index < count - 1) {
                return Optional.empty();
            }
            byte[] whole = buffer.toByteArray();
            buffer = null;
            version = -1;
            return Optional.of(whole);
        }
    }
}
