package dev.kaas.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerPropertiesTest {
    /** Apache 3.7's config/kraft/server.properties, as an operator would bring it, with a few changes of theirs. */
    static final String APACHE_SAMPLE = """
            process.roles=broker,controller
            node.id=1
            controller.quorum.voters=1@localhost:9093
            listeners=PLAINTEXT://:9092,CONTROLLER://:9093
            inter.broker.listener.name=PLAINTEXT
            advertised.listeners=PLAINTEXT://localhost:9092
            controller.listener.names=CONTROLLER
            listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
            num.network.threads=3
            num.io.threads=8
            socket.request.max.bytes=104857600
            log.dirs=/tmp/kraft-combined-logs
            num.partitions=3
            offsets.topic.replication.factor=1
            log.retention.hours=24
            log.segment.bytes=1073741824
            log.retention.check.interval.ms=300000
            group.initial.rebalance.delay.ms=0
            offsets.retention.minutes=60
            """;

    @TempDir
    Path tmp;

    @Test
    void anApacheKraftFileBecomesTheKaasKeysAndTheTopicDefaults() throws Exception {
        // Given
        Path file = write(APACHE_SAMPLE);

        // When
        ServerProperties.Translation t = ServerProperties.load(file);

        // Then
        assertThat(t.properties())
                .containsEntry("kaas.broker.id", "1")
                .containsEntry("kaas.broker.listeners", "PLAINTEXT://:9092")
                .containsEntry("kaas.broker.advertised-listeners", "PLAINTEXT://localhost:9092")
                .containsEntry("kaas.data-dir", "/tmp/kraft-combined-logs")
                .containsEntry("kaas.controller.num-partitions", "3")
                .containsEntry("kaas.broker.socket-request-max-bytes", "104857600")
                .containsEntry("kaas.broker.log-retention-check-interval", "300000ms")
                .containsEntry("kaas.group.initial-rebalance-delay", "0ms")
                .containsEntry("kaas.group.offsets-retention", "60m")
                .containsEntry("log.retention.hours", "24")
                .containsEntry("log.segment.bytes", "1073741824")
                .containsEntry("kaas.broker.listener-security-protocol-map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
                .doesNotContainKeys("process.roles", "controller.listener.names", "num.io.threads");
        assertThat(t.notRead()).containsExactlyInAnyOrder("process.roles", "controller.quorum.voters", "inter.broker.listener.name",
                "num.network.threads", "num.io.threads", "offsets.topic.replication.factor");
        assertThat(t.warnings(file)).anySatisfy(w -> assertThat(w).contains("process.roles is a KRaft setting"))
                .anySatisfy(w -> assertThat(w).contains("num.io.threads is"));
    }

    @Test
    void aValueOfTheWrongTypeIsOneLineNamingTheKey() throws Exception {
        assertInvalid("log.retention.hours=abc", "Invalid value abc for configuration log.retention.hours: Not a number of type INT");
        assertInvalid("group.max.size=many", "Invalid value many for configuration group.max.size");
        assertInvalid("auto.create.topics.enable=yes", "Invalid value yes for configuration auto.create.topics.enable");
        assertInvalid("connections.max.idle.ms=-5", "Invalid value -5 for configuration connections.max.idle.ms: Value must be at least 0");
        assertInvalid("num.partitions=0", "Invalid value 0 for configuration num.partitions: Value must be at least 1");
        assertInvalid("offsets.retention.minutes=0", "Invalid value 0 for configuration offsets.retention.minutes: Value must be at least 1");
        assertInvalid("log.cleanup.policy=shred", "Invalid value shred for configuration log.cleanup.policy: String must be one of: compact, delete");
        assertInvalid("log.segment.bytes=10", "Invalid value 10 for configuration log.segment.bytes: Value must be at least 26");
        assertInvalid("log.retention.hours=0", "log.retention.ms must be unlimited (-1) or, equal or greater than 1");
    }

    @Test
    void apachesLowerBoundsAndNoStricter() throws Exception {
        assertThat(ServerProperties.translate(Map.of("log.cleaner.threads", "0", "max.connections.per.ip", "0",
                "log.cleaner.io.buffer.size", "0", "offset.metadata.max.bytes", "0")).properties())
                .containsEntry("kaas.broker.log-cleaner-threads", "0").containsEntry("kaas.group.offset-metadata-max-bytes", "0");
        assertInvalid("fetch.max.bytes=1000", "Value must be at least 1024");
    }

    @Test
    void everyListenerNeedsAKnownProtocol() throws Exception {
        assertInvalid("listeners=CLIENT://:9093\nlistener.security.protocol.map=CLIENT:SASL_KERBEROS", "listener CLIENT: unknown security protocol SASL_KERBEROS");
        assertThat(ServerProperties.translate(Map.of("listeners", "SASL_SSL://:9093")).properties())
                .containsEntry("kaas.broker.listeners", "SASL_SSL://:9093");
        assertThat(ServerProperties.translate(Map.of("listeners", "CLIENT://:9093", "listener.security.protocol.map", "CLIENT:PLAINTEXT"))
                .properties()).containsEntry("kaas.broker.listeners", "CLIENT://:9093");
        assertThat(ServerProperties.translate(Map.of("listeners", "client://:9093", "listener.security.protocol.map", "CLIENT:ssl"))
                .properties()).as("names and protocols in any case, as Apache").containsEntry("kaas.broker.listeners", "client://:9093");
        assertInvalid("listeners=CLIENT://:9093", "No security protocol defined for listener CLIENT");
    }

    @Test
    void connectionLimitsOfTheBrokerAndOfEachListenerAreRead() throws Exception {
        var t = ServerProperties.translate(Map.of("max.connection.creation.rate", "50", "listener.name.client.max.connections", "100",
                "listener.name.client.max.connection.creation.rate", "10", "listener.name.client.max.connection.rate", "1",
                "listener.name.CLIENT.max.connections", "5"));
        assertThat(t.properties()).containsEntry("kaas.broker.max-connection-creation-rate", "50")
                .containsEntry("listener.name.client.max.connections", "100")
                .containsEntry("listener.name.client.max.connection.creation.rate", "10");
        assertThat(t.notRead()).containsExactlyInAnyOrder("listener.name.client.max.connection.rate", "listener.name.CLIENT.max.connections");
    }

    @Test
    void anSslListenersSettingsReachTheBrokerUnderTheirApacheNames() throws Exception {
        var t = ServerProperties.translate(Map.of("listeners", "CLIENT://:9093", "listener.security.protocol.map", "CLIENT:SSL",
                "ssl.keystore.location", "/etc/kaas/tls/keystore.p12", "ssl.keystore.password", "secret",
                "listener.name.client.ssl.client.auth", "required", "ssl.clientt.auth", "x"));

        assertThat(t.properties()).containsEntry("kaas.broker.listener-security-protocol-map", "CLIENT:SSL")
                .containsEntry("ssl.keystore.location", "/etc/kaas/tls/keystore.p12").containsEntry("ssl.keystore.password", "secret")
                .containsEntry("listener.name.client.ssl.client.auth", "required");
        assertThat(t.notRead()).as("a misspelt name is reported, not passed on").containsExactly("ssl.clientt.auth");
    }

    @Test
    void aSaslListenersSettingsReachTheBrokerUnderTheirApacheNames() throws Exception {
        String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";";
        var t = ServerProperties.translate(Map.of("listeners", "CLIENT://:9093", "listener.security.protocol.map", "CLIENT:SASL_PLAINTEXT",
                "sasl.enabled.mechanisms", "PLAIN", "listener.name.client.plain.sasl.jaas.config", jaas,
                "listener.name.client.plain.connections.max.reauth.ms", "60000", "connection.failed.authentication.delay.ms", "50",
                "sasl.server.max.receive.size", "4096", "sasl.enabled.mechanism", "x",
                "listener.name.client.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
                "sasl.oauthbearer.jwks.endpoint.url", "file:///etc/kaas/jwks.json"));

        assertThat(t.properties()).containsEntry("sasl.enabled.mechanisms", "PLAIN")
                .containsEntry("listener.name.client.plain.sasl.jaas.config", jaas)
                .containsEntry("listener.name.client.plain.connections.max.reauth.ms", "60000")
                .containsEntry("connection.failed.authentication.delay.ms", "50").containsEntry("sasl.server.max.receive.size", "4096")
                .containsEntry("listener.name.client.oauthbearer.sasl.server.callback.handler.class",
                        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler")
                .containsEntry("sasl.oauthbearer.jwks.endpoint.url", "file:///etc/kaas/jwks.json");
        assertThat(t.notRead()).as("a misspelt name is reported, not passed on").containsExactly("sasl.enabled.mechanism");
    }

    @Test
    void withoutAdvertisedListenersTheListenersAreAdvertisedAsApacheDoes() throws Exception {
        assertThat(ServerProperties.translate(Map.of("listeners", "PLAINTEXT://:19092,OTHER://0.0.0.0:19093,HOST://h:19094",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT,HOST:PLAINTEXT")).properties())
                .containsEntry("kaas.broker.advertised-listeners", "PLAINTEXT://localhost:19092,OTHER://localhost:19093,HOST://h:19094");
        assertThat(ServerProperties.translate(Map.of("listeners", "PLAINTEXT://:19092", "advertised.listeners", "PLAINTEXT://x:1")).properties())
                .containsEntry("kaas.broker.advertised-listeners", "PLAINTEXT://x:1");
    }

    @Test
    void aLargerRequestLimitLiftsKaassBoundOnRequestsInFlight() throws Exception {
        assertThat(ServerProperties.translate(Map.of("socket.request.max.bytes", "314572800")).properties())
                .containsEntry("kaas.broker.queued-max-request-bytes", "629145600");
        assertThat(ServerProperties.translate(Map.of("socket.request.max.bytes", "1048576")).properties())
                .containsEntry("kaas.broker.queued-max-request-bytes", "209715200");
        assertThat(ServerProperties.translate(Map.of("socket.request.max.bytes", "314572800", "queued.max.request.bytes", "-1")).properties())
                .containsEntry("kaas.broker.queued-max-request-bytes", "-1");
    }

    @Test
    void theFileIsReadAsApacheReadsIt() throws Exception {
        Path file = tmp.resolve("latin1.properties");
        Files.write(file, "# r\u00e9glages du courtier\nnum.partitions=2\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertThat(ServerProperties.load(file).properties()).containsEntry("kaas.controller.num-partitions", "2");
    }

    @Test
    void kaasHasOneLogDirAndOneIdPerProcess() throws Exception {
        assertInvalid("log.dirs=/a,/b", "names 2 directories");
        assertInvalid("node.id=1\nbroker.id=2", "disagrees");
        assertInvalid("listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER", "has no listener left");
        assertThat(ServerProperties.translate(Map.of("log.dir", "/x", "log.dirs", "/y")).properties()).containsEntry("kaas.data-dir", "/y");
        assertThat(ServerProperties.translate(Map.of("log.dir", "/x")).properties()).containsEntry("kaas.data-dir", "/x");
        assertThat(ServerProperties.translate(Map.of("node.id", "2", "broker.id", "2")).properties()).containsEntry("kaas.broker.id", "2");
    }

    @Test
    void preflightWarnsOncePerKeyAndRefusesABadFile() throws Exception {
        Path good = write("num.io.threads=8\nlog.retention.hours=1\n");
        Path bad = write("log.retention.hours=x\n");
        String before = System.getProperty(ServerProperties.FILE_KEY);
        try {
            System.setProperty(ServerProperties.FILE_KEY, good.toString());
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertThat(ServerProperties.preflight("kaas-broker", new PrintStream(err, true, StandardCharsets.UTF_8))).isTrue();
            assertThat(err.toString(StandardCharsets.UTF_8).lines()).singleElement().asString()
                    .startsWith("kaas-broker: WARN " + good + ": num.io.threads is");

            System.setProperty(ServerProperties.FILE_KEY, bad.toString());
            err.reset();
            assertThat(ServerProperties.preflight("kaas-broker", new PrintStream(err, true, StandardCharsets.UTF_8))).isFalse();
            assertThat(err.toString(StandardCharsets.UTF_8).lines()).singleElement().asString()
                    .isEqualTo("kaas-broker: cannot start: " + bad + ": Invalid value x for configuration log.retention.hours: Not a number of type INT");

            System.setProperty(ServerProperties.FILE_KEY, good.toString());
            System.setProperty("log.roll.hours", "soon");
            err.reset();
            assertThat(ServerProperties.preflight("kaas-broker", new PrintStream(err, true, StandardCharsets.UTF_8)))
                    .as("a topic default from a system property is checked too").isFalse();
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot start: Invalid value soon for configuration log.roll.hours");
            System.clearProperty("log.roll.hours");

            // Apache's LogManager refuses to start on this pair; each value is fine alone.
            System.setProperty(ServerProperties.FILE_KEY, write("log.cleaner.min.compaction.lag.ms=60000\n").toString());
            System.setProperty("log.cleaner.max.compaction.lag.ms", "1000");
            err.reset();
            assertThat(ServerProperties.preflight("kaas-controller", new PrintStream(err, true, StandardCharsets.UTF_8))).isFalse();
            assertThat(err.toString(StandardCharsets.UTF_8).lines()).singleElement().asString().isEqualTo(
                    "kaas-controller: cannot start: conflict topic config setting min.compaction.lag.ms (60000) > max.compaction.lag.ms (1000)");
            System.clearProperty("log.cleaner.max.compaction.lag.ms");

            System.setProperty(ServerProperties.FILE_KEY, tmp.resolve("missing").toString());
            err.reset();
            assertThat(ServerProperties.preflight("kaas-broker", new PrintStream(err, true, StandardCharsets.UTF_8))).isFalse();
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot be read");
        } finally {
            System.clearProperty("log.roll.hours");
            System.clearProperty("log.cleaner.max.compaction.lag.ms");
            if (before == null) {
                System.clearProperty(ServerProperties.FILE_KEY);
            } else {
                System.setProperty(ServerProperties.FILE_KEY, before);
            }
        }
    }

    private void assertInvalid(String file, String message) {
        Map<String, String> raw = new HashMap<>();
        file.lines().forEach(l -> raw.put(l.substring(0, l.indexOf('=')), l.substring(l.indexOf('=') + 1)));
        assertThatThrownBy(() -> ServerProperties.translate(raw)).isInstanceOf(ServerProperties.Invalid.class)
                .hasMessageContaining(message).satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    private Path write(String content) throws Exception {
        Path f = Files.createTempFile(tmp, "server", ".properties");
        Files.writeString(f, content);
        return f;
    }
}
