package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Kafka 3.7.2 consumers in groups against a real standalone kaas. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ConsumerGroupsIT {
    @TempDir
    static Path tmp;

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension();

    static KaasCluster cluster;

    @BeforeAll
    static void up() {
        cluster = kaas.cluster();
    }

    static void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    static void produce(String topic, int partitions, int perPartition, String prefix) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < perPartition; i++) {
                for (int part = 0; part < partitions; part++) {
                    p.send(new ProducerRecord<>(topic, part, null, prefix + part + "-" + i));
                }
            }
            p.flush();
        }
    }

    static Properties consumerProps(String group, String assignor) {
        Properties p = cluster.clientProps();
        p.put("group.id", group);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("session.timeout.ms", "6000");
        p.put("heartbeat.interval.ms", "1000");
        p.put("partition.assignment.strategy", assignor);
        return p;
    }

    /** One group member on its own thread: polls, records (generation, partition, offset), commits synchronously. */
    static final class Member implements AutoCloseable {
        record Seen(String member, int generation, int partition, long offset) {
        }

        final String name;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Seen> seen;
        final List<Collection<TopicPartition>> revoked = new CopyOnWriteArrayList<>();
        final Set<TopicPartition> owned = ConcurrentHashMap.newKeySet();

        Member(String name, String group, String topic, String assignor, List<Seen> seen) {
            this.name = name;
            this.seen = seen;
            this.consumer = new KafkaConsumer<>(consumerProps(group, assignor), new StringDeserializer(), new StringDeserializer());
            this.thread = new Thread(() -> {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        revoked.add(List.copyOf(partitions));
                        owned.removeAll(partitions);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        owned.addAll(partitions);
                    }
                });
                while (!stop.get()) {
                    var records = consumer.poll(Duration.ofMillis(200));
                    int generation = consumer.groupMetadata().generationId();
                    for (ConsumerRecord<String, String> r : records) {
                        seen.add(new Seen(name, generation, r.partition(), r.offset()));
                    }
                    if (!records.isEmpty()) {
                        try {
                            consumer.commitSync(Duration.ofSeconds(10));
                        } catch (RuntimeException e) {
                            // A rebalance can fail the commit; at-least-once redelivery covers it.
                        }
                    }
                }
                consumer.close(Duration.ofSeconds(10));
            }, "member-" + name);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(30_000);
        }
    }

    static ConsumerGroupDescription describe(String group) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            return admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
        }
    }

    static void awaitStableWith(String group, int members) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            ConsumerGroupDescription d = describe(group);
            if (d.state() == ConsumerGroupState.STABLE && d.members().size() == members
                    && d.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty())) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("group " + group + " not stable with " + members + " members: " + describe(group));
    }

    static Map<TopicPartition, Long> committed(String group) throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            Map<TopicPartition, Long> out = new HashMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                    .forEach((tp, o) -> out.put(tp, o.offset()));
            return out;
        }
    }

    static void awaitCommitted(String group, String topic, int partitions, long perPartition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Map<TopicPartition, Long> c = Map.of();
        while (System.nanoTime() < deadline) {
            c = committed(group);
            boolean all = true;
            for (int p = 0; p < partitions; p++) {
                all &= c.getOrDefault(new TopicPartition(topic, p), -1L) == perPartition;
            }
            if (all) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("committed offsets of " + group + ": " + c);
    }

    @Test
    void membersJoinLeaveAndDieWithoutSharingAPartitionInAGeneration() throws Exception {
        String topic = "grouped";
        String group = "g-eager";
        createTopic(topic, 6);
        List<Member.Seen> seen = new CopyOnWriteArrayList<>();
        produce(topic, 6, 100, "a");
        List<Member> members = new ArrayList<>();
        Process killed = null;
        try {
            for (int i = 0; i < 3; i++) {
                members.add(new Member("m" + i, group, topic, "org.apache.kafka.clients.consumer.RangeAssignor", seen));
            }
            awaitStableWith(group, 3);
            awaitCommitted(group, topic, 6, 100);

            members.add(new Member("m3", group, topic, "org.apache.kafka.clients.consumer.RangeAssignor", seen));
            awaitStableWith(group, 4);
            produce(topic, 6, 100, "b");
            awaitCommitted(group, topic, 6, 200);

            members.remove(0).close();
            awaitStableWith(group, 3);
            produce(topic, 6, 100, "c");
            awaitCommitted(group, topic, 6, 300);

            // A member in another process dies without a word: the session timeout removes it.
            killed = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    ShellTools.classpath(), "kafka.tools.ConsoleConsumer", "--bootstrap-server", cluster.bootstrap(), "--topic", topic,
                    "--group", group, "--consumer-property", "session.timeout.ms=6000", "--consumer-property", "enable.auto.commit=false",
                    "--consumer-property",
                    "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor")
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("killed.log").toFile()).start();
            awaitStableWith(group, 4);
            killed.destroyForcibly();
            killed.waitFor(30, TimeUnit.SECONDS);
            awaitStableWith(group, 3);
            produce(topic, 6, 100, "d");
            awaitCommitted(group, topic, 6, 400);
        } finally {
            for (Member m : members) {
                m.close();
            }
            if (killed != null) {
                killed.destroyForcibly();
            }
        }
        Map<String, String> owner = new HashMap<>();
        for (Member.Seen s : seen) {
            String key = s.generation() + "/" + s.partition();
            String previous = owner.putIfAbsent(key, s.member());
            assertThat(previous == null || previous.equals(s.member()))
                    .as("partition %d consumed by %s and %s in generation %d", s.partition(), previous, s.member(), s.generation()).isTrue();
        }
        // At-least-once: the killed member never committed, so everything below the final commit reached a member here.
        Set<String> delivered = new HashSet<>();
        seen.forEach(s -> delivered.add(s.partition() + "/" + s.offset()));
        Map<TopicPartition, Long> finalCommit = committed(group);
        for (int p = 0; p < 6; p++) {
            assertThat(finalCommit.get(new TopicPartition(topic, p))).isEqualTo(400L);
            for (long o = 0; o < 400; o++) {
                assertThat(delivered).as("offset %d of partition %d was delivered", o, p).contains(p + "/" + o);
            }
        }
    }

    /** Waits until the members' own callbacks have handed out {@code partitions} partitions between them, none twice. */
    static void awaitOwned(int partitions, Member... members) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Set<TopicPartition> union = new HashSet<>();
            int total = 0;
            for (Member m : members) {
                union.addAll(m.owned);
                total += m.owned.size();
            }
            if (union.size() == partitions && total == partitions) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("members do not own " + partitions + " partitions between them: "
                + java.util.Arrays.stream(members).map(m -> m.name + "=" + m.owned).toList());
    }

    @Test
    void cooperativeStickyMembersKeepThePartitionsTheyStillOwn() throws Exception {
        String topic = "sticky";
        String group = "g-coop";
        createTopic(topic, 6);
        List<Member.Seen> seen = new CopyOnWriteArrayList<>();
        String assignor = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
        try (Member a = new Member("a", group, topic, assignor, seen); Member b = new Member("b", group, topic, assignor, seen)) {
            awaitStableWith(group, 2);
            // STABLE on the coordinator comes before the members' SyncGroup answers reach onPartitionsAssigned.
            awaitOwned(6, a, b);
            Set<TopicPartition> aBefore = Set.copyOf(a.owned);
            Set<TopicPartition> bBefore = Set.copyOf(b.owned);
            // a may have formed the group alone and given b its share: only what c's join revokes counts below.
            a.revoked.clear();
            b.revoked.clear();
            assertThat(aBefore.size() + bBefore.size()).isEqualTo(6);
            try (Member c = new Member("c", group, topic, assignor, seen)) {
                awaitStableWith(group, 3);
                awaitOwned(6, a, b, c);
                assertThat(c.owned).hasSize(2);
                // Incremental: nobody gave up a partition it kept, only the ones that moved to c.
                for (Member m : List.of(a, b)) {
                    Set<TopicPartition> before = m == a ? aBefore : bBefore;
                    Set<TopicPartition> revokedNow = new HashSet<>();
                    m.revoked.forEach(revokedNow::addAll);
                    assertThat(revokedNow).isSubsetOf(before);
                    assertThat(revokedNow).doesNotContainAnyElementsOf(m.owned);
                    assertThat(m.owned).isSubsetOf(before);
                }
            }
        }
    }

    @Test
    void committedOffsetsSurviveABrokerRestart() throws Exception {
        String topic = "restart-offsets";
        createTopic(topic, 2);
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.alterConsumerGroupOffsets("g-restart", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(7, "seven"),
                    new TopicPartition(topic, 1), new OffsetAndMetadata(3))).all().get(30, TimeUnit.SECONDS);
        }
        cluster.stopBroker();
        cluster.startBroker();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            var offsets = admin.listConsumerGroupOffsets("g-restart").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            assertThat(offsets.get(new TopicPartition(topic, 0))).isEqualTo(new OffsetAndMetadata(7, "seven"));
            assertThat(offsets.get(new TopicPartition(topic, 1)).offset()).isEqualTo(3);
        }
        cluster.killBroker();
        cluster.startBroker();
        assertThat(committed("g-restart")).containsEntry(new TopicPartition(topic, 0), 7L);
    }

    @Test
    void deletingATopicDropsItsCommittedOffsets() throws Exception {
        createTopic("short-lived", 1);
        createTopic("long-lived", 1);
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.alterConsumerGroupOffsets("g-delete", Map.of(new TopicPartition("short-lived", 0), new OffsetAndMetadata(5),
                    new TopicPartition("long-lived", 0), new OffsetAndMetadata(6))).all().get(30, TimeUnit.SECONDS);
            admin.deleteTopics(List.of("short-lived")).all().get(30, TimeUnit.SECONDS);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<TopicPartition, Long> offsets = committed("g-delete");
        while (offsets.containsKey(new TopicPartition("short-lived", 0)) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            offsets = committed("g-delete");
        }
        assertThat(offsets).containsOnlyKeys(new TopicPartition("long-lived", 0));
    }

    /*
     * The data directory's layout, as far as group ids could reach it: __cluster holds a fixed set of names,
     * group files are only slot-NN/fence, slot-NN/fences/<epoch> and slot-NN/<hex-encoded id>.<epoch>.json (transaction slots:
     * state.<epoch>.json, ids never in names; marker requests: <broker>-<uuid>.req/.res), and everything else at the
     * top is a partition directory (<topic>-<topic id>/<partition>/files) or a broker's warm-up directory.
     * Atomic writes may leave a hidden .<name>.tmp-<uuid> for a moment.
     */
    static final java.util.regex.Pattern TMP = java.util.regex.Pattern.compile("\\..+\\.tmp-[0-9a-f-]{36}");
    static final java.util.regex.Pattern LAYOUT = java.util.regex.Pattern.compile(String.join("|",
            "__cluster/(assignment\\.json|controller\\.lock|controller\\.lease|cluster\\.id|link\\.key)",
            "__cluster/catalog/topics\\.json",
            "__cluster/producer_ids/next-block\\.json",
            "__cluster/groups/slot-[0-9]{2}/(fence|fences/[0-9a-f]{8}|[xh][0-9a-f]+\\.[0-9a-f]{8}\\.json)",
            "__cluster/txn_state/slot-[0-9]{2}/(fence|fences/[0-9a-f]{8}|state\\.[0-9a-f]{8}\\.json|journal\\.[0-9a-f]{8}\\.[0-9a-f]{8}\\.log)",
            "__cluster/markers/to-[0-9]+/[0-9]+-[0-9a-f-]{36}\\.(req|res)",
            "(?!__)[a-zA-Z0-9._-]+/[0-9]+/(leader-epochs/)?[^/]+",
            "__warmup-broker-[0-9]+/[0-9]+/(leader-epochs/)?[^/]+"));
    static final java.util.regex.Pattern DIRECTORIES = java.util.regex.Pattern.compile(String.join("|",
            "", "__cluster", "__cluster/(catalog|producer_ids|groups|txn_state|markers)", "__cluster/(groups|txn_state)/slot-[0-9]{2}(/fences)?",
            "__cluster/markers/to-[0-9]+",
            "(?!__)[a-zA-Z0-9._-]+(/[0-9]+(/leader-epochs)?)?", "__warmup-broker-[0-9]+(/[0-9]+(/leader-epochs)?)?"));

    static List<String> outsideTheLayout(Path dataDir) throws Exception {
        try (var all = Files.walk(dataDir)) {
            return all.filter(p -> {
                String rel = dataDir.relativize(p).toString().replace(java.io.File.separatorChar, '/');
                if (Files.isDirectory(p)) {
                    return !DIRECTORIES.matcher(rel).matches();
                }
                return !LAYOUT.matcher(rel).matches() && !TMP.matcher(p.getFileName().toString()).matches();
            }).map(p -> dataDir.relativize(p).toString()).toList();
        }
    }

    @Test
    void hostileGroupIdsStayInsideTheDataDirectory() throws Exception {
        createTopic("hostile", 1);
        // 32767 bytes is the longest string the protocol can carry (a 32 KiB id cannot leave the client).
        // A group file lives at __cluster/groups/slot-NN/<name>: the ../ ids would land in __cluster, the data dir and beside it.
        List<String> ids = List.of("a/b", "..", "../../escape", "../../../escape", "../../../../escape", "nul\0id",
                "grüße-组", "x".repeat(32767));
        try (Admin admin = Admin.create(cluster.clientProps())) {
            for (String id : ids) {
                admin.alterConsumerGroupOffsets(id, Map.of(new TopicPartition("hostile", 0), new OffsetAndMetadata(1)))
                        .all().get(30, TimeUnit.SECONDS);
                assertThat(admin.listConsumerGroupOffsets(id).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
                        .containsEntry(new TopicPartition("hostile", 0), new OffsetAndMetadata(1));
            }
            var unknownTopic = admin.alterConsumerGroupOffsets("g", Map.of(new TopicPartition("no-such-topic", 0), new OffsetAndMetadata(1))).all();
            // Apache: OffsetCommit to a topic the cluster does not have is UNKNOWN_TOPIC_OR_PARTITION.
            assertThat(unknownTopic).failsWithin(30, TimeUnit.SECONDS).withThrowableThat()
                    .withCauseInstanceOf(org.apache.kafka.common.errors.UnknownTopicOrPartitionException.class);
        }
        assertThat(outsideTheLayout(cluster.dataDir())).as("files outside the data directory's layout").isEmpty();
        try (var beside = Files.list(cluster.dataDir().getParent())) {
            String data = cluster.dataDir().getFileName().toString();
            assertThat(beside.map(p -> p.getFileName().toString())).as("beside the data directory")
                    .allMatch(n -> n.equals(data) || n.equals(data + "-logs") || n.endsWith(".log"));
        }
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps("", "org.apache.kafka.clients.consumer.RangeAssignor"),
                new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of("hostile"));
            var thrown = org.assertj.core.api.Assertions.catchThrowable(() -> c.poll(Duration.ofSeconds(5)));
            assertThat(thrown).isInstanceOf(org.apache.kafka.common.errors.InvalidGroupIdException.class);
        }
    }
}
