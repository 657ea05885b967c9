package dev.kaas.broker.storage;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * Runs tasks one at a time, in submission order, on a shared pool: the per-partition writer.
 * Request order on a connection becomes append order on the partition, which idempotent
 * producers with several requests in flight rely on.
 */
public final class SerialExecutor implements Executor {
    private final Executor pool;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final ArrayDeque<Runnable> whenIdle = new ArrayDeque<>();
    private boolean running;
    /** Tasks run since the oldest waiting idle task was queued. */
    private int sinceIdleQueued;

    public SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        enqueue(tasks, task);
    }

    /** An idle task waits for at most this many other tasks, so a queue that never empties cannot starve it. */
    static final int MAX_IDLE_WAIT_TASKS = 64;

    /**
     * Runs {@code task} once the tasks queued ahead of it, and any queued meanwhile, have run
     * (but after at most {@link #MAX_IDLE_WAIT_TASKS} of them): work that batches what queued
     * up (the group commit of the appends before it), on the thread that is already running.
     */
    public void whenIdle(Runnable task) {
        enqueue(whenIdle, task);
    }

    private void enqueue(ArrayDeque<Runnable> queue, Runnable task) {
        synchronized (tasks) {
            queue.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        pool.execute(this::drain);
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (tasks) {
                boolean idleDue = !whenIdle.isEmpty() && (tasks.isEmpty() || sinceIdleQueued >= MAX_IDLE_WAIT_TASKS);
                next = idleDue ? whenIdle.poll() : tasks.poll();
                if (idleDue) {
                    sinceIdleQueued = 0;
                } else if (!whenIdle.isEmpty()) {
                    sinceIdleQueued++;
                }
                if (next == null) {
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                // Tasks complete their own futures; a throw here is a bug, not a reason to stall the partition.
                org.jboss.logging.Logger.getLogger(SerialExecutor.class).error("partition task failed", e);
            }
        }
    }
}
