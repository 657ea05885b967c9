package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.auth.TestCerts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.io.TempDir;

/**
 * SASL listeners configured as an Apache 3.7 broker's: SASL_PLAINTEXT and SASL_SSL with PLAIN
 * and the users of the listener's JAAS configuration, the Java clients 3.7.2 over both
 * (including KIP-368 re-authentication on a listener with {@code connections.max.reauth.ms}),
 * and what a client that has not authenticated can and cannot do.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SaslIT {
    static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    static final String SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
    static final String OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;";
    static final String ISSUER = "https://issuer.kaas.test";
    static final long FAILED_AUTH_DELAY_MS = 400;
    static RsaJsonWebKey issuerKey;

    @TempDir
    static Path tmp;
    static TestCerts ca;
    static KaasCluster cluster;
    static int saslPort;
    static int saslSslPort;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCerts.authority(tmp.resolve("certs"));
        Path brokerStore = ca.issue("broker", "CN=localhost,O=kaas", "PKCS12");
        Map<String, String> props = new HashMap<>();
        props.put("kaas.broker.listener-security-protocol-map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL");
        props.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER");
        for (String listener : List.of("sasl_plaintext", "sasl_ssl")) {
            props.put("listener.name." + listener + ".plain.sasl.jaas.config", JAAS);
            props.put("listener.name." + listener + ".scram-sha-256.sasl.jaas.config", SCRAM_JAAS);
            props.put("listener.name." + listener + ".scram-sha-512.sasl.jaas.config", SCRAM_JAAS);
            props.put("listener.name." + listener + ".oauthbearer.sasl.jaas.config", OAUTH_JAAS);
            props.put("listener.name." + listener + ".oauthbearer.sasl.server.callback.handler.class",
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler");
        }
        // The identity provider: a signing key, its public half published as a JWKS file.
        issuerKey = RsaJwkGenerator.generateJwk(2048);
        issuerKey.setKeyId("issuer-key-1");
        Path jwks = tmp.resolve("jwks.json");
        java.nio.file.Files.writeString(jwks, new JsonWebKeySet(issuerKey).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY));
        props.put("sasl.oauthbearer.jwks.endpoint.url", jwks.toUri().toString());
        props.put("sasl.oauthbearer.expected.audience", "kaas");
        props.put("sasl.oauthbearer.expected.issuer", ISSUER);
        props.put("listener.name.sasl_plaintext.connections.max.reauth.ms", "2000");
        props.put("connection.failed.authentication.delay.ms", Long.toString(FAILED_AUTH_DELAY_MS));
        props.put("ssl.keystore.type", "PKCS12");
        props.put("ssl.keystore.location", brokerStore.toString());
        props.put("ssl.keystore.password", TestCerts.PASSWORD);
        props.put("ssl.key.password", TestCerts.PASSWORD);
        for (int attempt = 1; cluster == null; attempt++) {
            int plain = KaasCluster.freePort();
            saslPort = KaasCluster.freePort();
            saslSslPort = KaasCluster.freePort();
            String listeners = "PLAINTEXT://127.0.0.1:" + plain + ",SASL_PLAINTEXT://127.0.0.1:" + saslPort
                    + ",SASL_SSL://127.0.0.1:" + saslSslPort;
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

    static Properties sasl(int port, String user, String password) {
        return sasl(port, "PLAIN", user, password);
    }

    static Properties sasl(int port, String mechanism, String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:" + port);
        p.put("security.protocol", port == saslSslPort ? "SASL_SSL" : "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        p.put("sasl.jaas.config", (mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule") + " required username=\"" + user
                + "\" password=\"" + password + "\";");
        if (port == saslSslPort) {
            p.put("ssl.truststore.type", "PKCS12");
            p.put("ssl.truststore.location", ca.truststore().toString());
            p.put("ssl.truststore.password", TestCerts.PASSWORD);
        }
        return p;
    }

    @Test
    void javaClientsAuthenticateWithPlainOverSaslPlaintextAndSaslSsl() throws Exception {
        try (Admin admin = Admin.create(sasl(saslPort, "alice", "alice-secret"))) {
            admin.createTopics(List.of(new NewTopic("over-sasl", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).singleElement()
                    .satisfies(n -> assertThat(n.port()).as("Metadata over the SASL listener advertises it").isEqualTo(saslPort));
        }
        List<String> sent = TlsIT.produce(sasl(saslPort, "alice", "alice-secret"), "over-sasl", 1_000);

        assertThat(TlsIT.consume(sasl(saslSslPort, "bob", "bob-secret"), "over-sasl", sent.size())).containsExactlyElementsOf(sent);
        assertThat(TlsIT.consume(sasl(saslPort, "bob", "bob-secret"), "over-sasl", sent.size())).containsExactlyElementsOf(sent);
    }

    /** librdkafka (kcat) over both listeners, PLAIN, and over SASL_SSL checking the broker's certificate. */
    @Test
    void librdkafkaAuthenticatesWithPlainOverSaslPlaintextAndSaslSsl() throws Exception {
        NativeClients.requirePresent(KcatIT.kcatPresent(), "kcat (librdkafka)");
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("kcat-sasl", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        kcat(saslPort, "alice", "alice-secret", "one\ntwo\n", "-P", "-t", "kcat-sasl", "-p", "0");
        kcat(saslSslPort, "bob", "bob-secret", "three\n", "-P", "-t", "kcat-sasl", "-p", "0");
        String consumed = kcat(saslSslPort, "bob", "bob-secret", null, "-C", "-t", "kcat-sasl", "-p", "0", "-o", "beginning", "-e", "-q",
                "-f", "%o:%s\\n");
        assertThat(consumed.lines()).containsExactly("0:one", "1:two", "2:three");
    }

    /**
     * librdkafka (kcat) with SCRAM-SHA-512 over SASL_SSL, the broker's certificate checked: a user
     * made through the Admin API produces and consumes; a wrong password is refused.
     */
    @Test
    void librdkafkaAuthenticatesWithScramOverSaslSsl() throws Exception {
        NativeClients.requirePresent(KcatIT.kcatPresent(), "kcat (librdkafka)");
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.alterUserScramCredentials(List.of(new org.apache.kafka.clients.admin.UserScramCredentialUpsertion("dave",
                    new org.apache.kafka.clients.admin.ScramCredentialInfo(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512, 4096),
                    "dave-secret"))).all().get(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic("kcat-scram", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        // The credential reaches the broker through the controller: the Java client's login shows when it has.
        try (Admin dave = Admin.create(sasl(saslSslPort, "SCRAM-SHA-512", "dave", "dave-secret"))) {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> dave.describeCluster().clusterId().get(5, TimeUnit.SECONDS) != null);
        }
        kcatWith(saslSslPort, "SCRAM-SHA-512", "dave", "dave-secret", "four\nfive\n", "-P", "-t", "kcat-scram", "-p", "0");
        String consumed = kcatWith(saslSslPort, "SCRAM-SHA-512", "dave", "dave-secret", null, "-C", "-t", "kcat-scram", "-p", "0", "-o",
                "beginning", "-e", "-q", "-f", "%o:%s\\n");
        assertThat(consumed.lines()).containsExactly("0:four", "1:five");
        assertThatThrownBy(() -> kcatWith(saslSslPort, "SCRAM-SHA-512", "dave", "not-daves", null, "-L", "-t", "kcat-scram", "-m", "10"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("uthentication").hasMessageNotContaining("did not finish");
    }

    static String kcat(int port, String user, String password, String stdin, String... args) throws Exception {
        return kcatWith(port, "PLAIN", user, password, stdin, args);
    }

    static String kcatWith(int port, String mechanism, String user, String password, String stdin, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("kcat", "-b", "localhost:" + port,
                "-X", "security.protocol=" + (port == saslSslPort ? "SASL_SSL" : "SASL_PLAINTEXT"), "-X", "sasl.mechanisms=" + mechanism,
                "-X", "sasl.username=" + user, "-X", "sasl.password=" + password));
        if (port == saslSslPort) {
            cmd.addAll(List.of("-X", "ssl.ca.location=" + ca.caPem()));
        }
        cmd.addAll(List.of(args));
        Path out = java.nio.file.Files.createTempFile(tmp, "kcat", ".out");
        Path err = java.nio.file.Files.createTempFile(tmp, "kcat", ".err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            if (stdin != null) {
                p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            p.getOutputStream().close();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("kcat " + args[0] + " did not finish: " + java.nio.file.Files.readString(err));
            }
            assertThat(p.exitValue()).as(java.nio.file.Files.readString(err)).isZero();
            return java.nio.file.Files.readString(out);
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * SCRAM users made with Apache's own kafka-configs.sh (through the controller), described,
     * logged in with over both listeners by the Java clients, and removed again.
     */
    @Test
    void scramUsersMadeWithKafkaConfigsLogInAndStopLoggingInWhenDeleted() throws Exception {
        var added = ShellTools.run("kafka.admin.ConfigCommand", null, "--bootstrap-server", cluster.bootstrap(), "--alter",
                "--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]",
                "--entity-type", "users", "--entity-name", "carol");
        assertThat(added.exitCode()).as(added.stderr()).isZero();
        assertThat(added.stdout()).contains("Completed updating config for user carol.");
        var described = ShellTools.run("kafka.admin.ConfigCommand", null, "--bootstrap-server", cluster.bootstrap(), "--describe",
                "--entity-type", "users", "--entity-name", "carol");
        assertThat(described.exitCode()).as(described.stderr()).isZero();
        assertThat(described.stdout())
                .contains("SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096");

        try (Admin admin = Admin.create(sasl(saslPort, "SCRAM-SHA-512", "carol", "carol-secret"))) {
            admin.createTopics(List.of(new NewTopic("over-scram", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        List<String> sent = TlsIT.produce(sasl(saslSslPort, "SCRAM-SHA-256", "carol", "carol-secret"), "over-scram", 200);
        assertThat(TlsIT.consume(sasl(saslPort, "SCRAM-SHA-512", "carol", "carol-secret"), "over-scram", sent.size()))
                .containsExactlyElementsOf(sent);
        assertRefused(sasl(saslPort, "SCRAM-SHA-512", "carol", "not-carols"));

        var deleted = ShellTools.run("kafka.admin.ConfigCommand", null, "--bootstrap-server", cluster.bootstrap(), "--alter",
                "--delete-config", "SCRAM-SHA-512", "--entity-type", "users", "--entity-name", "carol");
        assertThat(deleted.exitCode()).as(deleted.stderr()).isZero();
        assertRefused(sasl(saslPort, "SCRAM-SHA-512", "carol", "carol-secret"));
        try (Admin admin = Admin.create(sasl(saslPort, "SCRAM-SHA-256", "carol", "carol-secret"))) {
            assertThat(admin.describeUserScramCredentials(List.of("carol")).all().get(30, TimeUnit.SECONDS).get("carol")
                    .credentialInfos()).as("the other mechanism's credential stays").singleElement()
                    .satisfies(i -> assertThat(i.mechanism()).isEqualTo(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_256));
        }
    }

    /** A JWT as an identity provider issues one: signed with {@code key}, for {@code audience}, valid for {@code minutes}. */
    static Path token(RsaJsonWebKey key, String subject, String audience, int minutes) throws Exception {
        JwtClaims claims = new JwtClaims();
        claims.setIssuer(ISSUER);
        claims.setAudience(audience);
        claims.setSubject(subject);
        claims.setIssuedAtToNow();
        claims.setExpirationTimeMinutesInTheFuture(minutes);
        claims.setClaim("scope", "kafka");
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(key.getPrivateKey());
        jws.setKeyIdHeaderValue(key.getKeyId());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        Path file = java.nio.file.Files.createTempFile(tmp, "token", ".jwt");
        java.nio.file.Files.writeString(file, jws.getCompactSerialization());
        return file;
    }

    /** Apache's own client-side OAUTHBEARER login, reading its token from a file (KIP-768's file token endpoint). */
    static Properties oauth(int port, Path token) {
        Properties p = sasl(port, "PLAIN", "x", "x");
        p.put("sasl.mechanism", "OAUTHBEARER");
        p.put("sasl.jaas.config", OAUTH_JAAS);
        p.put("sasl.login.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
        p.put("sasl.oauthbearer.token.endpoint.url", token.toUri().toString());
        return p;
    }

    @Test
    void oauthbearerTokensSignedByTheConfiguredIssuerAreAcceptedAndOthersRefused() throws Exception {
        Path dora = token(issuerKey, "dora", "kaas", 10);
        try (Admin admin = Admin.create(oauth(saslPort, dora))) {
            admin.createTopics(List.of(new NewTopic("over-oauth", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        List<String> sent = TlsIT.produce(oauth(saslSslPort, dora), "over-oauth", 100);
        assertThat(TlsIT.consume(oauth(saslPort, dora), "over-oauth", sent.size())).containsExactlyElementsOf(sent);

        RsaJsonWebKey stranger = RsaJwkGenerator.generateJwk(2048);
        stranger.setKeyId(issuerKey.getKeyId());
        assertRefused(oauth(saslPort, token(stranger, "dora", "kaas", 10)));
        assertRefused(oauth(saslPort, token(issuerKey, "dora", "another-service", 10)));
    }

    @Test
    void anOauthbearerSessionEndsWithItsToken() throws Exception {
        // The raw exchange, to read the session lifetime: a token valid for one minute gets what is left of it
        // (on SASL_SSL, which sets no connections.max.reauth.ms).
        String jwt = java.nio.file.Files.readString(token(issuerKey, "dora", "kaas", 1));
        try (RawClient c = new RawClient(TlsIT.tlsSocket(ca.truststore(), saslSslPort))) {
            c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("OAUTHBEARER"));
            byte[] initial = new org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerClientInitialResponse(jwt, null,
                    org.apache.kafka.common.security.auth.SaslExtensions.empty()).toBytes();
            var ok = (SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, (short) 2, new SaslAuthenticateRequestData().setAuthBytes(initial));
            assertThat(Errors.forCode(ok.data().errorCode())).as(ok.data().errorMessage()).isEqualTo(Errors.NONE);
            assertThat(ok.data().sessionLifetimeMs()).isBetween(45_000L, 60_000L);
        }
    }

    static void assertRefused(Properties props) {
        props.put("request.timeout.ms", "10000");
        props.put("default.api.timeout.ms", "15000");
        try (Admin admin = Admin.create(props)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SaslAuthenticationException.class);
        }
    }

    @Test
    void aWrongPasswordIsSaslAuthenticationFailedWithApachesMessage() {
        for (int port : new int[] {saslPort, saslSslPort}) {
            Properties wrong = sasl(port, "alice", "not-her-password");
            wrong.put("request.timeout.ms", "10000");
            wrong.put("default.api.timeout.ms", "15000");
            try (Admin admin = Admin.create(wrong)) {
                assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SaslAuthenticationException.class)
                        .hasMessageContaining("Authentication failed: Invalid username or password");
            }
        }
    }

    /** KIP-368: sessions of 2 s; a producer working for 7 s re-authenticates on its connections instead of losing them. */
    @Test
    void aProducerReauthenticatesOnItsConnectionsWhenTheSessionExpires() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("reauth", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties props = sasl(saslPort, "alice", "alice-secret");
        props.put("linger.ms", "5");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(7);
            int i = 0;
            while (System.nanoTime() < end) {
                p.send(new ProducerRecord<>("reauth", 0, "k", "v" + i++)).get(30, TimeUnit.SECONDS);
                Thread.sleep(20);
            }
            assertThat(metric(p.metrics(), "successful-reauthentication-total")).as("re-authentications").isGreaterThanOrEqualTo(2);
            assertThat(metric(p.metrics(), "failed-reauthentication-total")).isZero();
            assertThat(metric(p.metrics(), "failed-authentication-total")).isZero();
            // One connection for metadata, one to the broker as leader: no reconnect for every expired session.
            assertThat(metric(p.metrics(), "connection-creation-total")).as("connections opened").isLessThanOrEqualTo(3);
        }
    }

    static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    @Test
    void beforeAuthenticationOnlyApiVersionsAndTheHandshakeAreServed() throws Exception {
        try (RawClient c = new RawClient(saslPort)) {
            var versions = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, (short) 3,
                    new ApiVersionsRequestData().setClientSoftwareName("raw").setClientSoftwareVersion("1"));
            assertThat(versions.data().apiKeys().find(ApiKeys.SASL_HANDSHAKE.id)).isNotNull();
            assertThat(versions.data().apiKeys().find(ApiKeys.SASL_AUTHENTICATE.id)).isNotNull();
            long sent = System.nanoTime();
            c.writeRaw(RawClient.frame(ApiKeys.METADATA, (short) 12, 2, new MetadataRequestData().setTopics(null)).array());
            assertThat(c.closedByPeer()).as("Metadata before authentication closes the connection").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).as("after the failed authentication delay")
                    .isGreaterThanOrEqualTo(FAILED_AUTH_DELAY_MS - 50);
        }
        try (RawClient c = new RawClient(saslPort)) {
            var hs = (SaslHandshakeResponse) c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            assertThat(Errors.forCode(hs.data().errorCode())).isEqualTo(Errors.NONE);
            assertThat(hs.data().mechanisms()).containsExactly("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");
            var ok = (SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, (short) 2, new SaslAuthenticateRequestData()
                    .setAuthBytes("\0bob\0bob-secret".getBytes(StandardCharsets.UTF_8)));
            assertThat(Errors.forCode(ok.data().errorCode())).isEqualTo(Errors.NONE);
            assertThat(ok.data().sessionLifetimeMs()).as("connections.max.reauth.ms of the listener").isEqualTo(2000);
            var again = (SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, (short) 2, new SaslAuthenticateRequestData()
                    .setAuthBytes("\0bob\0bob-secret".getBytes(StandardCharsets.UTF_8)));
            assertThat(Errors.forCode(again.data().errorCode())).as("after authentication").isEqualTo(Errors.ILLEGAL_SASL_STATE);
        }
    }

    @Test
    void aFailedAuthenticationIsAnsweredAfterTheDelayThenTheConnectionCloses() throws Exception {
        try (RawClient c = new RawClient(saslPort)) {
            c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            long sent = System.nanoTime();
            var failed = (SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, (short) 1, new SaslAuthenticateRequestData()
                    .setAuthBytes("\0bob\0guess".getBytes(StandardCharsets.UTF_8)));
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertThat(Errors.forCode(failed.data().errorCode())).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
            assertThat(failed.data().errorMessage()).isEqualTo("Authentication failed: Invalid username or password");
            assertThat(tookMs).as("connection.failed.authentication.delay.ms").isGreaterThanOrEqualTo(FAILED_AUTH_DELAY_MS - 50);
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(saslPort)) {
            // Another request amid the exchange: its own error response, ILLEGAL_SASL_STATE, after the delay; then closed.
            c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            long sent = System.nanoTime();
            var groups = (org.apache.kafka.common.requests.ListGroupsResponse) c.send(ApiKeys.LIST_GROUPS, (short) 4,
                    new org.apache.kafka.common.message.ListGroupsRequestData());
            assertThat(Errors.forCode(groups.data().errorCode())).isEqualTo(Errors.ILLEGAL_SASL_STATE);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).isGreaterThanOrEqualTo(FAILED_AUTH_DELAY_MS - 50);
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(saslPort)) {
            var hs = (SaslHandshakeResponse) c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("GSSAPI"));
            assertThat(Errors.forCode(hs.data().errorCode())).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM);
            assertThat(hs.data().mechanisms()).containsExactly("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void handshakeV0AuthenticatesWithRawTokens() throws Exception {
        try (RawClient c = new RawClient(saslPort)) {
            var hs = (SaslHandshakeResponse) c.send(ApiKeys.SASL_HANDSHAKE, (short) 0, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            assertThat(Errors.forCode(hs.data().errorCode())).isEqualTo(Errors.NONE);
            byte[] token = "\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8);
            c.writeRaw(java.nio.ByteBuffer.allocate(4 + token.length).putInt(token.length).put(token).array());
            assertThat(c.readFrame().remaining()).as("PLAIN's empty challenge, size-prefixed as Apache sends it").isZero();
            var versions = (ApiVersionsResponse) c.send(ApiKeys.API_VERSIONS, (short) 3,
                    new ApiVersionsRequestData().setClientSoftwareName("raw").setClientSoftwareVersion("1"));
            assertThat(Errors.forCode(versions.data().errorCode())).as("authenticated: requests are served").isEqualTo(Errors.NONE);
        }
    }

    @Test
    void aFrameOverSaslServerMaxReceiveSizeBeforeAuthenticationClosesTheConnection() throws Exception {
        try (RawClient c = new RawClient(saslPort)) {
            c.writeRaw(java.nio.ByteBuffer.allocate(4).putInt(600_000).array());
            assertThat(c.closedByPeer()).isTrue();
        }
    }
}
