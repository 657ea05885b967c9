package dev.kaas.common.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LinkKeyTest {
    @TempDir
    Path data;

    @Test
    void theFirstControllerMakesAnOwnerOnlyKeyAndEveryLaterOneReadsTheSame() throws IOException {
        Path file = LinkKey.defaultFile(data);
        assertThat(LinkKey.read(file)).isEmpty();
        byte[] first = LinkKey.createIfAbsent(file, new SecureRandom());
        assertThat(first.length).isGreaterThanOrEqualTo(LinkKey.MIN_BYTES);
        assertThat(LinkKey.createIfAbsent(file, new SecureRandom())).isEqualTo(first);
        assertThat(LinkKey.read(file)).hasValue(first);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        try (var left = Files.list(file.getParent())) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactly("link.key");
        }
    }

    @Test
    void aKeyMadeByAnotherControllerMeanwhileWins() throws IOException {
        Path file = LinkKey.defaultFile(data);
        // A random source that, while this controller makes its key, lets another controller finish first.
        SecureRandom racing = new SecureRandom() {
            @Override
            public void nextBytes(byte[] bytes) {
                super.nextBytes(bytes);
                try {
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, "the-other-controllers-key-0123456789\n");
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
        assertThat(new String(LinkKey.createIfAbsent(file, racing), StandardCharsets.US_ASCII))
                .isEqualTo("the-other-controllers-key-0123456789");
    }

    @Test
    void anOperatorsKeyIsItsTextWithoutSurroundingSpaceAndAShortOrHugeOneIsRefused() throws IOException {
        Path file = data.resolve("secret");
        Files.writeString(file, "  c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0Cg==\n");
        assertThat(new String(LinkKey.read(file).orElseThrow(), StandardCharsets.US_ASCII)).isEqualTo("c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0Cg==");
        Files.writeString(file, "short\n");
        assertThatThrownBy(() -> LinkKey.read(file)).hasMessageContaining("at least 16");
        Files.write(file, new byte[LinkKey.MAX_BYTES + 1]);
        assertThatThrownBy(() -> LinkKey.read(file)).hasMessageContaining("longer than");
        Files.writeString(file, "\n");
        assertThat(LinkKey.read(file)).isEmpty();
    }
}
