package dev.kaas.broker.protocol;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The broker-wide budget for request bytes being received or handled (Apache
 * {@code queued.max.request.bytes}). A connection reserves a frame's whole size before it
 * allocates the frame's buffer (once the frame has shown it is being sent: {@link FrameDecoder})
 * and keeps it until the request is answered; when the budget cannot cover it, the connection
 * stops reading (Apache "mutes" it) and waits its turn. So clients sending large frames slowly
 * hold at most the budget, never the heap, and every reservation belongs to a frame that can
 * complete.
 *
 * <p>Strict accounting, unlike Apache's pool (which lets the last allocation overshoot): a
 * reservation is granted only when it fits, so {@link #reserved()} never exceeds
 * {@link #capacity()}. That is why the budget must be at least {@code socket.request.max.bytes}
 * (checked at start-up), or a maximum-size frame could never be read.
 *
 * <p>First come, first served: while connections wait, a newcomer waits behind them even if its
 * frame would fit, and released bytes go to the waiters in order, reserved on their behalf
 * before they are woken; the first that does not fit stops the others behind it. So a large
 * frame is never starved by a stream of small ones, and a woken connection that is slow to come
 * back (its answers unread) holds up nobody but itself. (Apache's pool hands freed bytes to
 * whichever muted connection polls first.)
 *
 * <p>Thread-safe: every event loop shares one instance. Wake-ups run on the releasing thread
 * and must only schedule work on their own loop.
 */
public final class RequestMemory {
    private final long capacity;
    private long reserved;
    /** Connections waiting, in arrival order, with the bytes each asked for (one frame at a time per connection). */
    private final Map<Runnable, Integer> waiters = new LinkedHashMap<>();
    /** Bytes reserved for a waiter that has not come back for them yet. */
    private final Map<Runnable, Integer> granted = new HashMap<>();

    /** @param capacity bytes; zero or negative means unbounded (Apache's {@code -1}) */
    public RequestMemory(long capacity) {
        this.capacity = capacity;
    }

    public long capacity() {
        return capacity;
    }

    public synchronized long reserved() {
        return reserved;
    }

    public synchronized int waiting() {
        return waiters.size();
    }

    /**
     * Reserves {@code bytes} if they are this caller's turn and fit (or were reserved for it while
     * it waited); otherwise queues the caller, identified by {@code onAvailable}, which runs once
     * its bytes are reserved (the caller then asks again and gets them), and answers false.
     */
    public synchronized boolean tryReserve(int bytes, Runnable onAvailable) {
        Integer ready = granted.remove(onAvailable);
        if (ready != null) {
            if (ready == bytes) {
                return true;
            }
            // Not what it waited for (cannot happen for one frame at a time): start over.
            reserved -= ready;
        }
        if (capacity <= 0 || (waiters.isEmpty() && reserved + bytes <= capacity)) {
            reserved += bytes;
            return true;
        }
        waiters.putIfAbsent(onAvailable, bytes);
        return false;
    }

    /** Gives back a reservation; the bytes go to the waiters in order, as far as they fit. */
    public void release(int bytes) {
        List<Runnable> wake;
        synchronized (this) {
            reserved -= bytes;
            if (reserved < 0) {
                throw new IllegalStateException("released more request bytes than reserved: " + reserved);
            }
            wake = grant();
        }
        wake.forEach(Runnable::run);
    }

    /** Reserves for the waiters at the head of the queue while they fit; answers whom to wake. */
    private List<Runnable> grant() {
        List<Runnable> wake = new ArrayList<>();
        for (Iterator<Map.Entry<Runnable, Integer>> it = waiters.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Runnable, Integer> next = it.next();
            if (reserved + next.getValue() > capacity) {
                break;
            }
            reserved += next.getValue();
            granted.put(next.getKey(), next.getValue());
            it.remove();
            wake.add(next.getKey());
        }
        return wake;
    }

    /** Forgets a waiter whose connection closed, and gives back what was reserved for it meanwhile. */
    public void cancel(Runnable onAvailable) {
        List<Runnable> wake;
        synchronized (this) {
            waiters.remove(onAvailable);
            Integer unused = granted.remove(onAvailable);
            if (unused != null) {
                reserved -= unused;
            }
            // The queue's head may have been this one, or the bytes it gave back may fit the next.
            wake = grant();
        }
        wake.forEach(Runnable::run);
    }
}
