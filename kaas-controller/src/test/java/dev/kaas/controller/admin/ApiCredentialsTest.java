package dev.kaas.controller.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class ApiCredentialsTest {
    private static final ApiCredentials C = ApiCredentials.parse("""
            # comment
            token admin   admin-token   # trailing comment
            token read-only viewer-token
            basic admin ops s3cret
            basic read-only auditor pa55
            token superuser nope
            basic admin with:colon pw
            token admin
            """);

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void tokensAndUsersCarryTheirRoles() {
        assertThat(C.authenticate("Bearer admin-token")).contains(ApiCredentials.Role.ADMIN);
        assertThat(C.authenticate("bearer viewer-token")).contains(ApiCredentials.Role.READ_ONLY);
        assertThat(C.authenticate(basic("ops", "s3cret"))).contains(ApiCredentials.Role.ADMIN);
        assertThat(C.authenticate(basic("auditor", "pa55"))).contains(ApiCredentials.Role.READ_ONLY);
    }

    @Test
    void anythingElseIsNobody() {
        assertThat(C.authenticate(null)).isEmpty();
        assertThat(C.authenticate("")).isEmpty();
        assertThat(C.authenticate("Bearer")).isEmpty();
        assertThat(C.authenticate("Bearer admin-token2")).isEmpty();
        assertThat(C.authenticate("Bearer nope")).as("a line with an unknown role names nobody").isEmpty();
        assertThat(C.authenticate(basic("ops", "wrong"))).isEmpty();
        assertThat(C.authenticate(basic("nobody", "s3cret"))).isEmpty();
        assertThat(C.authenticate("Basic !!!not-base64")).isEmpty();
        assertThat(C.authenticate("Basic " + Base64.getEncoder().encodeToString("no-colon".getBytes(StandardCharsets.UTF_8)))).isEmpty();
        assertThat(C.authenticate("Digest admin-token")).isEmpty();
        assertThat(C.authenticate("Bearer " + "x".repeat(10_000))).isEmpty();
    }

    @Test
    void malformedLinesAreSkippedAndNamedByNumberNeverByContent() {
        assertThat(C.problems).hasSize(3);
        assertThat(C.problems.get(0)).startsWith("line 6:");
        assertThat(String.join("\n", C.problems)).doesNotContain("nope", "pw", "with:colon");
        assertThat(ApiCredentials.parse("").isEmpty()).isTrue();
        assertThat(ApiCredentials.parse("# only a comment\n\n").problems).isEmpty();
        assertThat(ApiCredentials.parse("token admin " + "y".repeat(ApiCredentials.MAX_LINE)).isEmpty()).isTrue();
    }

    @Test
    void aHashInsideASecretIsPartOfIt() {
        ApiCredentials c = ApiCredentials.parse("basic admin ops pa#ss # the ops account\ntoken admin t#k\n#token admin commented-out\n");
        assertThat(c.authenticate(basic("ops", "pa#ss"))).contains(ApiCredentials.Role.ADMIN);
        assertThat(c.authenticate(basic("ops", "pa"))).isEmpty();
        assertThat(c.authenticate("Bearer t#k")).contains(ApiCredentials.Role.ADMIN);
        assertThat(c.authenticate("Bearer commented-out")).isEmpty();
        assertThat(c.problems).isEmpty();
    }

    @Test
    void theApiIsOpenOnlyOnALoopbackStandaloneControllerWithoutCredentials() {
        var standalone = dev.kaas.controller.config.ControllerConfig.MetadataBinding.STANDALONE;
        var kubernetes = dev.kaas.controller.config.ControllerConfig.MetadataBinding.KUBERNETES;
        assertThat(ApiAccess.decide(false, standalone, "127.0.0.1")).isEqualTo(ApiAccess.Mode.OPEN);
        assertThat(ApiAccess.decide(false, standalone, "0.0.0.0")).isEqualTo(ApiAccess.Mode.CLOSED);
        assertThat(ApiAccess.decide(false, kubernetes, "127.0.0.1")).isEqualTo(ApiAccess.Mode.CLOSED);
        assertThat(ApiAccess.decide(true, standalone, "127.0.0.1")).isEqualTo(ApiAccess.Mode.CREDENTIALS);
        assertThat(ApiAccess.decide(true, kubernetes, "0.0.0.0")).isEqualTo(ApiAccess.Mode.CREDENTIALS);
    }

    @Test
    void onlyLoopbackNamesPassTheOpenModesHostCheck() {
        assertThat(ApiAccess.loopbackHost("127.0.0.1:9094")).isTrue();
        assertThat(ApiAccess.loopbackHost("localhost:9094")).isTrue();
        assertThat(ApiAccess.loopbackHost("[::1]:9094")).isTrue();
        assertThat(ApiAccess.loopbackHost("LOCALHOST")).isTrue();
        assertThat(ApiAccess.loopbackHost("evil.example:9094")).isFalse();
        assertThat(ApiAccess.loopbackHost("127.0.0.1.evil.example")).isFalse();
        assertThat(ApiAccess.loopbackHost("localhost.evil.example")).isFalse();
        assertThat(ApiAccess.loopbackHost(null)).isFalse();
    }

    @Test
    void anotherSitesPageMayNotChangeAnything() {
        assertThat(ApiFilters.crossSite(null, null, "127.0.0.1:9094")).isFalse();
        assertThat(ApiFilters.crossSite("http://127.0.0.1:9094", "same-origin", "127.0.0.1:9094")).isFalse();
        assertThat(ApiFilters.crossSite("https://evil.example", null, "127.0.0.1:9094")).isTrue();
        assertThat(ApiFilters.crossSite(null, "cross-site", "127.0.0.1:9094")).isTrue();
        assertThat(ApiFilters.crossSite("null", null, "127.0.0.1:9094")).isTrue();
    }

    @Test
    void onlyLoopbackCountsAsLoopback() {
        assertThat(ApiAccess.loopback("127.0.0.1")).isTrue();
        assertThat(ApiAccess.loopback("::1")).isTrue();
        assertThat(ApiAccess.loopback("localhost")).isTrue();
        assertThat(ApiAccess.loopback("0.0.0.0")).isFalse();
        assertThat(ApiAccess.loopback("no-such-host.invalid")).isFalse();
    }
}
