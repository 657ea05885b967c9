package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The request-bytes budget: strict, first come first served, reservations made for waiters as bytes are released. */
class RequestMemoryTest {
    final List<String> woken = new ArrayList<>();

    Runnable waiter(String name) {
        return () -> woken.add(name);
    }

    @Test
    void waitersAreServedInOrderAndANewcomerWaitsBehindThemEvenIfItFits() {
        RequestMemory m = new RequestMemory(10);
        Runnable a = waiter("a");
        Runnable b = waiter("b");
        Runnable c = waiter("c");
        assertThat(m.tryReserve(8, a)).isTrue();
        assertThat(m.tryReserve(6, b)).isFalse();
        assertThat(m.tryReserve(1, c)).as("1 fits, but b came first").isFalse();
        assertThat(m.waiting()).isEqualTo(2);

        m.release(8);

        assertThat(woken).containsExactly("b", "c");
        assertThat(m.reserved()).as("reserved for them before they were woken").isEqualTo(7);
        assertThat(m.tryReserve(1, c)).isTrue();
        assertThat(m.tryReserve(6, b)).isTrue();
        assertThat(m.reserved()).as("nothing twice").isEqualTo(7);
        assertThat(m.waiting()).isZero();
    }

    @Test
    void theFirstWaiterThatDoesNotFitHoldsBackThoseBehindIt() {
        RequestMemory m = new RequestMemory(10);
        assertThat(m.tryReserve(6, waiter("a"))).isTrue();
        assertThat(m.tryReserve(3, waiter("b"))).isTrue();
        Runnable big = waiter("big");
        Runnable small = waiter("small");
        assertThat(m.tryReserve(9, big)).isFalse();
        assertThat(m.tryReserve(1, small)).isFalse();

        m.release(3);
        assertThat(woken).as("7 free, the 9 first in line does not fit: nobody jumps it").isEmpty();
        m.release(6);
        assertThat(woken).containsExactly("big", "small");
        assertThat(m.reserved()).isEqualTo(10);
    }

    /** A woken waiter that never comes back (its connection does not read) holds its own reservation, and nobody else's turn. */
    @Test
    void aWaiterSlowToComeBackHoldsUpNobodyAndItsCloseGivesItsReservationBack() {
        RequestMemory m = new RequestMemory(10);
        Runnable holder = waiter("holder");
        Runnable slow = waiter("slow");
        Runnable next = waiter("next");
        assertThat(m.tryReserve(10, holder)).isTrue();
        assertThat(m.tryReserve(4, slow)).isFalse();
        assertThat(m.tryReserve(4, next)).isFalse();
        m.release(10);
        assertThat(woken).containsExactly("slow", "next");
        assertThat(m.tryReserve(4, next)).isTrue();

        Runnable later = waiter("later");
        assertThat(m.tryReserve(4, later)).as("8 of 10 reserved, slow's among them").isFalse();
        m.cancel(slow);
        assertThat(m.reserved()).isEqualTo(8);
        assertThat(woken).as("slow's bytes went to the next in line").containsExactly("slow", "next", "later");
        assertThat(m.tryReserve(4, later)).isTrue();
    }

    @Test
    void anUnboundedBudgetNeverQueues() {
        RequestMemory m = new RequestMemory(-1);
        for (int i = 0; i < 100; i++) {
            assertThat(m.tryReserve(1 << 30, waiter("x"))).isTrue();
        }
        assertThat(m.waiting()).isZero();
    }
}
