package dev.kaas.controller.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class LiveStatusTest {
    private static final URI ONE = URI.create("http://127.0.0.1:9094/api/");
    private static final URI TWO = URI.create("http://127.0.0.1:9098/api/");

    @Test
    void theLeadingControllerAnswersWithBrokerHealthDrainsAndLag() {
        Map<String, String> answers = new HashMap<>();
        answers.put("http://127.0.0.1:9094/api/v1/cluster", "{\"controller\":{\"holder\":\"controller-1#a\",\"leader\":false,\"epoch\":-1}}");
        answers.put("http://127.0.0.1:9098/api/v1/cluster", """
                {"controller":{"holder":"controller-2#b","leader":true,"epoch":4},"assignmentVersion":9,"handoffsInFlight":1,
                 "brokers":[{"id":1,"alive":true,"caughtUp":true,"drained":false,"owns":{"partitions":4,"groupSlots":50,"txnSlots":50}},
                            {"id":2,"alive":true,"caughtUp":false,"drained":true,"owns":{"partitions":0,"groupSlots":0,"txnSlots":0}}]}""");
        answers.put("http://127.0.0.1:9098/api/v1/groups", "[{\"groupId\":\"billing\",\"totalLag\":15},{\"groupId\":\"idle\",\"totalLag\":null}]");

        String out = LiveStatus.format(List.of(ONE, TWO), u -> Optional.ofNullable(answers.get(u.toString())));

        assertThat(out).startsWith("live (REST API http://127.0.0.1:9098/api/v1):\n")
                .contains("controller controller-2#b leads under epoch 4, assignment version 9, 1 handoffs in flight")
                .containsPattern("broker 1 +alive +caught up +owns 4 partitions, 50 group slots, 50 txn slots")
                .containsPattern("broker 2 +alive +behind +drained +owns 0 partitions")
                .contains("groups:    2 (lag: billing 15, idle ?)");
    }

    @Test
    void withoutAnAnsweringLeaderItSaysSoInOneLine() {
        String out = LiveStatus.format(List.of(ONE, TWO), u -> Optional.empty());
        assertThat(out).startsWith("live:        no controller answered on its REST API (http://127.0.0.1:9094/api/v1 and 1 more)").hasLineCount(1);
        assertThat(LiveStatus.format(List.of(), u -> Optional.of("not json"))).contains("none known");
    }

    @Test
    void theRunDirectoryGivesEachControllersPortAndAUrlOverridesIt() {
        RunDir run = new RunDir(OptionalInt.of(9092), 2, 2, Map.of(), Map.of());
        assertThat(ClusterStatus.restApis(run, null)).containsExactly(URI.create("http://127.0.0.1:9094/api/"), URI.create("http://127.0.0.1:9098/api/"));
        assertThat(ClusterStatus.restApis(run, "https://ctl.example:8443")).containsExactly(URI.create("https://ctl.example:8443/api/"));
        assertThat(ClusterStatus.restApis(RunDir.empty(), null)).isEmpty();
    }

    /** keytool, bounded: a self-signed key pair for 127.0.0.1 in {@code store}, its certificate as PEM in {@code pem}. */
    static void selfSigned(java.nio.file.Path store, java.nio.file.Path pem) throws Exception {
        String keytool = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        for (List<String> args : List.of(
                List.of("-genkeypair", "-alias", "rest", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kaas-rest-test",
                        "-ext", "SAN=ip:127.0.0.1", "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12",
                        "-storepass", "test-secret"),
                List.of("-exportcert", "-rfc", "-alias", "rest", "-keystore", store.toString(), "-storepass", "test-secret",
                        "-file", pem.toString()))) {
            List<String> cmd = new java.util.ArrayList<>(List.of(keytool, "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
            cmd.addAll(args);
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("keytool did not finish: " + args);
            }
            assertThat(p.exitValue()).as("keytool %s", args.get(0)).isZero();
        }
    }

    @Test
    void anHttpsControllerIsCheckedAgainstKaasRestCa(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
        java.nio.file.Path store = tmp.resolve("rest.p12");
        java.nio.file.Path pem = tmp.resolve("ca.pem");
        selfSigned(store, pem);
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        try (var in = java.nio.file.Files.newInputStream(store)) {
            ks.load(in, "test-secret".toCharArray());
        }
        var kmf = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, "test-secret".toCharArray());
        var tls = javax.net.ssl.SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);
        var server = com.sun.net.httpserver.HttpsServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(tls));
        server.createContext("/api/v1/cluster", ex -> {
            byte[] body = "{\"ok\":true}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
        try {
            URI cluster = URI.create("https://127.0.0.1:" + server.getAddress().getPort() + "/api/v1/cluster");
            assertThat(LiveStatus.http(null, pem).apply(cluster)).contains("{\"ok\":true}");
            assertThat(LiveStatus.http(null, null).apply(cluster)).as("not trusted by the JVM's defaults: no answer").isEmpty();
        } finally {
            server.stop(0);
        }

        java.nio.file.Path empty = java.nio.file.Files.writeString(tmp.resolve("empty.pem"), "no certificate here\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LiveStatus.http(null, empty))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("KAAS_REST_CA");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LiveStatus.http(null, tmp.resolve("missing.pem")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot be read");
    }
}

