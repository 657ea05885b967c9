package dev.kaas.common.cluster;

import dev.kaas.common.fs.AtomicFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The secret a broker proves on the controller link ({@link LinkAuth}). By default it lives on the
 * shared volume, {@code __cluster/link.key}, made by the first controller to start: whoever can
 * read the volume can read every log anyway, so the volume is already the trust boundary, and a
 * cluster needs no configuration for its link to be authenticated. {@code kaas.link-key-file}
 * names another file instead (a mounted Kubernetes Secret), which nobody creates.
 *
 * <p>The key is the file's text without surrounding white space, so a Secret made by
 * {@code openssl rand -base64 32} works as written.
 */
public final class LinkKey {
    /** Shorter keys are refused: they could be guessed offline from one captured call. */
    public static final int MIN_BYTES = 16;
    /** The file is read whole; another process wrote it, so its size is bounded first. */
    public static final int MAX_BYTES = 4096;
    private static final int GENERATED_BYTES = 32;

    private LinkKey() {
    }

    /** Where the cluster keeps its generated key. */
    public static Path defaultFile(Path dataDir) {
        return dataDir.resolve("__cluster").resolve("link.key");
    }

    /**
     * The key in {@code file}, made first when there is none. Two controllers starting together
     * both write a key, but only one name is created (a hard link, atomic on NFS too), and both
     * then read back the one that won.
     */
    public static byte[] createIfAbsent(Path file, SecureRandom random) throws IOException {
        Optional<byte[]> existing = read(file);
        if (existing.isPresent()) {
            return existing.get();
        }
        byte[] raw = new byte[GENERATED_BYTES];
        random.nextBytes(raw);
        byte[] text = (Base64.getEncoder().encodeToString(raw) + "\n").getBytes(StandardCharsets.US_ASCII);
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + file.getFileName() + ".tmp-" + UUID.randomUUID());
        try {
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnly(dir))) {
                ByteBuffer buf = ByteBuffer.wrap(text);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            try {
                Files.createLink(file, tmp);
            } catch (FileAlreadyExistsException lost) {
                // Another controller made it first: its key is the cluster's.
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        AtomicFiles.fsyncDirectory(dir);
        return read(file).orElseThrow(() -> new IOException(file + " exists but holds no key (it is empty or white space):"
                + " remove it, or write the cluster's key into it"));
    }

    /**
     * The key in {@code file}, or empty when there is no such file (yet). A file holding a key
     * too short or too long is refused with an exception: a broker or controller must not run
     * with a link anyone could guess.
     */
    public static Optional<byte[]> read(Path file) throws IOException {
        byte[] content;
        try (InputStream in = Files.newInputStream(file)) {
            content = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (content.length > MAX_BYTES) {
            throw new IOException(file + " is longer than " + MAX_BYTES + " bytes: not a link key");
        }
        int from = 0;
        int to = content.length;
        while (from < to && Character.isWhitespace(content[from])) {
            from++;
        }
        while (to > from && Character.isWhitespace(content[to - 1])) {
            to--;
        }
        if (to - from == 0) {
            // A key being made (an empty file would be a crash between create and write): not there yet.
            return Optional.empty();
        }
        if (to - from < MIN_BYTES) {
            throw new IOException(file + " holds " + (to - from) + " bytes; a link key needs at least " + MIN_BYTES);
        }
        return Optional.of(Arrays.copyOfRange(content, from, to));
    }

    /** The key file is readable by its owner only, as Apache's keystores should be. */
    private static FileAttribute<?>[] ownerOnly(Path dir) {
        if (!dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return new FileAttribute<?>[0];
        }
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))};
    }
}
