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
    void onlyLoopbackCountsAsLoopback() {
        assertThat(ApiAccess.loopback("127.0.0.1")).isTrue();
        assertThat(ApiAccess.loopback("::1")).isTrue();
        assertThat(ApiAccess.loopback("localhost")).isTrue();
        assertThat(ApiAccess.loopback("0.0.0.0")).isFalse();
        assertThat(ApiAccess.loopback("no-such-host.invalid")).isFalse();
    }
}
