package dev.kaas.broker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-partition writer's ordering, and the bound on how long an idle task (the group commit) can wait. */
class SerialExecutorTest {
    private final ArrayDeque<Runnable> pool = new ArrayDeque<>();
    private final SerialExecutor executor = new SerialExecutor(pool::add);
    private final List<String> ran = new ArrayList<>();

    private void runPool() {
        Runnable r;
        while ((r = pool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void tasksRunInSubmissionOrderAndAnIdleTaskAfterTheQueueEmpties() {
        executor.execute(() -> {
            ran.add("a");
            executor.whenIdle(() -> ran.add("idle"));
            executor.execute(() -> ran.add("c"));
        });
        executor.execute(() -> ran.add("b"));
        assertThat(pool).as("one drain at a time").hasSize(1);

        runPool();

        assertThat(ran).containsExactly("a", "b", "c", "idle");
    }

    @Test
    void anIdleTaskOnAnIdleExecutorStartsADrain() {
        executor.whenIdle(() -> ran.add("idle"));
        runPool();
        assertThat(ran).containsExactly("idle");
    }

    @Test
    void aQueueThatNeverEmptiesCannotStarveAnIdleTask() {
        // Every task submits the next (a producer that never waits, as acks=0): the queue is never empty.
        int[] left = {1_000};
        Runnable[] self = new Runnable[1];
        self[0] = () -> {
            ran.add("task");
            if (--left[0] > 0) {
                executor.execute(self[0]);
            }
        };
        executor.execute(() -> {
            executor.whenIdle(() -> ran.add("idle"));
            executor.execute(self[0]);
        });

        runPool();

        assertThat(ran.indexOf("idle")).as("ran after at most %d other tasks", SerialExecutor.MAX_IDLE_WAIT_TASKS)
                .isBetween(1, SerialExecutor.MAX_IDLE_WAIT_TASKS);
        assertThat(ran).hasSize(1_001);
    }
}
