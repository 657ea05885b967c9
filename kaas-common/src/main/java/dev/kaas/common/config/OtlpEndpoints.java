package dev.kaas.common.config;

import java.net.URI;

/** The OTLP endpoints the processes take ({@code kaas.metrics.otlp-endpoint}, the broker's {@code kaas.tracing.otlp-endpoint}). */
public final class OtlpEndpoints {
    private OtlpEndpoints() {
    }

    /**
     * What is wrong with an endpoint the exporter would still take, or null: it is used as given,
     * so one without a path posts every push to "/", where receivers answer 404. A malformed one
     * is the exporter's to refuse, with its own message.
     */
    public static String warning(String endpoint) {
        return warning("kaas.metrics.otlp-endpoint", endpoint, "metrics");
    }

    /** As {@link #warning(String)} for the key {@code key} of the signal {@code signal} ("metrics", "traces"). */
    public static String warning(String key, String endpoint, String signal) {
        try {
            String path = URI.create(endpoint).getPath();
            if (path == null || path.isEmpty() || path.equals("/")) {
                return key + " " + endpoint + " has no path: OTLP/HTTP receivers take " + signal + " at /v1/" + signal;
            }
        } catch (IllegalArgumentException e) {
            return null;
        }
        return null;
    }
}
