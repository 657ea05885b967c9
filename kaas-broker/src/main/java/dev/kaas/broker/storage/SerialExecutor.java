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

    public SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (tasks) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        pool.execute(this::drain);
    }

    /**
     * Runs {@code task} in this executor's order once every task submitted so far, and any
     * submitted meanwhile, has run: work that batches what queued up (the group commit of the
     * appends before it), on the thread that is already running.
     */
    public void whenIdle(Runnable task) {
        synchronized (tasks) {
            whenIdle.add(task);
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
                next = tasks.poll();
                if (next == null) {
                    next = whenIdle.poll();
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
