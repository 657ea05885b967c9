package dev.kaas.common.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OtlpEndpointsTest {
    @Test
    void anEndpointWithoutAPathIsWarnedAbout() {
        assertThat(OtlpEndpoints.warning("http://collector:4318/v1/metrics")).isNull();
        assertThat(OtlpEndpoints.warning("http://collector:4318")).contains("has no path");
        assertThat(OtlpEndpoints.warning("http://collector:4318/")).contains("/v1/metrics");
        assertThat(OtlpEndpoints.warning("not a uri at all ::")).as("the exporter's to refuse").isNull();
        assertThat(OtlpEndpoints.warning("kaas.tracing.otlp-endpoint", "http://collector:4318", "traces"))
                .isEqualTo("kaas.tracing.otlp-endpoint http://collector:4318 has no path: OTLP/HTTP receivers take traces at /v1/traces");
    }
}
