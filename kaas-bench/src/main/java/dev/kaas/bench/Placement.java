package dev.kaas.bench;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;

/** Who leads which partition of a topic, as the Admin client's DescribeTopics tells it (leader -1: none). */
final class Placement {
    private Placement() {
    }

    /** An Admin client with short timeouts, so one dead or frozen broker costs a poll seconds, not a minute. */
    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "2000");
        p.put("default.api.timeout.ms", "4000");
        return Admin.create(p);
    }

    /**
     * An Admin client for calls that may take minutes (creating thousands of partitions): one
     * request is given the whole {@code timeout}, so a slow CreateTopics is waited for, not sent
     * again (a second attempt would meet TOPIC_ALREADY_EXISTS).
     */
    static Admin patientAdmin(String bootstrap, Duration timeout) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", Long.toString(timeout.toMillis()));
        p.put("default.api.timeout.ms", Long.toString(timeout.toMillis()));
        return Admin.create(p);
    }

    /** Partition to leader id (-1 for none). */
    static Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
        Map<Integer, Integer> out = new TreeMap<>();
        admin.describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS).get(topic).partitions()
                .forEach(p -> out.put(p.partition(), p.leader() == null ? -1 : p.leader().id()));
        return out;
    }

    static Set<Integer> ledBy(Map<Integer, Integer> leaders, int broker) {
        return leaders.entrySet().stream().filter(e -> e.getValue() == broker).map(Map.Entry::getKey).collect(Collectors.toSet());
    }

    /** Every partition led, and brokers 1..{@code brokers} each leading an equal share (within one). */
    static boolean balanced(Map<Integer, Integer> leaders, int brokers) {
        if (leaders.isEmpty() || leaders.containsValue(-1)) {
            return false;
        }
        int floor = leaders.size() / brokers;
        int ceil = (leaders.size() + brokers - 1) / brokers;
        for (int b = 1; b <= brokers; b++) {
            int n = ledBy(leaders, b).size();
            if (n < floor || n > ceil) {
                return false;
            }
        }
        return true;
    }

    /** Broker id to the number of partitions it leads, e.g. {1=4, 2=4, 3=4}. */
    static Map<Integer, Long> spread(Map<Integer, Integer> leaders) {
        return leaders.values().stream().collect(Collectors.groupingBy(l -> l, TreeMap::new, Collectors.counting()));
    }

    /** Polls the placement until {@code done} holds for it; throws with the last placement seen once {@code bound} has passed. */
    static Map<Integer, Integer> await(Admin admin, String topic, Predicate<Map<Integer, Integer>> done, Duration bound) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        Map<Integer, Integer> last = Map.of();
        while (System.nanoTime() < deadline) {
            try {
                last = leaders(admin, topic);
                if (done.test(last)) {
                    return last;
                }
            } catch (Exception e) {
                // a broker the admin client was talking to went away, or the topic is not known yet: ask again
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("placement of " + topic + " not as expected within " + bound + "; last seen " + spread(last));
    }
}
