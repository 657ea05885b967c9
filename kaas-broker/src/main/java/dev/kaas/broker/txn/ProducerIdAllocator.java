package dev.kaas.broker.txn;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.cluster.ControllerAdmin;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;

/**
 * Hands out producer IDs from blocks the controller made durable, so no ID is ever reused,
 * across restarts of any process. Non-blocking: a request that finds the block empty waits
 * on the next block's future.
 */
@ApplicationScoped
public class ProducerIdAllocator {
    private final ControllerAdmin controller;
    private final ClusterView view;
    private long next;
    private long end;
    private CompletableFuture<Void> refill;

    public ProducerIdAllocator(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    public synchronized CompletableFuture<Long> nextId() {
        if (next < end) {
            return CompletableFuture.completedFuture(next++);
        }
        if (refill == null) {
            CompletableFuture<Void> r = controller.allocateProducerIds(view.brokerId()).thenAccept(block -> {
                synchronized (this) {
                    next = block.getFirst();
                    end = block.getFirst() + block.getSize();
                    refill = null;
                }
            });
            r.whenComplete((v, e) -> {
                if (e != null) {
                    synchronized (this) {
                        refill = null;
                    }
                }
            });
            refill = r;
        }
        return refill.thenCompose(v -> nextId());
    }
}
