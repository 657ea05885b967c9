package dev.kaas.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller's REST admin API (src/docs/rest-api.md) against real processes: every endpoint's
 * answer and errors, consumer lag after a known workload, a drain under produce load with no
 * client error, and the credentials gate (401, 403, rotation, standby).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RestApiIT {
    @TempDir
    Path tmp;

    private static RequestSpecification api(int port) {
        return given().baseUri("http://127.0.0.1").port(port).basePath("/api/v1").accept(ContentType.JSON);
    }

    /** Polls {@code get} (a GET under /api/v1 answering 200) until {@code done}; fails after {@code bound}. */
    private static JsonPath await(int port, String path, Predicate<JsonPath> done, Duration bound) throws InterruptedException {
        return await(port, path, done, bound, () -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    /** As {@link #await(int, String, Predicate, Duration)}, running {@code between} (bounded) between polls. */
    private static JsonPath await(int port, String path, Predicate<JsonPath> done, Duration bound, Runnable between) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        JsonPath last = null;
        while (System.nanoTime() < deadline) {
            var r = api(port).get(path);
            if (r.statusCode() == 200) {
                last = r.jsonPath();
                if (done.test(last)) {
                    return last;
                }
            }
            between.run();
        }
        throw new AssertionError("GET " + path + " did not reach the expected state within " + bound + "; last: "
                + (last == null ? "no 200" : last.prettify()));
    }

    @Test
    void everyEndpointAnswersFromTheRunningClusterAndADrainMovesEverythingWithoutAClientError() throws Exception {
        Map<String, String> brokerProps = Map.of("kaas.metrics.stats-interval", "200ms");
        // HTTPS next to plain HTTP, with Quarkus's own keys (rest-api.md#tls), a certificate of a test authority.
        dev.kaas.broker.auth.TestCerts certs = dev.kaas.broker.auth.TestCerts.authority(tmp.resolve("certs"));
        Path restStore = certs.issue("rest", "CN=kaas-rest", "PKCS12");
        int httpsPort = KaasCluster.freePort();
        Map<String, String> controllerProps = Map.of("quarkus.http.ssl-port", Integer.toString(httpsPort),
                "quarkus.http.ssl.certificate.key-store-file", restStore.toString(),
                "quarkus.http.ssl.certificate.key-store-password", dev.kaas.broker.auth.TestCerts.PASSWORD);
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 2, 1, brokerProps, controllerProps)) {
            int port = cluster.controllerHttpPort(1);

            // Over HTTPS, the certificate checked against the authority that signed it (as ./kaas status does with KAAS_REST_CA).
            java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
            try (var in = Files.newInputStream(certs.truststore())) {
                trust.load(in, dev.kaas.broker.auth.TestCerts.PASSWORD.toCharArray());
            }
            var tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            var tls = javax.net.ssl.SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            var https = java.net.http.HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(10)).build();
            var secure = https.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("https://127.0.0.1:" + httpsPort + "/api/v1/cluster"))
                    .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(secure.statusCode()).isEqualTo(200);
            assertThat(JsonPath.from(secure.body()).getBoolean("controller.leader")).isTrue();

            JsonPath c = await(port, "/cluster", j -> j.getList("brokers").size() == 2, Duration.ofSeconds(30));
            assertThat(c.getBoolean("controller.leader")).isTrue();
            assertThat(c.getString("lease.holder")).isEqualTo(c.getString("controller.holder"));
            assertThat(c.getLong("controller.epoch")).isEqualTo(c.getLong("lease.epoch"));
            assertThat(c.getList("brokers.alive", Boolean.class)).containsOnly(true);
            assertThat(c.getList("brokers.collect { it.endpoints[0].port }", Integer.class)).containsExactly(cluster.kafkaPort(1), cluster.kafkaPort(2));

            // Create: the Kafka API's validation and errors, as JSON with REST status codes.
            api(port).contentType(ContentType.JSON).body(Map.of("name", "orders", "partitions", 4, "configs", Map.of("retention.ms", "86400000")))
                    .post("/topics").then().statusCode(201).header("Location", containsString("/api/v1/topics/orders"))
                    .body("name", equalTo("orders")).body("partitions.size()", equalTo(4)).body("configs.'retention.ms'", equalTo("86400000"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "orders", "partitions", 1))
                    .post("/topics").then().statusCode(409).body("code", equalTo("TOPIC_ALREADY_EXISTS"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "bad-config", "configs", Map.of("retention.ms", "soon")))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_CONFIG"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "bad-config", "configs", Map.of("no.such.config", "1")))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_CONFIG"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "zero", "partitions", 0))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_PARTITIONS"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "rf", "replicationFactor", 0))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_REPLICATION_FACTOR"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "a/b"))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_TOPIC_EXCEPTION"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", "__consumer_offsets"))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_TOPIC_EXCEPTION"));
            api(port).contentType(ContentType.JSON).body(Map.of("partitions", 1))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_REQUEST"));
            api(port).contentType(ContentType.JSON).body("{\"name\": ")
                    .post("/topics").then().statusCode(400).body("code", equalTo("BAD_REQUEST"));
            api(port).contentType(ContentType.JSON).body("{\"name\": \"typed\", \"partitions\": \"four\"}")
                    .post("/topics").then().statusCode(400).body("code", equalTo("BAD_REQUEST"));
            api(port).contentType(ContentType.JSON).body(Map.of("name", ""))
                    .post("/topics").then().statusCode(400).body("code", equalTo("INVALID_TOPIC_EXCEPTION"));
            // Open to local processes only: not to another site's page, nor to a name re-bound to loopback.
            api(port).header("Origin", "https://evil.example").post("/brokers/2/drain").then().statusCode(403).body("code", equalTo("FORBIDDEN"));
            api(port).header("Host", "evil.example").get("/cluster").then().statusCode(403);
            api(port).contentType(ContentType.JSON).body(Map.of("name", "dry-run", "partitions", 2, "validateOnly", true))
                    .post("/topics").then().statusCode(200).body("name", equalTo("dry-run"));
            api(port).get("/topics").then().statusCode(200).body("name", hasItem("orders")).body("name", not(hasItem("dry-run")));
            api(port).get("/topics/nope").then().statusCode(404).body("code", equalTo("UNKNOWN_TOPIC_OR_PARTITION"));
            api(port).get("/no/such/thing").then().statusCode(404).body("code", equalTo("NOT_FOUND"));

            await(port, "/topics/orders", j -> !j.getList("partitions.leader", Integer.class).contains(-1), Duration.ofSeconds(30));

            // A known workload: 40 records, a group that committed 25 of them: lag 15.
            try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < 40; i++) {
                    p.send(new ProducerRecord<>("orders", i % 4, null, "r" + i));
                }
                p.flush();
            }
            Properties cp = cluster.clientProps();
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, "lag-group");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
                // 10 on each partition; committed 7, 6, 6, 6.
                consumer.commitSync(Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(7), new TopicPartition("orders", 1),
                        new OffsetAndMetadata(6), new TopicPartition("orders", 2), new OffsetAndMetadata(6), new TopicPartition("orders", 3),
                        new OffsetAndMetadata(6)), Duration.ofSeconds(30));
            }
            JsonPath topic = await(port, "/topics/orders",
                    j -> j.getList("partitions.logEndOffset", Long.class).stream().allMatch(o -> o != null && o == 10), Duration.ofSeconds(30));
            assertThat(topic.getList("partitions.logStartOffset", Long.class)).containsOnly(0L);
            assertThat(topic.getList("partitions.sizeBytes", Long.class)).allSatisfy(s -> assertThat(s).isPositive());
            JsonPath group = await(port, "/groups/lag-group", j -> Long.valueOf(15).equals(j.getObject("totalLag", Long.class)), Duration.ofSeconds(30));
            assertThat(group.getList("offsets.lag", Long.class)).containsExactly(3L, 4L, 4L, 4L);
            assertThat(group.getList("offsets.committedOffset", Long.class)).containsExactly(7L, 6L, 6L, 6L);
            assertThat(group.getString("state")).isEqualTo("Empty");
            api(port).get("/groups").then().statusCode(200).body("groupId", hasItem("lag-group"));
            // A member of a subscribed group, with the partitions the group's leader gave it.
            Properties mp = cluster.clientProps();
            mp.put(ConsumerConfig.GROUP_ID_CONFIG, "member-group");
            mp.put(ConsumerConfig.CLIENT_ID_CONFIG, "rest-member");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(mp, new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of("orders"));
                JsonPath members = await(port, "/groups/member-group", j -> "Stable".equals(j.getString("state"))
                        && j.getList("memberList").size() == 1, Duration.ofSeconds(60), () -> consumer.poll(Duration.ofMillis(100)));
                assertThat(members.getInt("members")).isEqualTo(1);
                assertThat(members.getString("memberList[0].clientId")).isEqualTo("rest-member");
                assertThat(members.getString("memberList[0].clientHost")).isEqualTo("/127.0.0.1");
                assertThat(members.getString("memberList[0].memberId")).startsWith("rest-member-");
                assertThat(members.getMap("memberList[0]")).doesNotContainKey("groupInstanceId");
                assertThat(members.getList("memberList[0].assignment.orders", Integer.class)).containsExactly(0, 1, 2, 3);
            }
            api(port).get("/groups/nobody").then().statusCode(404).body("code", equalTo("GROUP_ID_NOT_FOUND"));

            JsonPath a = api(port).get("/assignment").then().statusCode(200).extract().jsonPath();
            assertThat(a.getList("brokers", Integer.class)).containsExactly(1, 2);
            assertThat(a.getList("groupSlots")).hasSize(50);
            assertThat(a.getMap("$")).doesNotContainKeys("scramUsers", "acls", "clientQuotas", "brokerConfigs");

            // Drain broker 2 under load: every partition and slot leaves it, no send fails, and a group
            // whose coordinator was broker 2 keeps consuming and committing without an error.
            api(port).contentType(ContentType.JSON).body(Map.of("name", "moving", "partitions", 6)).post("/topics").then().statusCode(201);
            await(port, "/topics/moving", j -> !j.getList("partitions.leader", Integer.class).contains(-1), Duration.ofSeconds(30));
            String movingGroup = groupCoordinatedBy(api(port).get("/assignment").then().statusCode(200).extract().jsonPath(), 2);
            try (ProduceLoad load = new ProduceLoad(cluster.clientProps(), "moving", 6, 200);
                 DrainedGroup consumers = new DrainedGroup(cluster.clientProps(), movingGroup, "moving")) {
                ClusterITAcks.await(load, 100);
                consumers.awaitConsumedMoreThan(0);
                api(port).post("/brokers/2/drain").then().statusCode(202).body("id", equalTo(2)).body("drained", equalTo(true));
                long t0 = System.nanoTime();
                JsonPath idle = await(port, "/brokers/2", j -> j.getBoolean("idle"), Duration.ofSeconds(60));
                assertThat(idle.getInt("owns.partitions") + idle.getInt("owns.groupSlots") + idle.getInt("owns.txnSlots")
                        + idle.getInt("handingOff")).isZero();
                System.out.printf("drain of broker 2: it owns nothing after %d ms%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                long consumedAtIdle = consumers.consumed();
                ClusterITAcks.await(load, load.acked() + 100);
                consumers.awaitConsumedMoreThan(consumedAtIdle);
                load.stop();
                load.verify(cluster.clientProps());
                consumers.stop();
                assertThat(consumers.errors()).as("errors the group's consumer saw").isEmpty();
            }
            JsonPath drained = api(port).get("/assignment").then().statusCode(200).extract().jsonPath();
            assertThat(drained.getList("drained", Integer.class)).containsExactly(2);
            assertThat(drained.getList("topics.collect { it.partitions.collect { p -> p.leader } }.flatten()", Integer.class)).containsOnly(1);
            api(port).get("/brokers/2").then().statusCode(200).body("alive", equalTo(true)).body("drained", equalTo(true));
            api(port).post("/brokers/1/drain").then().statusCode(409).body("code", equalTo("INVALID_REQUEST"));
            api(port).post("/brokers/9/drain").then().statusCode(404).body("code", equalTo("BROKER_NOT_AVAILABLE"));
            api(port).delete("/brokers/2/drain").then().statusCode(200).body("drained", equalTo(false));
            await(port, "/brokers/2", j -> j.getInt("owns.partitions") > 0, Duration.ofSeconds(60));

            api(port).delete("/topics/orders").then().statusCode(204);
            api(port).delete("/topics/orders").then().statusCode(404).body("code", equalTo("UNKNOWN_TOPIC_OR_PARTITION"));

            // The OpenAPI document names every endpoint; the Swagger UI is served.
            String openapi = given().baseUri("http://127.0.0.1").port(port).get("/q/openapi").then().statusCode(200).extract().asString();
            Path kept = KaasCluster.ROOT.resolve("src/docs/rest-api.openapi.yaml");
            Path served = KaasCluster.ROOT.resolve("integration-tests/target/rest-api.openapi.served.yaml");
            if (!openapi.equals(Files.readString(kept))) {
                // What the controller serves, for whoever changed the API to copy over once they have read the difference.
                Files.writeString(served, openapi);
            }
            assertThat(openapi).as("the OpenAPI document kept in %s is what the controller serves (%s); refresh it with"
                    + " curl -s http://127.0.0.1:9094/q/openapi > src/docs/rest-api.openapi.yaml (a standalone controller)", kept, served)
                    .isEqualTo(Files.readString(kept));
            for (String path : List.of("/api/v1/cluster:", "/api/v1/topics:", "/api/v1/topics/{name}:", "/api/v1/groups:",
                    "/api/v1/groups/{id}:", "/api/v1/brokers/{id}:", "/api/v1/brokers/{id}/drain:", "/api/v1/assignment:")) {
                assertThat(openapi).contains(path);
            }
            given().baseUri("http://127.0.0.1").port(port).redirects().follow(true).get("/q/swagger-ui/").then().statusCode(200);
        }
    }

    @Test
    void credentialsGateEveryCallAndAStandbyPointsAtTheLeader() throws Exception {
        Path credentials = tmp.resolve("rest-credentials");
        Files.writeString(credentials, """
                # kaas REST credentials
                token admin first-admin-token
                token read-only viewer-token
                basic admin ops s3cret
                """);
        Map<String, String> controllerProps = new HashMap<>();
        controllerProps.put("kaas.rest.credentials-file", credentials.toString());
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 0, 2, Map.of(), controllerProps)) {
            int port = cluster.controllerHttpPort(1);
            var refused = api(port).get("/cluster");
            refused.then().statusCode(401).body("code", equalTo("UNAUTHORIZED"));
            assertThat(refused.headers().getValues("WWW-Authenticate")).anyMatch(h -> h.startsWith("Bearer"))
                    .anyMatch(h -> h.startsWith("Basic"));
            api(port).get("/no/such/thing").then().statusCode(401);
            api(port).header("Authorization", "Bearer wrong").get("/cluster").then().statusCode(401);
            api(port).auth().preemptive().basic("ops", "wrong").get("/cluster").then().statusCode(401);
            api(port).header("Authorization", "Bearer viewer-token").get("/cluster").then().statusCode(200).body("controller.leader", equalTo(true));
            api(port).header("Authorization", "Bearer viewer-token").contentType(ContentType.JSON).body(Map.of("name", "t"))
                    .post("/topics").then().statusCode(403).body("code", equalTo("FORBIDDEN"));
            api(port).header("Authorization", "Bearer viewer-token").delete("/topics/t").then().statusCode(403);
            api(port).header("Authorization", "Bearer first-admin-token").contentType(ContentType.JSON).body(Map.of("name", "t"))
                    .post("/topics").then().statusCode(201);
            api(port).auth().preemptive().basic("ops", "s3cret").get("/topics").then().statusCode(200).body("name", hasItem("t"));
            // Health and metrics stay open: probes and scrapers carry no credentials.
            given().baseUri("http://127.0.0.1").port(port).get("/q/health/ready").then().statusCode(200);

            // A standby answers who leads, and refuses the leader's work.
            int standby = cluster.controllerHttpPort(2);
            api(standby).header("Authorization", "Bearer viewer-token").get("/cluster").then().statusCode(200)
                    .body("controller.leader", equalTo(false)).body("lease.holder", containsString("controller-1"));
            api(standby).header("Authorization", "Bearer viewer-token").get("/topics").then().statusCode(503)
                    .body("code", equalTo("NOT_CONTROLLER")).body("message", containsString("controller-1"));

            // A rotated Secret: the old token stops working, the new one works, without a restart.
            Files.writeString(credentials.resolveSibling("rest-credentials.tmp"), "token admin second-admin-token\n");
            Files.move(credentials.resolveSibling("rest-credentials.tmp"), credentials, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (api(port).header("Authorization", "Bearer second-admin-token").get("/cluster").statusCode() != 200
                    && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            api(port).header("Authorization", "Bearer second-admin-token").get("/cluster").then().statusCode(200);
            api(port).header("Authorization", "Bearer first-admin-token").get("/cluster").then().statusCode(401);
        }
    }

    /** A group id whose coordinator slot ({@code abs(hashCode) % 50}, as Apache's) broker {@code broker} owns in {@code assignment}. */
    static String groupCoordinatedBy(JsonPath assignment, int broker) {
        for (int i = 0; ; i++) {
            String id = "drained-group-" + i;
            int slot = org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % 50;
            Integer owner = assignment.getObject("groupSlots.find { it.slot == " + slot + " }.broker", Integer.class);
            if (owner != null && owner == broker) {
                return id;
            }
            assertThat(i).as("a group id coordinated by broker %d", broker).isLessThan(10_000);
        }
    }

    /**
     * A subscribed consumer group member that polls and commits what it read, on its own thread,
     * as an application does; what it throws, except a retriable exception (which the next round
     * retries), is collected.
     */
    static final class DrainedGroup implements AutoCloseable {
        private final java.util.concurrent.atomic.AtomicLong consumed = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
        private final Thread thread;

        DrainedGroup(Properties clientProps, String groupId, String topic) {
            Properties p = new Properties();
            p.putAll(clientProps);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            thread = new Thread(() -> {
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                    c.subscribe(List.of(topic));
                    while (!stopping.get()) {
                        try {
                            int n = c.poll(Duration.ofMillis(100)).count();
                            if (n > 0) {
                                c.commitSync(Duration.ofSeconds(30));
                                consumed.addAndGet(n);
                            }
                        } catch (org.apache.kafka.common.errors.RetriableException e) {
                            // The next round retries, as the client's own retries would.
                        } catch (RuntimeException e) {
                            errors.add(e);
                        }
                    }
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }, "drained-group");
            thread.setDaemon(true);
            thread.start();
        }

        long consumed() {
            return consumed.get();
        }

        List<Throwable> errors() {
            return List.copyOf(errors);
        }

        void awaitConsumedMoreThan(long n) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> consumed.get() > n || !errors.isEmpty());
            assertThat(errors).as("errors the group's consumer saw").isEmpty();
        }

        void stop() throws InterruptedException {
            stopping.set(true);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(thread.isAlive()).as("the group's consumer stopped").isFalse();
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }
}
