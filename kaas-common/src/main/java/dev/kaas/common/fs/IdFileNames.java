package dev.kaas.common.fs;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Turns arbitrary client-chosen ids (group ids, transactional ids: any string, including empty,
 * {@code ..}, {@code /}, NUL, non-ASCII, 32 KiB long) into file-name components that are safe on
 * any POSIX file system and collision-free: hex of the UTF-8 bytes when short, otherwise a
 * SHA-256 digest (the file stores the full id, which loading checks). Never a path separator,
 * never {@code .} or {@code ..}, at most 128 characters.
 */
public final class IdFileNames {
    private static final int MAX_HEX_BYTES = 60;

    private IdFileNames() {
    }

    public static String encode(String id) {
        byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= MAX_HEX_BYTES) {
            return "x" + HexFormat.of().formatHex(utf8);
        }
        try {
            return "h" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(utf8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
