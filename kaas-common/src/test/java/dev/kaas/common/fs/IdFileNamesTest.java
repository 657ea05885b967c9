package dev.kaas.common.fs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdFileNamesTest {
    @TempDir
    Path dir;

    @Test
    void hostileIdsBecomeDistinctSafeFileNamesInsideTheDirectory() throws Exception {
        List<String> ids = List.of("", ".", "..", "a/b", "../../etc/passwd", "nul\0byte", "grüße-组", "x".repeat(32 * 1024),
                "x".repeat(32 * 1024 - 1), "A", "a", "x41");
        Set<String> names = new HashSet<>();
        for (String id : ids) {
            String name = IdFileNames.encode(id);
            assertThat(name).matches("[a-z0-9]{1,128}").isNotIn(".", "..");
            assertThat(names.add(name)).as("distinct for %s", id.length() > 20 ? id.substring(0, 20) : id).isTrue();
            Path file = dir.resolve(name);
            Files.writeString(file, "ok");
            assertThat(file.getParent()).isEqualTo(dir);
        }
        assertThat(Files.list(dir).count()).isEqualTo(ids.size());
    }
}
