package dev.kaas.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.model.SlotAssignment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A coordinator's work for a request is charged to that request's time (request_percentage), and only to it. */
class CoordinatorSlotsTest {
    final ExecutorService pool = Executors.newFixedThreadPool(2);
    final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        pool.shutdownNow();
        timers.shutdownNow();
    }

    /** Slots whose shard is named after the slot, opened at once. */
    CoordinatorSlots<String> slots() {
        return new CoordinatorSlots<>("test", pool, timers, new CoordinatorSlots.Lifecycle<>() {
            @Override
            public String open(int slot, int epoch, Scheduler t, Executor executor) {
                return "shard-" + slot;
            }

            @Override
            public void close(String shard) {
            }
        });
    }

    @Test
    void theShardsWorkForARequestIsChargedToIt() throws Exception {
        CoordinatorSlots<String> slots = slots();
        CompletableFuture.allOf(slots.follow(List.of(new SlotAssignment(0, 1, 1)), 1).toArray(CompletableFuture[]::new))
                .get(10, TimeUnit.SECONDS);
        CoordinatorSlots.ShardCall<String, String> work = shard -> {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            return shard;
        };

        RequestContext.Throttle handled = new RequestContext.Throttle(0);
        handled.handling(true);
        CompletableFuture<String> charged;
        try {
            charged = slots.call(0, work);
        } finally {
            handled.handling(false);
        }
        assertThat(charged.get(10, TimeUnit.SECONDS)).isEqualTo("shard-0");
        assertThat(handled.threadNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(20));

        // Called outside any request's handling (a timer, a later stage): nobody is charged.
        long before = handled.threadNanos();
        slots.call(0, work).get(10, TimeUnit.SECONDS);
        assertThat(handled.threadNanos()).isEqualTo(before);
        assertThat(RequestContext.Throttle.handling()).isNull();
    }

    @Test
    void aSlotThatDoesNotAnswerInTimeIsLeftOutOfACallToAll() throws Exception {
        CoordinatorSlots<String> slots = slots();
        CompletableFuture.allOf(slots.follow(List.of(new SlotAssignment(0, 1, 1), new SlotAssignment(1, 1, 1)), 1)
                .toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try {
            // Slot 1's executor is held by a long call
            slots.call(1, shard -> release.await(10, TimeUnit.SECONDS));

            List<String> answered = slots.callAll(shard -> shard, 200).get(5, TimeUnit.SECONDS);

            assertThat(answered).containsExactly("shard-0");
        } finally {
            release.countDown();
        }
    }
}
