package dev.kaas.common.config;

import java.net.URI;

/** The OTLP endpoint both processes take ({@code kaas.metrics.otlp-endpoint}). */
public final class OtlpEndpoints {
    private OtlpEndpoints() {
    }

    /**
     * What is wrong with an endpoint the exporter would still take, or null: it is used as given,
     * so one without a path posts every push to "/", where receivers answer 404. A malformed one
     * is the exporter's to refuse, with its own message.
     */
    public static String warning(String endpoint) {
        try {
            String path = URI.create(endpoint).getPath();
            if (path == null || path.isEmpty() || path.equals("/")) {
                return "kaas.metrics.otlp-endpoint " + endpoint + " has no path: OTLP/HTTP receivers take metrics at /v1/metrics";
            }
        } catch (IllegalArgumentException e) {
            return null;
        }
        return null;
    }
}
