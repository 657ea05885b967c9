package dev.kaas.controller.kube;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs Kubernetes API calls with a deadline the caller can rely on. fabric8 waits for a response
 * without a bound of its own (measured: a GET to an API server that went away mid-connection
 * waited over 30 s despite a 2 s request timeout), and the controller loop that makes these calls
 * must keep its lease schedule: a renewal that cannot finish before the step-down point is worth
 * nothing. A call past its deadline is abandoned on its thread; while too many are abandoned,
 * new calls fail at once instead of piling threads up.
 */
final class BoundedCalls implements AutoCloseable {
    private static final int MAX_ABANDONED = 16;

    private final AtomicInteger running = new AtomicInteger();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "kaas-kubernetes-call");
        t.setDaemon(true);
        return t;
    });

    @FunctionalInterface
    interface Call<T> {
        T run() throws IOException;
    }

    <T> T within(long timeoutMs, String what, Call<T> call) throws IOException {
        if (running.get() >= MAX_ABANDONED) {
            throw new IOException(what + ": " + running.get() + " Kubernetes API calls are still waiting for an answer");
        }
        running.incrementAndGet();
        Callable<T> task = () -> {
            try {
                return call.run();
            } finally {
                running.decrementAndGet();
            }
        };
        Future<T> result;
        try {
            result = threads.submit(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            running.decrementAndGet();
            throw new IOException(what + ": the Kubernetes binding is closed", e);
        }
        try {
            return result.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IOException(what + ": no answer from the Kubernetes API within " + timeoutMs + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(what + ": interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(what + ": " + cause, cause);
        }
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}
