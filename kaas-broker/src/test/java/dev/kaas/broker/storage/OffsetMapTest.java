package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OffsetMapTest {
    static ByteBuffer key(String k) {
        return ByteBuffer.wrap(k.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theLatestOffsetOfEveryKeyIsKept() {
        OffsetMap map = new OffsetMap(24 * 4096);
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 1000; k++) {
                map.put(key("key-" + k), round * 1000L + k);
            }
        }

        assertThat(map.size()).isEqualTo(1000);
        for (int k = 0; k < 1000; k++) {
            assertThat(map.get(key("key-" + k))).isEqualTo(2000L + k);
        }
        assertThat(map.get(key("absent"))).isEqualTo(-1);
        assertThat(map.latestOffset()).isEqualTo(2999);
    }

    @Test
    void aFullMapRefusesNewKeysAndClearEmptiesIt() {
        OffsetMap map = new OffsetMap(24 * 8);
        for (int k = 0; k < 8; k++) {
            map.put(key("k" + k), k);
        }

        assertThatThrownBy(() -> map.put(key("one more"), 9)).isInstanceOf(IllegalStateException.class);
        map.put(key("k3"), 30);
        assertThat(map.get(key("k3"))).isEqualTo(30);
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.get(key("k3"))).isEqualTo(-1);
        assertThat(map.latestOffset()).isEqualTo(-1);
    }

    @Test
    void readingAKeyDoesNotConsumeIt() {
        OffsetMap map = new OffsetMap(24 * 16);
        ByteBuffer k = key("same");
        map.put(k, 5);

        assertThat(k.remaining()).isEqualTo(4);
        assertThat(map.get(k)).isEqualTo(5);
        assertThat(k.remaining()).isEqualTo(4);
    }
}
