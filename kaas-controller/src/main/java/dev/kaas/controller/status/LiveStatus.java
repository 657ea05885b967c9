package dev.kaas.controller.status;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The part of {@code ./kaas status} that only a running controller knows (broker health, drains,
 * consumer lag), asked of the leading controller's REST admin API ({@code /api/v1}): the first
 * controller whose {@code /cluster} says it leads answers. Nothing here is needed for the rest of
 * the report, which comes from the data directory and works with no controller running.
 */
final class LiveStatus {
    /** A controller busy with its first REST call (classes still loading) on a loaded machine may take seconds. */
    static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** At most this many groups get a lag entry; the count covers them all. */
    static final int GROUP_LINES = 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private LiveStatus() {
    }

    /**
     * @param apis each controller's {@code /api/v1} base, in the order to ask them
     * @param get  the body of a 200 answer to a GET, empty for anything else (no answer, 401, 503, ...)
     */
    static String format(List<URI> apis, Function<URI, Optional<String>> get) {
        for (URI api : apis) {
            Optional<JsonNode> cluster = get.apply(api.resolve("v1/cluster")).flatMap(LiveStatus::parse);
            if (cluster.isEmpty() || !cluster.get().path("controller").path("leader").asBoolean(false)) {
                continue;
            }
            StringBuilder out = new StringBuilder();
            JsonNode c = cluster.get();
            out.append("live (REST API ").append(api.resolve("v1")).append("):\n");
            out.append(String.format("  controller %s leads under epoch %d, assignment version %d, %d handoffs in flight%n",
                    c.path("controller").path("holder").asText(), c.path("controller").path("epoch").asLong(),
                    c.path("assignmentVersion").asLong(), c.path("handoffsInFlight").asInt()));
            for (JsonNode b : c.path("brokers")) {
                JsonNode owns = b.path("owns");
                out.append(String.format("  broker %-3d %-10s %-10s %-9s owns %d partitions, %d group slots, %d txn slots%n",
                        b.path("id").asInt(), b.path("alive").asBoolean() ? "alive" : "not alive",
                        b.path("caughtUp").asBoolean() ? "caught up" : "behind", b.path("drained").asBoolean() ? "drained" : "",
                        owns.path("partitions").asInt(), owns.path("groupSlots").asInt(), owns.path("txnSlots").asInt()));
            }
            get.apply(api.resolve("v1/groups")).flatMap(LiveStatus::parse).ifPresent(groups -> {
                List<String> lags = new ArrayList<>();
                for (JsonNode g : groups) {
                    if (lags.size() < GROUP_LINES) {
                        lags.add(g.path("groupId").asText() + " " + (g.hasNonNull("totalLag") ? g.path("totalLag").asLong() : "?"));
                    }
                }
                out.append("  groups:    ").append(groups.size()).append(groups.isEmpty() ? "" : " (lag: " + String.join(", ", lags)
                        + (groups.size() > lags.size() ? ", …" : "") + ")").append('\n');
            });
            return out.toString();
        }
        return "live:        no controller answered on its REST API (" + (apis.isEmpty() ? "none known" : apis.get(0).resolve("v1"))
                + (apis.size() > 1 ? " and " + (apis.size() - 1) + " more" : "")
                + "); broker health, drains and lag need a running controller (set KAAS_REST_TOKEN if it asks for credentials)\n";
    }

    /** A TLS context that trusts exactly the certificates in {@code pem}. */
    static SSLContext trusting(Path pem) {
        try (InputStream in = Files.newInputStream(pem)) {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int n = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trusted.setCertificateEntry("ca-" + n++, c);
            }
            if (n == 0) {
                throw new IllegalArgumentException("KAAS_REST_CA " + pem + " holds no PEM certificate");
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trusted);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("KAAS_REST_CA " + pem + " cannot be read: " + e.getMessage(), e);
        }
    }

    private static Optional<JsonNode> parse(String body) {
        try {
            return Optional.of(JSON.readTree(body));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** A GET with a bounded wait, with {@code KAAS_REST_TOKEN} as a bearer token when set. */
    static Function<URI, Optional<String>> http(String token) {
        return http(token, null);
    }

    /**
     * As {@link #http(String)}, an {@code https} URL's server certificate checked against the
     * certificates of {@code caFile} (PEM, {@code KAAS_REST_CA}: the authority that signed the
     * controller's REST certificate) instead of the JVM's default trust when not null.
     *
     * @throws IllegalArgumentException when {@code caFile} cannot be read or holds no certificate
     */
    static Function<URI, Optional<String>> http(String token, Path caFile) {
        // The JDK client's default, HTTP/2 by an h2c upgrade: a request without a Host header, which the API must read right.
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
        if (caFile != null) {
            builder.sslContext(trusting(caFile));
        }
        HttpClient client = builder.build();
        return uri -> {
            HttpRequest.Builder r = HttpRequest.newBuilder(uri).timeout(TIMEOUT).header("Accept", "application/json");
            if (token != null && !token.isEmpty()) {
                r.header("Authorization", "Bearer " + token);
            }
            try {
                HttpResponse<String> resp = client.send(r.build(), HttpResponse.BodyHandlers.ofString());
                return resp.statusCode() == 200 ? Optional.of(resp.body()) : Optional.empty();
            } catch (IOException e) {
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        };
    }
}
