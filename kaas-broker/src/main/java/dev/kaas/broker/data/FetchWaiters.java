package dev.kaas.broker.data;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;

/**
 * Long-polling fetches parked until one of their partitions' high watermark moves
 * (Apache's fetch purgatory, keyed by partition). A wake-up only re-runs the fetch; the fetch
 * decides whether it now has enough bytes.
 */
@ApplicationScoped
public class FetchWaiters {
    private final Map<TopicPartition, Set<Runnable>> waiting = new ConcurrentHashMap<>();

    public FetchWaiters(Partitions partitions) {
        partitions.onHighWatermark(this::wake);
    }

    public void park(Iterable<TopicPartition> tps, Runnable wake) {
        for (TopicPartition tp : tps) {
            waiting.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(wake);
        }
    }

    public void unpark(Iterable<TopicPartition> tps, Runnable wake) {
        for (TopicPartition tp : tps) {
            Set<Runnable> s = waiting.get(tp);
            if (s != null) {
                s.remove(wake);
            }
        }
    }

    void wake(TopicPartition tp) {
        Set<Runnable> s = waiting.get(tp);
        if (s != null && !s.isEmpty()) {
            for (Runnable r : s.toArray(Runnable[]::new)) {
                r.run();
            }
        }
    }
}
