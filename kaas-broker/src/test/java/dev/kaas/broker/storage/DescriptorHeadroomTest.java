package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DescriptorHeadroomTest {
    private final AtomicLong inUse = new AtomicLong();
    private final AtomicInteger readings = new AtomicInteger();
    private final AtomicLong now = new AtomicLong();
    private final DescriptorHeadroom headroom = new DescriptorHeadroom(() -> {
        readings.incrementAndGet();
        return inUse.get();
    }, () -> 100_000, now::get);

    @Test
    void aTakeoverOfThousandsOfPartitionsReadsTheCountOnce() {
        inUse.set(10_000);
        for (int i = 0; i < 3_000; i++) {
            assertThat(headroom.reserve()).isNull();
            inUse.incrementAndGet();
        }
        assertThat(readings).hasValue(1);
    }

    @Test
    void opensStopAtTheShareEvenBetweenReadings() {
        inUse.set(79_990);
        int opened = 0;
        while (headroom.reserve() == null && opened < 100) {
            opened++;
            inUse.incrementAndGet();
        }
        assertThat(opened).isEqualTo(10);
        assertThat(headroom.reserve()).contains("file descriptors: 80000 of 100000");
    }

    @Test
    void segmentsBeyondTheFirstDrawOnTheBudget() {
        inUse.set(79_900);
        assertThat(headroom.reserve()).isNull();
        headroom.consumed(99);
        inUse.addAndGet(100);
        assertThat(headroom.reserve()).as("the 100 descriptors of one partition used the budget up").isNotNull();
        assertThat(readings).hasValue(2);
    }

    @Test
    void aRefusalIsReadAgainOnlyAfterItsInterval() {
        inUse.set(90_000);
        for (int i = 0; i < 50; i++) {
            assertThat(headroom.reserve()).isNotNull();
        }
        assertThat(readings).hasValue(1);
        inUse.set(1_000);
        now.addAndGet(DescriptorHeadroom.REFUSAL_NANOS);
        assertThat(headroom.reserve()).as("descriptors freed since the refusal").isNull();
        assertThat(readings).hasValue(2);
    }

    @Test
    void aReadingGoesStaleWithTimeOrANewAssignment() {
        inUse.set(1_000);
        headroom.reserve();
        now.addAndGet(DescriptorHeadroom.READING_NANOS);
        headroom.reserve();
        assertThat(readings).hasValue(2);
        headroom.invalidate();
        inUse.set(85_000);
        assertThat(headroom.reserve()).as("connections took descriptors since the last reading").isNotNull();
        assertThat(readings).hasValue(3);
    }
}
