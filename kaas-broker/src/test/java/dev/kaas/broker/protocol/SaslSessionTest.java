package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.auth.SaslEndpoint;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

class SaslSessionTest {
    static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    /** System.nanoTime may be negative: nothing may take 0 for "never". */
    final AtomicLong nanos = new AtomicLong(-5_000_000_000L);

    static SaslEndpoint endpoint(Map<String, String> extra) {
        Map<String, String> settings = new HashMap<>(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS));
        settings.putAll(extra);
        return SaslEndpoint.create("SASL_PLAINTEXT", name -> Optional.ofNullable(settings.get(name)), (user, mechanism) -> null);
    }

    SaslSession session(Map<String, String> extra) {
        return new SaslSession(endpoint(extra), nanos::get);
    }

    static SaslAuthenticateRequestData plain(String user, String password) {
        return new SaslAuthenticateRequestData().setAuthBytes(("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8));
    }

    static SaslHandshakeRequestData handshake(String mechanism) {
        return new SaslHandshakeRequestData().setMechanism(mechanism);
    }

    void login(SaslSession s, String user, String password) {
        assertThat(s.admit(ApiKeys.SASL_HANDSHAKE, true)).isEqualTo(SaslSession.Verdict.SASL);
        s.handshake(handshake("PLAIN"), (short) 1);
        assertThat(s.admit(ApiKeys.SASL_AUTHENTICATE, true)).isEqualTo(SaslSession.Verdict.SASL);
        s.authenticate(plain(user, password));
    }

    @Test
    void beforeAuthenticationOnlyOneApiVersionsThenTheHandshakeAreServed() {
        SaslSession s = session(Map.of());
        assertThat(s.admit(ApiKeys.API_VERSIONS, false)).as("an unsupported version, answered in v0, keeps the turn")
                .isEqualTo(SaslSession.Verdict.PASS);
        assertThat(s.admit(ApiKeys.API_VERSIONS, true)).isEqualTo(SaslSession.Verdict.PASS);
        assertThat(s.admit(ApiKeys.API_VERSIONS, true)).as("a second one").isEqualTo(SaslSession.Verdict.CLOSE);
        assertThat(session(Map.of()).admit(ApiKeys.METADATA, true)).isEqualTo(SaslSession.Verdict.CLOSE);
        assertThat(session(Map.of()).admit(ApiKeys.SASL_AUTHENTICATE, true)).as("before a handshake").isEqualTo(SaslSession.Verdict.CLOSE);
        assertThat(s.principal()).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    @Test
    void plainWithTheJaasUsersPasswordAuthenticatesAsThatUser() {
        SaslSession s = session(Map.of());
        assertThat(s.admit(ApiKeys.SASL_HANDSHAKE, true)).isEqualTo(SaslSession.Verdict.SASL);
        var hs = (SaslHandshakeResponseData) s.handshake(handshake("PLAIN"), (short) 1);
        assertThat(hs.errorCode()).isZero();
        assertThat(hs.mechanisms()).containsExactly("PLAIN");
        assertThat(s.admit(ApiKeys.METADATA, true)).as("a request in the middle of the exchange: ILLEGAL_SASL_STATE, then closed")
                .isEqualTo(SaslSession.Verdict.REFUSE);
        assertThat(s.admit(ApiKeys.SASL_AUTHENTICATE, true)).as("and the exchange is over").isEqualTo(SaslSession.Verdict.CLOSE);

        SaslSession t = session(Map.of());
        login(t, "alice", "alice-secret");
        assertThat(t.authenticated()).isTrue();
        assertThat(t.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
        assertThat(t.admit(ApiKeys.METADATA, true)).isEqualTo(SaslSession.Verdict.PASS);
        assertThat(t.admit(ApiKeys.SASL_HANDSHAKE, true)).as("without re-authentication: Apache's ILLEGAL_SASL_STATE handler")
                .isEqualTo(SaslSession.Verdict.PASS);
        assertThat(t.admit(ApiKeys.SASL_AUTHENTICATE, true)).isEqualTo(SaslSession.Verdict.PASS);
    }

    @Test
    void aWrongPasswordOrAnUnknownUserFailsWithApachesMessageAndNoPrincipal() {
        for (String[] attempt : List.of(new String[] {"alice", "wrong"}, new String[] {"mallory", "alice-secret"})) {
            SaslSession s = session(Map.of());
            s.handshake(handshake("PLAIN"), (short) 1);
            assertThatThrownBy(() -> s.authenticate(plain(attempt[0], attempt[1]))).isInstanceOfSatisfying(SaslSession.Failure.class, f -> {
                var r = (SaslAuthenticateResponseData) f.response;
                assertThat(r.errorCode()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
                assertThat(r.errorMessage()).isEqualTo("Authentication failed: Invalid username or password");
            });
            assertThat(s.authenticated()).isFalse();
            assertThat(s.principal()).isEqualTo(KafkaPrincipal.ANONYMOUS);
            assertThat(s.admit(ApiKeys.METADATA, true)).isEqualTo(SaslSession.Verdict.CLOSE);
        }
    }

    @Test
    void aMechanismNotEnabledIsUnsupportedSaslMechanismListingTheEnabledOnes() {
        SaslSession s = session(Map.of());
        assertThatThrownBy(() -> s.handshake(handshake("SCRAM-SHA-512"), (short) 1)).isInstanceOfSatisfying(SaslSession.Failure.class, f -> {
            var r = (SaslHandshakeResponseData) f.response;
            assertThat(r.errorCode()).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM.code());
            assertThat(r.mechanisms()).containsExactly("PLAIN");
        });
        assertThat(s.admit(ApiKeys.SASL_AUTHENTICATE, true)).isEqualTo(SaslSession.Verdict.CLOSE);
    }

    @Test
    void handshakeV0MeansRawTokens() {
        SaslSession s = session(Map.of());
        s.handshake(handshake("PLAIN"), (short) 0);
        assertThat(s.raw()).isTrue();
        assertThat(s.rawToken("\0bob\0bob-secret".getBytes(StandardCharsets.UTF_8))).as("an empty one, sent as Apache sends it").isEmpty();
        assertThat(s.raw()).isFalse();
        assertThat(s.principal()).isEqualTo(new KafkaPrincipal("User", "bob"));

        SaslSession bad = session(Map.of());
        bad.handshake(handshake("PLAIN"), (short) 0);
        assertThatThrownBy(() -> bad.rawToken("\0bob\0nope".getBytes(StandardCharsets.UTF_8))).isInstanceOf(SaslSession.Failure.class);
        assertThat(bad.authenticated()).isFalse();
    }

    @Test
    void withConnectionsMaxReauthMsTheSessionExpiresAndIsRenewedBySameUserReauthentication() {
        SaslSession s = session(Map.of("listener.name.sasl_plaintext.connections.max.reauth.ms", "60000"));
        s.handshake(handshake("PLAIN"), (short) 1);
        var done = (SaslAuthenticateResponseData) s.authenticate(plain("alice", "alice-secret"));
        assertThat(done.sessionLifetimeMs()).isEqualTo(60_000);

        nanos.addAndGet(59_000_000_000L);
        assertThat(s.admit(ApiKeys.PRODUCE, true)).isEqualTo(SaslSession.Verdict.PASS);
        assertThat(s.admit(ApiKeys.SASL_HANDSHAKE, true)).isEqualTo(SaslSession.Verdict.SASL);
        s.handshake(handshake("PLAIN"), (short) 1);
        assertThat(s.admit(ApiKeys.PRODUCE, true)).as("a request in the middle of re-authentication").isEqualTo(SaslSession.Verdict.REFUSE);
        assertThat(s.admit(ApiKeys.PRODUCE, true)).isEqualTo(SaslSession.Verdict.CLOSE);
    }

    @Test
    void reauthenticationRenewsTheSessionButNeverChangesThePrincipal() {
        Map<String, String> reauth = Map.of("connections.max.reauth.ms", "60000");
        SaslSession s = session(reauth);
        login(s, "alice", "alice-secret");
        nanos.addAndGet(59_000_000_000L);
        login(s, "alice", "alice-secret");
        nanos.addAndGet(59_000_000_000L);
        assertThat(s.admit(ApiKeys.FETCH, true)).as("118 s after the first login, 59 s after the second").isEqualTo(SaslSession.Verdict.PASS);
        nanos.addAndGet(2_000_000_000L);
        assertThat(s.admit(ApiKeys.FETCH, true)).as("expired").isEqualTo(SaslSession.Verdict.CLOSE);

        SaslSession t = session(reauth);
        login(t, "alice", "alice-secret");
        nanos.addAndGet(2_000_000_000L);
        t.handshake(handshake("PLAIN"), (short) 1);
        assertThatThrownBy(() -> t.authenticate(plain("bob", "bob-secret"))).isInstanceOfSatisfying(SaslSession.Failure.class,
                f -> assertThat(((SaslAuthenticateResponseData) f.response).errorMessage())
                        .isEqualTo("Cannot change principals during re-authentication from User.alice: User.bob"));
        assertThat(t.admit(ApiKeys.FETCH, true)).isEqualTo(SaslSession.Verdict.CLOSE);
    }

    @Test
    void aSecondReauthenticationWithinASecondIsAnOrdinaryRequest() {
        SaslSession s = session(Map.of("connections.max.reauth.ms", "60000"));
        login(s, "alice", "alice-secret");
        nanos.addAndGet(2_000_000_000L);
        login(s, "alice", "alice-secret");
        nanos.addAndGet(500_000_000L);
        assertThat(s.admit(ApiKeys.SASL_HANDSHAKE, true)).isEqualTo(SaslSession.Verdict.PASS);
    }

    /** kafka-clients' own SCRAM client against the session, with the credential the controller would have published. */
    @Test
    void scramWithThePublishedCredentialAuthenticatesAndAWrongPasswordDoesNot() throws Exception {
        byte[] salt = "some-salt".getBytes(StandardCharsets.UTF_8);
        var formatter = new org.apache.kafka.common.security.scram.internals.ScramFormatter(
                org.apache.kafka.common.security.scram.internals.ScramMechanism.SCRAM_SHA_512);
        var credential = formatter.generateCredential(salt, formatter.saltedPassword("carol-secret", salt, 4096), 4096);
        Map<String, String> settings = Map.of("sasl.enabled.mechanisms", "SCRAM-SHA-512",
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        SaslEndpoint endpoint = SaslEndpoint.create("SASL_PLAINTEXT", name -> Optional.ofNullable(settings.get(name)),
                (user, mechanism) -> user.equals("carol") && mechanism.equals("SCRAM-SHA-512") ? credential : null);

        assertThat(scram(endpoint, "carol", "carol-secret").principal()).isEqualTo(new KafkaPrincipal("User", "carol"));
        assertThatThrownBy(() -> scram(endpoint, "carol", "wrong")).isInstanceOfSatisfying(SaslSession.Failure.class,
                f -> assertThat(((SaslAuthenticateResponseData) f.response).errorCode()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code()));
        assertThatThrownBy(() -> scram(endpoint, "mallory", "carol-secret")).isInstanceOf(SaslSession.Failure.class);
    }

    SaslSession scram(SaslEndpoint endpoint, String user, String password) throws Exception {
        SaslSession s = new SaslSession(endpoint, nanos::get);
        s.handshake(handshake("SCRAM-SHA-512"), (short) 1);
        var client = new org.apache.kafka.common.security.scram.internals.ScramSaslClient(
                org.apache.kafka.common.security.scram.internals.ScramMechanism.SCRAM_SHA_512, callbacks -> {
                    for (var c : callbacks) {
                        if (c instanceof javax.security.auth.callback.NameCallback n) {
                            n.setName(user);
                        } else if (c instanceof javax.security.auth.callback.PasswordCallback p) {
                            p.setPassword(password.toCharArray());
                        }
                    }
                });
        byte[] token = client.evaluateChallenge(new byte[0]);
        while (!s.authenticated()) {
            var answer = (SaslAuthenticateResponseData) s.authenticate(new SaslAuthenticateRequestData().setAuthBytes(token));
            token = client.evaluateChallenge(answer.authBytes());
        }
        assertThat(client.isComplete()).as("the server proved itself to the client").isTrue();
        return s;
    }

    /** The unsecured validator, named explicitly: a token's expiry ends the session even without connections.max.reauth.ms. */
    @Test
    void anOauthbearerSessionExpiresWithItsToken() throws Exception {
        Map<String, String> settings = Map.of("sasl.enabled.mechanisms", "OAUTHBEARER",
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
                "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler");
        SaslEndpoint endpoint = SaslEndpoint.create("SASL_PLAINTEXT", name -> Optional.ofNullable(settings.get(name)), (u, m) -> null);
        long nowMs = System.currentTimeMillis();
        var b64 = java.util.Base64.getUrlEncoder().withoutPadding();
        String jwt = b64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(("{\"sub\":\"erin\",\"iat\":" + nowMs / 1000 + ",\"exp\":" + (nowMs / 1000 + 60) + "}")
                .getBytes(StandardCharsets.UTF_8)) + ".";
        SaslSession s = new SaslSession(endpoint, nanos::get, () -> nowMs);
        s.handshake(handshake("OAUTHBEARER"), (short) 1);
        var done = (SaslAuthenticateResponseData) s.authenticate(new SaslAuthenticateRequestData().setAuthBytes(
                new org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerClientInitialResponse(jwt, null,
                        org.apache.kafka.common.security.auth.SaslExtensions.empty()).toBytes()));

        assertThat(s.principal()).isEqualTo(new KafkaPrincipal("User", "erin"));
        assertThat(done.sessionLifetimeMs()).isBetween(59_000L, 60_000L);
        nanos.addAndGet(59_000_000_000L);
        assertThat(s.admit(ApiKeys.FETCH, true)).isEqualTo(SaslSession.Verdict.PASS);
        nanos.addAndGet(1_500_000_000L);
        assertThat(s.admit(ApiKeys.FETCH, true)).as("the token expired").isEqualTo(SaslSession.Verdict.CLOSE);
    }

    @Test
    void startUpRefusesWhatItCannotServe() {
        assertThatThrownBy(() -> SaslEndpoint.create("SASL_PLAINTEXT", name -> Optional.empty(), (user, mechanism) -> null))
                .hasMessageContaining("GSSAPI").hasMessageContaining("Kerberos is not supported");
        assertThatThrownBy(() -> SaslEndpoint.create("SASL_PLAINTEXT",
                name -> Optional.ofNullable(Map.of("sasl.enabled.mechanisms", "PLAIN").get(name)), (user, mechanism) -> null))
                .hasMessageContaining("listener.name.sasl_plaintext.plain.sasl.jaas.config");
        assertThatThrownBy(() -> endpoint(Map.of("sasl.enabled.mechanisms", "PLAIN,DIGEST-MD5")))
                .hasMessageContaining("DIGEST-MD5 is not served");
        assertThatThrownBy(() -> endpoint(Map.of("sasl.enabled.mechanisms", "OAUTHBEARER",
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;")))
                .as("unsigned tokens only when asked for").hasMessageContaining("OAUTHBEARER needs listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class");
        assertThatThrownBy(() -> endpoint(Map.of("sasl.enabled.mechanisms", "OAUTHBEARER",
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
                "sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler")))
                .as("the JWKS validator without a JWKS").hasMessageContaining("OAUTHBEARER validator");
    }
}
