package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several brokers on one shared data directory: takeover after SIGKILL and a standby controller
 * taking over from a killed or frozen one, each within a bound, so this class runs alone
 * ({@code serial-its.txt}; the handoffs between live brokers are {@link BrokerHandoffIT}'s). Every
 * test checks the one guarantee that matters: every acknowledged record is there exactly once, in order.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ClusterIT {
    /** The bound on kill -9 to first acks=all produce on a moved partition (p99). */
    static final long TAKEOVER_BOUND_MS = 5_000;

    @TempDir
    Path tmp;

    static Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
        Map<Integer, Integer> out = new TreeMap<>();
        admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions()
                .forEach(p -> out.put(p.partition(), p.leader() == null ? -1 : p.leader().id()));
        return out;
    }

    static Map<Integer, Long> spread(Map<Integer, Integer> leaders) {
        return leaders.values().stream().collect(Collectors.groupingBy(l -> l, TreeMap::new, Collectors.counting()));
    }

    /** Polls the placement until {@code done} holds for it; every wait bounded. */
    static Map<Integer, Integer> awaitLeaders(Admin admin, String topic, java.util.function.Predicate<Map<Integer, Integer>> done)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Map<Integer, Integer> last = Map.of();
        while (System.nanoTime() < deadline) {
            try {
                last = leaders(admin, topic);
                if (done.test(last)) {
                    return last;
                }
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                // a broker the admin client was talking to went away: ask again
            }
            Thread.sleep(200);
        }
        throw new AssertionError("placement of " + topic + " never satisfied the condition; last seen " + last);
    }

    static Set<Integer> ledBy(Map<Integer, Integer> leaders, int broker) {
        return leaders.entrySet().stream().filter(e -> e.getValue() == broker).map(Map.Entry::getKey).collect(Collectors.toSet());
    }

    @Test
    void killedBrokersPartitionsAreTakenOverInSecondsAndNoAcknowledgedRecordIsLostOrDuplicated() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 3, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("orders", 12, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Map<Integer, Integer> initial = awaitLeaders(admin, "orders", l -> !l.containsValue(-1));
            assertThat(spread(initial)).as("12 partitions on 3 brokers").containsOnlyKeys(1, 2, 3).allSatisfy((b, n) -> assertThat(n).isEqualTo(4));

            List<Long> takeovers = new ArrayList<>();
            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "orders", 12, 600)) {
                ClusterITAcks.await(load, 500);
                for (int victim : new int[] {2, 3}) {
                    Map<Integer, Integer> before = leaders(admin, "orders");
                    Set<Integer> moved = ledBy(before, victim);
                    cluster.killBroker(victim);
                    long t0 = System.nanoTime();
                    long ms = load.awaitTakeover(moved, t0, Duration.ofSeconds(30));
                    takeovers.add(ms);
                    System.out.printf("takeover after kill -9 of broker %d: %d partitions, first ack on every one within %d ms%n",
                            victim, moved.size(), ms);
                    cluster.startBroker(victim);
                    awaitLeaders(admin, "orders", l -> ledBy(l, victim).size() == 4 && !l.containsValue(-1));
                    ClusterITAcks.await(load, load.acked() + 500);
                }
                load.stop();
                load.verify(cluster.clientProps());
                System.out.printf("acknowledged %d records across 2 kill/restart cycles; takeover times %s ms%n", load.acked(), takeovers);
            }
            assertThat(takeovers).allSatisfy(ms -> assertThat(ms).isLessThanOrEqualTo(TAKEOVER_BOUND_MS));
        }
    }

    @Test
    void aStandbyControllerTakesOverAfterTheLeaderIsKilledAndBrokersNeverStopServing() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 2, 2, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("before", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);
            awaitLeaders(admin, "before", l -> !l.containsValue(-1));
            assertThat(cluster.controllerReady(2)).as("the second controller is a standby").isFalse();
            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "before", 4, 300)) {
                ClusterITAcks.await(load, 200);
                cluster.killController(1);
                long t0 = System.nanoTime();
                long deadline = t0 + TimeUnit.SECONDS.toNanos(30);
                while (!cluster.controllerReady(2) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                System.out.printf("standby controller leads %d ms after kill -9 of the leader (lease 5 s)%n", ms);
                assertThat(cluster.controllerReady(2)).isTrue();
                assertThat(ms).as("renew deadline (lease 5 s) + a few seconds").isLessThan(10_000);
                ClusterITAcks.await(load, load.acked() + 200);

                admin.createTopics(List.of(new NewTopic("after", 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
                awaitLeaders(admin, "after", l -> !l.containsValue(-1));
                try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
                    assertThat(p.send(new ProducerRecord<>("after", 1, null, "x")).get(30, TimeUnit.SECONDS).offset()).isZero();
                }
                load.stop();
                load.verify(cluster.clientProps());
            }
        }
    }

    @Test
    void brokersLeaveAFrozenControllerForTheStandbyThatTookItsLease() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 2, 2, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("steady", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            awaitLeaders(admin, "steady", l -> !l.containsValue(-1));
            cluster.freezeController(1);
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.SECONDS.toNanos(30);
            while (!cluster.controllerReady(2) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(cluster.controllerReady(2)).as("the standby took the frozen leader's lease").isTrue();
            System.out.printf("standby leads %d ms after SIGSTOP of the leader%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));

            // The brokers found it by themselves: it places a new topic on them, and moves a dead broker's partitions.
            admin.createTopics(List.of(new NewTopic("after-freeze", 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
            Map<Integer, Integer> placed = awaitLeaders(admin, "after-freeze", l -> !l.containsValue(-1));
            assertThat(placed.values()).containsExactlyInAnyOrder(1, 2);
            cluster.killBroker(2);
            awaitLeaders(admin, "steady", l -> l.values().stream().allMatch(b -> b == 1));

            // The old leader wakes up deposed: it cannot take anything back.
            cluster.thawController(1);
            Thread.sleep(3000);
            assertThat(cluster.controllerReady(1)).isFalse();
            assertThat(cluster.controllerReady(2)).isTrue();
            try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
                assertThat(p.send(new ProducerRecord<>("after-freeze", 0, null, "x")).get(30, TimeUnit.SECONDS).offset()).isZero();
            }
            // Broker 1 left the frozen controller because it stopped answering, and only then: a
            // healthy controller's heartbeats keep brokers where they are.
            long left = Files.readAllLines(cluster.brokerLog(1)).stream().filter(l -> l.contains("trying the next controller")).count();
            assertThat(left).as("broker 1 gave up on a silent controller").isBetween(1L, 3L);
        }
    }
}
