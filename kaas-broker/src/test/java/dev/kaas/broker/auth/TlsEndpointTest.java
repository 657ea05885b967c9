package dev.kaas.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.network.Mode;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.ssl.SslFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS listeners as Apache builds them: each handshake here runs in memory between a Kafka client engine and the listener's. */
class TlsEndpointTest {
    @TempDir
    static Path dir;
    static TestCerts ca;
    static Path serverP12;
    static Path clientP12;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCerts.authority(dir.resolve("ca"));
        serverP12 = ca.issue("server", "CN=localhost,O=kaas", "PKCS12");
        clientP12 = ca.issue("alice", "CN=alice,OU=clients,O=kaas", "PKCS12");
    }

    static Map<String, String> server(Path keystore, String type) {
        Map<String, String> s = new HashMap<>(Map.of("ssl.keystore.location", keystore.toString(), "ssl.keystore.type", type,
                "ssl.keystore.password", TestCerts.PASSWORD));
        if (!type.equals("PEM")) {
            s.put("ssl.key.password", TestCerts.PASSWORD);
        } else {
            s.remove("ssl.keystore.password");
        }
        return s;
    }

    static TlsEndpoint endpoint(Map<String, String> settings) {
        return TlsEndpoint.create("CLIENT", name -> Optional.ofNullable(settings.get(name)));
    }

    /** A Kafka 3.7 client's engine: it trusts the test authority and checks the host name, as clients do by default. */
    static SSLEngine client(Path keystore) {
        Map<String, Object> raw = new HashMap<>(Map.of("ssl.truststore.location", ca.truststore().toString(), "ssl.truststore.type", "PKCS12",
                "ssl.truststore.password", TestCerts.PASSWORD));
        if (keystore != null) {
            raw.putAll(Map.of("ssl.keystore.location", keystore.toString(), "ssl.keystore.type", "PKCS12",
                    "ssl.keystore.password", TestCerts.PASSWORD, "ssl.key.password", TestCerts.PASSWORD));
        }
        ConfigDef def = new ConfigDef();
        SslConfigs.addClientSslSupport(def);
        SslFactory f = new SslFactory(Mode.CLIENT);
        f.configure(new HashMap<>(def.parse(raw)));
        return f.createSslEngine("localhost", 9093);
    }

    @Test
    void aPkcs12KeystoreServesAClientThatTrustsTheAuthorityAndItIsAnonymous() throws Exception {
        TlsEndpoint tls = endpoint(server(serverP12, "PKCS12"));
        SSLEngine server = tls.newEngine("127.0.0.1", 50000);

        handshake(client(null), server);

        assertThat(server.getSession().getCipherSuite()).as("a session was negotiated").isNotEqualTo("SSL_NULL_WITH_NULL_NULL");
        assertThat(tls.principal(server.getSession())).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    @Test
    void jksAndPemKeystoresServeToo() throws Exception {
        ca.issue("jks-server", "CN=localhost,O=kaas", "JKS");
        ca.issue("pem-server", "CN=localhost,O=kaas", "PKCS12");
        for (var settings : new Map[] {server(dir.resolve("ca/jks-server.jks"), "JKS"), server(ca.pem("pem-server"), "PEM")}) {
            @SuppressWarnings("unchecked")
            TlsEndpoint tls = endpoint(settings);
            handshake(client(null), tls.newEngine("127.0.0.1", 50000));
        }
    }

    @Test
    void aRequiredClientCertificateIsTheMappedPrincipalAndItsAbsenceFailsTheHandshake() throws Exception {
        Map<String, String> settings = server(serverP12, "PKCS12");
        settings.put("ssl.truststore.location", ca.truststore().toString());
        settings.put("ssl.truststore.type", "PKCS12");
        settings.put("ssl.truststore.password", TestCerts.PASSWORD);
        // Per listener, as Apache reads it: listener.name.<name in lower case>.ssl.*.
        settings.put("listener.name.client.ssl.client.auth", "required");
        settings.put("ssl.principal.mapping.rules", "RULE:^CN=([a-z]+),OU=clients,.*$/$1/U,DEFAULT");
        TlsEndpoint tls = endpoint(settings);

        SSLEngine server = tls.newEngine("127.0.0.1", 50000);
        handshake(client(clientP12), server);
        assertThat(tls.principal(server.getSession())).isEqualTo(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "ALICE"));

        assertThatThrownBy(() -> handshake(client(null), tls.newEngine("127.0.0.1", 50001)))
                .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
    }

    @Test
    void aRotatedKeystoreIsTakenForNewConnectionsAndOneWithAnotherSubjectIsNot() throws Exception {
        Path store = ca.issue("rotating", "CN=localhost,O=kaas", "PKCS12");
        TlsEndpoint tls = endpoint(server(store, "PKCS12"));
        BigInteger first = served(tls);
        assertThat(tls.reload()).as("nothing changed").isFalse();

        // A renewal: the same subject, a new key and certificate, the file replaced in place as a Secret's is.
        ca.issue("rotating", "CN=localhost,O=kaas", "PKCS12");
        Files.setLastModifiedTime(store, FileTime.fromMillis(System.currentTimeMillis() + 5_000));
        assertThat(tls.reload()).isTrue();
        BigInteger renewed = served(tls);
        assertThat(renewed).isNotEqualTo(first);

        ca.issue("rotating", "CN=someone-else,O=kaas", "PKCS12");
        Files.setLastModifiedTime(store, FileTime.fromMillis(System.currentTimeMillis() + 10_000));
        assertThat(tls.reload()).as("Apache refuses a keystore whose subject changed").isFalse();
        assertThat(served(tls)).as("the renewed certificate stays in use").isEqualTo(renewed);
        assertThat(tls.reload()).as("refused once, not tried again until the file changes").isFalse();
    }

    /** The serial number of the certificate a new connection to {@code tls} is served. */
    static BigInteger served(TlsEndpoint tls) throws Exception {
        SSLEngine server = tls.newEngine("127.0.0.1", 50000);
        handshake(client(null), server);
        return ((java.security.cert.X509Certificate) server.getSession().getLocalCertificates()[0]).getSerialNumber();
    }

    @Test
    void aListenerWithoutAKeystoreOrWithBadSettingsIsOneLineAtStartUp() {
        assertThatThrownBy(() -> endpoint(Map.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("listener CLIENT: an SSL listener needs a keystore");
        Map<String, String> badAuth = server(serverP12, "PKCS12");
        badAuth.put("ssl.client.auth", "sometimes");
        assertThatThrownBy(() -> endpoint(badAuth)).hasMessageContaining("Invalid value sometimes for configuration ssl.client.auth");
        Map<String, String> wrongPassword = server(serverP12, "PKCS12");
        wrongPassword.put("ssl.keystore.password", "wrong");
        assertThatThrownBy(() -> endpoint(wrongPassword)).hasMessageStartingWith("listener CLIENT: ")
                .hasMessageNotContaining("wrong");
    }

    /** Runs the TLS handshake between the two engines in memory; throws what either side fails with. */
    static void handshake(SSLEngine client, SSLEngine server) throws SSLException {
        client.beginHandshake();
        server.beginHandshake();
        ByteBuffer toServer = ByteBuffer.allocate(1 << 16);
        ByteBuffer toClient = ByteBuffer.allocate(1 << 16);
        ByteBuffer app = ByteBuffer.allocate(1 << 16);
        for (int step = 0; step < 200; step++) {
            boolean clientDone = done(client);
            boolean serverDone = done(server);
            if (clientDone && serverDone) {
                return;
            }
            if (client.isOutboundDone() || server.isOutboundDone()) {
                throw new IllegalStateException("an engine closed during the handshake without failing (client "
                        + client.getHandshakeStatus() + ", server " + server.getHandshakeStatus() + ")");
            }
            advance(client, toClient, toServer, app);
            advance(server, toServer, toClient, app);
        }
        throw new AssertionError("handshake did not finish: client " + client.getHandshakeStatus() + ", server " + server.getHandshakeStatus());
    }

    private static boolean done(SSLEngine e) {
        var s = e.getHandshakeStatus();
        return s == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING || s == SSLEngineResult.HandshakeStatus.FINISHED;
    }

    private static void advance(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer app) throws SSLException {
        switch (e.getHandshakeStatus()) {
            case NEED_WRAP -> e.wrap(ByteBuffer.allocate(0), out);
            case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                in.flip();
                e.unwrap(in, app);
                in.compact();
                app.clear();
            }
            case NEED_TASK -> {
                Runnable task;
                while ((task = e.getDelegatedTask()) != null) {
                    task.run();
                }
            }
            default -> {
            }
        }
    }
}
