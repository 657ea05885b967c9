package dev.kaas.broker.group;

/**
 * Timers of a coordinator shard, keyed so a later schedule replaces an earlier one. The runtime
 * runs each task on the shard's own thread; tests use a mock that fires as they advance time.
 */
public interface Scheduler {
    void schedule(String key, long delayMs, Runnable task);

    void cancel(String key);
}
