package dev.kaas.broker.group;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** A scheduler whose timers fire only when the test advances its clock. */
public final class MockScheduler implements Scheduler {
    private record Timer(String key, long at, long seq, Runnable task) {
    }

    public final AtomicLong clock = new AtomicLong(1_000_000);
    private final Map<String, Timer> timers = new HashMap<>();
    private long seq;

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        timers.put(key, new Timer(key, clock.get() + delayMs, seq++, task));
    }

    @Override
    public void cancel(String key) {
        timers.remove(key);
    }

    public boolean has(String keyPrefix) {
        return timers.keySet().stream().anyMatch(k -> k.startsWith(keyPrefix));
    }

    /** Moves time forward, firing due timers in deadline order (timers scheduled meanwhile included). */
    public void advance(long ms) {
        long target = clock.get() + ms;
        while (true) {
            Timer next = timers.values().stream().filter(t -> t.at() <= target)
                    .min(Comparator.comparingLong(Timer::at).thenComparingLong(Timer::seq)).orElse(null);
            if (next == null) {
                break;
            }
            timers.remove(next.key());
            clock.set(Math.max(clock.get(), next.at()));
            next.task().run();
        }
        clock.set(target);
    }

    public List<String> keys() {
        return new ArrayList<>(timers.keySet());
    }
}
