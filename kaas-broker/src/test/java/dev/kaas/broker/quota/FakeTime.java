package dev.kaas.broker.quota;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Time;

/** kafka-clients' Time on a clock the test moves (also for the protocol package's connection rates). */
public final class FakeTime implements Time {
    public final AtomicLong now;

    public FakeTime(long startMs) {
        this.now = new AtomicLong(startMs);
    }

    @Override
    public long milliseconds() {
        return now.get();
    }

    @Override
    public long nanoseconds() {
        return now.get() * 1_000_000;
    }

    @Override
    public void sleep(long ms) {
        now.addAndGet(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException();
    }
}
