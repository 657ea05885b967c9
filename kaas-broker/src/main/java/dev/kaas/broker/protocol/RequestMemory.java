package dev.kaas.broker.protocol;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The broker-wide budget for request bytes being received or handled (Apache
 * {@code queued.max.request.bytes}). A connection reserves a frame's whole size before it
 * allocates the frame's buffer (once the frame has shown it is being sent: {@link FrameDecoder})
 * and keeps it until the request is answered; when the budget cannot cover it, the connection
 * stops reading (Apache "mutes" it) and is woken when another request releases its bytes. So
 * clients sending large frames slowly hold at most the budget, never the heap, and every
 * reservation belongs to a frame that can complete.
 *
 * <p>Strict accounting, unlike Apache's pool (which lets the last allocation overshoot): a
 * reservation is granted only when it fits, so {@link #reserved()} never exceeds
 * {@link #capacity()}. That is why the budget must be at least {@code socket.request.max.bytes}
 * (checked at start-up), or a maximum-size frame could never be read.
 *
 * <p>Thread-safe: every event loop shares one instance. Wake-ups run on the releasing thread
 * and must only schedule work on their own loop.
 */
public final class RequestMemory {
    private final long capacity;
    private long reserved;
    private final Set<Runnable> waiters = new LinkedHashSet<>();

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
     * Reserves {@code bytes} if they fit; otherwise registers {@code onAvailable} to run once
     * when bytes are released (the caller then tries again) and answers false.
     */
    public synchronized boolean tryReserve(int bytes, Runnable onAvailable) {
        if (capacity <= 0 || reserved + bytes <= capacity) {
            reserved += bytes;
            return true;
        }
        waiters.add(onAvailable);
        return false;
    }

    /** Gives back a reservation and wakes every waiter, since any of them may fit now. */
    public void release(int bytes) {
        List<Runnable> wake;
        synchronized (this) {
            reserved -= bytes;
            if (reserved < 0) {
                throw new IllegalStateException("released more request bytes than reserved: " + reserved);
            }
            if (waiters.isEmpty()) {
                return;
            }
            wake = new ArrayList<>(waiters);
            waiters.clear();
        }
        wake.forEach(Runnable::run);
    }

    /** Forgets a waiter whose connection closed. */
    public synchronized void cancel(Runnable onAvailable) {
        waiters.remove(onAvailable);
    }
}
