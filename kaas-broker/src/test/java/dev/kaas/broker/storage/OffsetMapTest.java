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

    @Test
    void aPlannedPassKnowsWhichOfItsOffsetsAreStillTheirKeysLatest() {
        OffsetMap map = new OffsetMap(24 * 100_000);
        map.plan(100, 200);
        map.put(key("a"), 100);
        map.put(key("b"), 101);
        map.put(key("a"), 150);
        map.put(key("a"), 170);
        map.put(key("c"), 250);

        assertThat(map.latest(100)).as("replaced by 150").isZero();
        assertThat(map.latest(150)).as("replaced by 170").isZero();
        assertThat(map.latest(170)).isEqualTo(1);
        assertThat(map.latest(101)).isEqualTo(1);
        assertThat(map.latest(120)).as("never put").isEqualTo(-1);
        assertThat(map.latest(250)).as("outside the plan").isEqualTo(-1);
        assertThat(map.latest(99)).isEqualTo(-1);
        assertThat(map.get(key("a"))).isEqualTo(170);
        // A hundred offsets need no more than the smallest map; the next pass starts with none of this.
        assertThat(map.capacity()).isEqualTo(4096);
        map.clear();
        assertThat(map.capacity()).isEqualTo(100_000);
        assertThat(map.latest(170)).isEqualTo(-1);
        assertThat(map.get(key("a"))).isEqualTo(-1);
        map.plan(0, 30_000);
        assertThat(map.capacity()).isEqualTo(60_000);
        map.plan(0, 1_000_000);
        assertThat(map.capacity()).isEqualTo(100_000);
    }

    @Test
    void clearingAFewKeysLeavesNoneBehind() {
        OffsetMap map = new OffsetMap(24 * 10_000);
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 2_000; k++) {
                map.put(key("round" + round + "-" + k), k);
            }
            assertThat(map.size()).isEqualTo(2_000);
            map.clear();
            for (int r = 0; r <= round; r++) {
                for (int k = 0; k < 2_000; k += 7) {
                    assertThat(map.get(key("round" + r + "-" + k))).isEqualTo(-1);
                }
            }
        }
    }

    @Test
    void aKeysOffsetsOutOfOrderLeaveTheBitsUnanswered() {
        OffsetMap map = new OffsetMap(24 * 10_000);
        map.plan(0, 100);
        map.put(key("k"), 5);
        map.put(key("k"), 7);
        assertThat(map.latest(5)).isZero();
        // A corrupt segment repeats an offset: get() now says 5, which the bits could not follow.
        map.put(key("k"), 5);
        assertThat(map.get(key("k"))).isEqualTo(5);
        assertThat(map.latest(5)).isEqualTo(-1);
        assertThat(map.latest(7)).isEqualTo(-1);
        map.plan(0, 100);
        map.put(key("k"), 9);
        assertThat(map.latest(9)).as("the next pass answers again").isEqualTo(1);
    }
}
