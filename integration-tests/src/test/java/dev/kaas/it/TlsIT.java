package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.auth.TestCerts;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS listeners configured as an Apache 3.7 broker's: one broker with a PLAINTEXT listener, an
 * SSL one (server authentication) and an SSL one requiring client certificates, the Java
 * clients 3.7.2 over each, Fetch at every version over TLS (records through the heap, not
 * sendfile), and a keystore replaced in place taken for new connections.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TlsIT {
    @TempDir
    static Path tmp;
    static TestCerts ca;
    static Path brokerStore;
    static Path aliceStore;
    static KaasCluster cluster;
    static int sslPort;
    static int mtlsPort;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCerts.authority(tmp.resolve("certs"));
        brokerStore = ca.issue("broker", "CN=localhost,O=kaas", "PKCS12");
        aliceStore = ca.issue("alice", "CN=alice,OU=clients,O=kaas", "PKCS12");
        Map<String, String> props = new HashMap<>();
        props.put("kaas.broker.listener-security-protocol-map", "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL");
        props.put("ssl.keystore.type", "PKCS12");
        props.put("ssl.keystore.location", brokerStore.toString());
        props.put("ssl.keystore.password", TestCerts.PASSWORD);
        props.put("ssl.key.password", TestCerts.PASSWORD);
        // Only the MTLS listener asks for client certificates, with its own truststore (Apache's per-listener prefix).
        props.put("listener.name.mtls.ssl.client.auth", "required");
        props.put("listener.name.mtls.ssl.truststore.type", "PKCS12");
        props.put("listener.name.mtls.ssl.truststore.location", ca.truststore().toString());
        props.put("listener.name.mtls.ssl.truststore.password", TestCerts.PASSWORD);
        props.put("kaas.broker.ssl-reload-interval", "300ms");
        for (int attempt = 1; cluster == null; attempt++) {
            int plain = KaasCluster.freePort();
            sslPort = KaasCluster.freePort();
            mtlsPort = KaasCluster.freePort();
            String listeners = "PLAINTEXT://127.0.0.1:" + plain + ",SSL://127.0.0.1:" + sslPort + ",MTLS://127.0.0.1:" + mtlsPort;
            try {
                cluster = KaasCluster.startWithListeners(tmp.resolve("data-" + attempt), listeners, listeners, props);
            } catch (KaasCluster.PortInUse e) {
                if (attempt == KaasCluster.BIND_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Properties ssl(int port, Path keystore) {
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:" + port);
        p.put("security.protocol", "SSL");
        p.put("ssl.truststore.type", "PKCS12");
        p.put("ssl.truststore.location", ca.truststore().toString());
        p.put("ssl.truststore.password", TestCerts.PASSWORD);
        if (keystore != null) {
            p.put("ssl.keystore.type", "PKCS12");
            p.put("ssl.keystore.location", keystore.toString());
            p.put("ssl.keystore.password", TestCerts.PASSWORD);
            p.put("ssl.key.password", TestCerts.PASSWORD);
        }
        return p;
    }

    static List<String> produce(Properties props, String topic, int n) throws Exception {
        List<String> sent = new ArrayList<>();
        props.put("compression.type", "lz4");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                String v = topic + "-" + i + "-" + "x".repeat(i % 300);
                p.send(new ProducerRecord<>(topic, 0, "k" + i, v));
                sent.add(v);
            }
            p.flush();
        }
        return sent;
    }

    static List<String> consume(Properties props, String topic, int n) {
        props.put("check.crcs", "true");
        List<String> seen = new ArrayList<>();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen.size() < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                }
            }
        }
        return seen;
    }

    @Test
    void javaClientsProduceAndConsumeOverTlsAndWithClientCertificates() throws Exception {
        try (Admin admin = Admin.create(ssl(sslPort, null))) {
            admin.createTopics(List.of(new NewTopic("over-tls", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).singleElement()
                    .satisfies(n -> assertThat(n.port()).as("Metadata over the SSL listener advertises it").isEqualTo(sslPort));
        }
        List<String> sent = produce(ssl(sslPort, null), "over-tls", 2_000);

        assertThat(consume(ssl(sslPort, null), "over-tls", sent.size())).containsExactlyElementsOf(sent);
        assertThat(consume(ssl(mtlsPort, aliceStore), "over-tls", sent.size())).containsExactlyElementsOf(sent);
        assertThat(consume(cluster.clientProps(), "over-tls", sent.size())).as("the same records over PLAINTEXT").containsExactlyElementsOf(sent);
    }

    @Test
    void withoutAClientCertificateTheMtlsListenerRefusesTheHandshake() {
        Properties noCertificate = ssl(mtlsPort, null);
        noCertificate.put("request.timeout.ms", "10000");
        noCertificate.put("default.api.timeout.ms", "15000");
        try (Admin admin = Admin.create(noCertificate)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SslAuthenticationException.class);
        }
    }

    @Test
    void fetchAtEveryVersionOverTlsReadsWhatWasWritten() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("tls-matrix", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        List<String> sent = produce(cluster.clientProps(), "tls-matrix", 300);
        // Then about 400 KiB that lz4 cannot shrink: each response spans several of the 128 KiB chunks a TLS fetch is sent in.
        java.util.Random random = new java.util.Random(7);
        Properties big = cluster.clientProps();
        big.put("compression.type", "lz4");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(big, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 100; i++) {
                byte[] raw = new byte[3000];
                random.nextBytes(raw);
                String v = java.util.Base64.getEncoder().encodeToString(raw);
                p.send(new ProducerRecord<>("tls-matrix", 0, "big" + i, v));
                sent.add(v);
            }
            p.flush();
        }
        Uuid topicId;
        try (Admin admin = Admin.create(cluster.clientProps())) {
            topicId = admin.describeTopics(List.of("tls-matrix")).allTopicNames().get(30, TimeUnit.SECONDS).get("tls-matrix").topicId();
        }
        try (RawClient c = new RawClient(tlsSocket(sslPort))) {
            for (short v = 0; v <= ApiKeys.FETCH.latestVersion(); v++) {
                var req = new FetchRequestData().setMaxWaitMs(100).setMinBytes(1).setMaxBytes(1 << 22).setSessionEpoch(-1);
                var topic = new FetchRequestData.FetchTopic();
                if (v >= 13) {
                    topic.setTopicId(topicId);
                } else {
                    topic.setTopic("tls-matrix");
                }
                topic.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 22));
                req.topics().add(topic);
                if (v < 15) {
                    req.setReplicaId(-1);
                }
                var r = (FetchResponse) c.send(ApiKeys.FETCH, v, req);
                var pd = r.data().responses().get(0).partitions().get(0);
                assertThat(Errors.forCode(pd.errorCode())).as("fetch v%d", v).isEqualTo(Errors.NONE);
                List<String> values = new ArrayList<>();
                for (RecordBatch b : ((MemoryRecords) pd.records()).batches()) {
                    b.ensureValid();
                    for (Record rec : b) {
                        values.add(StandardCharsets.UTF_8.decode(rec.value()).toString());
                    }
                }
                assertThat(values).as("fetch v%d over TLS", v).containsExactlyElementsOf(sent);
            }
        }
    }

    /**
     * Consumers that ask for large fetches over TLS and never read the answers: the broker sends
     * each response's records from the file as the socket takes them, so it holds at most a
     * read-ahead window (512 KiB) per connection, not the responses (which would be 20 x 16 MiB
     * here), and a normal TLS consumer is served meanwhile.
     */
    @Test
    void neverReadingTlsConsumersHoldNoFetchResponseInTheBrokersHeap() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("tls-big", 1, (short) 1), new NewTopic("tls-small", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put("batch.size", String.valueOf(256 * 1024));
        p.put("linger.ms", "5");
        java.util.Random random = new java.util.Random(11);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new org.apache.kafka.common.serialization.ByteArraySerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            for (int i = 0; i < 160; i++) {
                byte[] value = new byte[100_000];
                random.nextBytes(value);
                producer.send(new ProducerRecord<>("tls-big", 0, null, value));
            }
            producer.flush();
        }
        long before = cluster.brokerRssAfterGc();
        SSLContext ctx = tlsContext(ca.truststore());
        List<java.net.Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                java.net.Socket raw = new java.net.Socket();
                raw.setReceiveBufferSize(4096);
                raw.connect(new java.net.InetSocketAddress("127.0.0.1", sslPort), 5000);
                SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(raw, "127.0.0.1", sslPort, true);
                s.startHandshake();
                held.add(s);
                var fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(Integer.MAX_VALUE)
                        .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("tls-big").setPartitions(List.of(
                                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(Integer.MAX_VALUE)))));
                // Pipelined: every request is in before the first answer stalls.
                for (int r = 0; r < 5; r++) {
                    s.getOutputStream().write(RawClient.frame(ApiKeys.FETCH, (short) 12, r, fetch).array());
                }
                s.getOutputStream().flush();
            }
            // What the broker would hold is made (and stuck) within moments; a normal consumer meanwhile:
            List<String> sent = produce(ssl(sslPort, null), "tls-small", 50);
            assertThat(consume(ssl(sslPort, null), "tls-small", 50)).containsExactlyElementsOf(sent);
            long after = cluster.brokerRssAfterGc();
            System.out.printf("never-reading TLS consumers: broker RSS %d MiB -> %d MiB (+%d MiB)%n", before >> 20, after >> 20,
                    (after - before) >> 20);
            assertThat(after - before).as("broker RSS growth with 20 TLS consumers of a 16 MB fetch not reading").isLessThan(96L << 20);
            assertThat(cluster.brokerAlive()).isTrue();
        } finally {
            for (java.net.Socket s : held) {
                s.close();
            }
        }
    }

    @Test
    void aKeystoreReplacedInPlaceIsWhatNewConnectionsGet() throws Exception {
        BigInteger before = serverCertificate(sslPort).getSerialNumber();
        // A renewal as cert-manager makes one: same subject, new key and certificate, the mounted file replaced.
        Path renewed = ca.issue("broker-renewed", "CN=localhost,O=kaas", "PKCS12");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(renewed)) {
            ks.load(in, TestCerts.PASSWORD.toCharArray());
        }
        Path staged = brokerStore.resolveSibling("broker.p12.new");
        // The broker reads the key under any alias: the renewed store holds it under its own.
        Files.copy(renewed, staged, StandardCopyOption.REPLACE_EXISTING);
        Files.move(staged, brokerStore, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.setLastModifiedTime(brokerStore, FileTime.fromMillis(System.currentTimeMillis() + 2_000));
        BigInteger expected = ((X509Certificate) ks.getCertificate("broker-renewed")).getSerialNumber();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        BigInteger seen = before;
        while (!seen.equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            seen = serverCertificate(sslPort).getSerialNumber();
        }
        assertThat(seen).as("the renewed certificate (was %s)", before).isEqualTo(expected);
        List<String> sent = produce(ssl(sslPort, null), "after-renewal", 10);
        assertThat(consume(ssl(sslPort, null), "after-renewal", sent.size())).containsExactlyElementsOf(sent);
    }

    static SSLSocket tlsSocket(int port) throws Exception {
        return tlsSocket(ca.truststore(), port);
    }

    /** A TLS connection to {@code port} on loopback, trusting the test CA of {@code truststore}, handshake done. */
    static SSLSocket tlsSocket(Path truststore, int port) throws Exception {
        SSLSocket s = (SSLSocket) tlsContext(truststore).getSocketFactory().createSocket("127.0.0.1", port);
        s.setSoTimeout(15_000);
        s.startHandshake();
        return s;
    }

    /** A client TLS context trusting the test CA of {@code truststore}. */
    static SSLContext tlsContext(Path truststore) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(truststore)) {
            trust.load(in, TestCerts.PASSWORD.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    static X509Certificate serverCertificate(int port) throws Exception {
        try (SSLSocket s = tlsSocket(port)) {
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }
}
