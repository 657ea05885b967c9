package dev.kaas.broker.protocol;

import dev.kaas.broker.auth.SaslEndpoint;
import java.util.function.LongSupplier;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.authenticator.SaslInternalConfigs;

/**
 * One connection's SASL authentication on a SASL_PLAINTEXT or SASL_SSL listener, as Apache 3.7's
 * {@code SaslServerAuthenticator}: before it completes only ApiVersions (once, first),
 * SaslHandshake and then SaslAuthenticate are served, and anything else closes the connection;
 * a SaslHandshake v0 switches to KIP-43's raw tokens (size-prefixed, no request header). With
 * {@code connections.max.reauth.ms} set, the session expires (KIP-368): the client re-authenticates
 * on the same connection with the same mechanism and principal, and a request after expiry closes
 * the connection. Deterministic, no I/O: {@link RequestPipeline} asks it about every request.
 */
final class SaslSession {
    /** Apache's KafkaChannel: a re-authentication sooner than this after the last one is not one. */
    static final long MIN_REAUTH_INTERVAL_NANOS = 1_000_000_000L;
    /** About a century: the longest session this counts in nanoseconds. */
    static final long MAX_LIFETIME_MS = 100L * 365 * 24 * 3600 * 1000;

    enum State { HANDSHAKE_OR_VERSIONS, HANDSHAKE, AUTHENTICATE, AUTHENTICATE_RAW, COMPLETE, REAUTH_AUTHENTICATE, FAILED }

    /** What to do with a request whose header was read. */
    enum Verdict {
        /** Served as on any connection. */
        PASS,
        /** Answered by this session ({@link #handshake}, {@link #authenticate}). */
        SASL,
        /**
         * Not allowed now: the connection closes without an answer, as Apache's (after the failed
         * authentication delay while the connection has not authenticated).
         */
        CLOSE,
        /**
         * Another request in the middle of the SaslAuthenticate exchange: answered with its own
         * ILLEGAL_SASL_STATE error response after the delay, then closed, as Apache's
         * "Unexpected Kafka request of type X during SASL authentication".
         */
        REFUSE
    }

    /** Authentication failed: {@code response} (if any) goes out after Apache's delay, then the connection closes. */
    static final class Failure extends RuntimeException {
        final transient ApiMessage response;

        Failure(String message, ApiMessage response) {
            super(message, null, false, false);
            this.response = response;
        }
    }

    private final SaslEndpoint endpoint;
    private final LongSupplier nanos;
    /** Wall-clock milliseconds: a token's expiry is a point in time. */
    private final LongSupplier millis;
    private State state = State.HANDSHAKE_OR_VERSIONS;
    private SaslServer server;
    private String mechanism;
    private KafkaPrincipal principal;
    /** When the session expires (System.nanoTime scale), or null: it does not. */
    private Long expiresAtNanos;
    /** When the last re-authentication began, or null: none yet. */
    private Long lastReauthStartNanos;
    /** A re-authentication that asked for another mechanism: its first token fails it (Apache's REAUTH_BAD_MECHANISM). */
    private String badMechanism;

    SaslSession(SaslEndpoint endpoint, LongSupplier nanos) {
        this(endpoint, nanos, System::currentTimeMillis);
    }

    SaslSession(SaslEndpoint endpoint, LongSupplier nanos, LongSupplier millis) {
        this.endpoint = endpoint;
        this.nanos = nanos;
        this.millis = millis;
    }

    State state() {
        return state;
    }

    /** Authenticated, possibly re-authenticating: requests carry {@link #principal()}. */
    boolean authenticated() {
        return principal != null && state != State.FAILED;
    }

    /** The next frame is a raw SASL token, not a request. */
    boolean raw() {
        return state == State.AUTHENTICATE_RAW;
    }

    KafkaPrincipal principal() {
        return principal == null ? KafkaPrincipal.ANONYMOUS : principal;
    }

    /**
     * @param versionSupported whether the request's version is served: an ApiVersions the client
     *                         must retry at v0 does not use up its one turn
     */
    Verdict admit(ApiKeys key, boolean versionSupported) {
        switch (state) {
            case HANDSHAKE_OR_VERSIONS:
                if (key == ApiKeys.API_VERSIONS) {
                    if (versionSupported) {
                        state = State.HANDSHAKE;
                    }
                    return Verdict.PASS;
                }
                return key == ApiKeys.SASL_HANDSHAKE ? Verdict.SASL : Verdict.CLOSE;
            case HANDSHAKE:
                return key == ApiKeys.SASL_HANDSHAKE ? Verdict.SASL : Verdict.CLOSE;
            case AUTHENTICATE:
            case REAUTH_AUTHENTICATE:
                if (key == ApiKeys.SASL_AUTHENTICATE) {
                    return versionSupported ? Verdict.SASL : Verdict.CLOSE;
                }
                state = State.FAILED;
                disposeServer();
                return Verdict.REFUSE;
            case COMPLETE:
                if (key == ApiKeys.SASL_HANDSHAKE && expiresAtNanos != null
                        && (lastReauthStartNanos == null || nanos.getAsLong() - lastReauthStartNanos >= MIN_REAUTH_INTERVAL_NANOS)) {
                    return Verdict.SASL;
                }
                if (expiresAtNanos != null && nanos.getAsLong() - expiresAtNanos > 0) {
                    // Apache's SocketServer: a request on an expired session closes the connection.
                    return Verdict.CLOSE;
                }
                // After authentication SaslHandshake and SaslAuthenticate are ordinary requests (ILLEGAL_SASL_STATE).
                return Verdict.PASS;
            default:
                return Verdict.CLOSE;
        }
    }

    /** A SaslHandshake the session admitted. */
    ApiMessage handshake(SaslHandshakeRequestData request, short version) {
        String wanted = request.mechanism();
        if (state == State.COMPLETE) {
            // KIP-368: the same mechanism again; the authenticated principal serves requests meanwhile.
            lastReauthStartNanos = nanos.getAsLong();
            state = State.REAUTH_AUTHENTICATE;
            if (version < 1) {
                throw fail("re-authentication needs SaslHandshake v1", null);
            }
        }
        SaslHandshakeResponseData ok = new SaslHandshakeResponseData().setErrorCode(Errors.NONE.code())
                .setMechanisms(endpoint.mechanisms());
        if (!endpoint.enabled(wanted)) {
            throw fail("Unsupported SASL mechanism " + wanted, new SaslHandshakeResponseData()
                    .setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()).setMechanisms(endpoint.mechanisms()));
        }
        if (state == State.REAUTH_AUTHENTICATE) {
            if (!wanted.equals(mechanism)) {
                badMechanism = String.format("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'",
                        wanted, mechanism);
                return ok;
            }
        } else {
            mechanism = wanted;
            state = version >= 1 ? State.AUTHENTICATE : State.AUTHENTICATE_RAW;
        }
        server = endpoint.newServer(wanted);
        return ok;
    }

    /** A SaslAuthenticate the session admitted. */
    ApiMessage authenticate(SaslAuthenticateRequestData request) {
        boolean reauth = state == State.REAUTH_AUTHENTICATE;
        if (badMechanism != null) {
            throw fail(badMechanism, null);
        }
        byte[] challenge;
        try {
            challenge = server.evaluateResponse(request.authBytes());
        } catch (SaslAuthenticationException e) {
            throw fail(e.getMessage(), failed(e.getMessage()));
        } catch (SaslException | RuntimeException e) {
            // As Apache: the SaslException's own text may say whether the user exists; the client gets none of it.
            String message = "Authentication failed during " + (reauth ? "re-authentication" : "authentication")
                    + " due to invalid credentials with SASL mechanism " + mechanism;
            throw fail(message, failed(message));
        }
        long lifetimeMs = server.isComplete() ? completed() : 0L;
        return new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                .setAuthBytes(challenge == null ? new byte[0] : challenge).setSessionLifetimeMs(lifetimeMs);
    }

    /**
     * A raw token after SaslHandshake v0.
     *
     * @return the challenge to send back size-prefixed, or null for none
     */
    byte[] rawToken(byte[] token) {
        byte[] challenge;
        try {
            challenge = server.evaluateResponse(token);
        } catch (SaslException | RuntimeException e) {
            throw fail("authentication failed: " + e.getMessage(), null);
        }
        if (server.isComplete()) {
            completed();
        }
        return challenge;
    }

    /**
     * The exchange completed: the principal it settled on, and when the session expires, as
     * Apache's ReauthInfo: after {@code connections.max.reauth.ms}, or when the credential does
     * (an OAUTHBEARER token's expiry), whichever is first; never, when neither is set.
     */
    private long completed() {
        KafkaPrincipal settled = SaslEndpoint.principal(server);
        Object credentialExpiry = server.getNegotiatedProperty(SaslInternalConfigs.CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY);
        if (principal != null && !principal.equals(settled)) {
            String message = String.format("Cannot change principals during re-authentication from %s.%s: %s.%s",
                    principal.getPrincipalType(), principal.getName(), settled.getPrincipalType(), settled.getName());
            throw fail(message, failed(message));
        }
        principal = settled;
        state = State.COMPLETE;
        disposeServer();
        long maxReauthMs = endpoint.reauthMs(mechanism);
        long lifetimeMs = 0;
        if (credentialExpiry instanceof Long expiresAtMs) {
            long left = Math.max(0, expiresAtMs - millis.getAsLong());
            lifetimeMs = maxReauthMs > 0 ? Math.min(left, maxReauthMs) : left;
        } else if (maxReauthMs > 0) {
            lifetimeMs = maxReauthMs;
        }
        boolean expires = credentialExpiry instanceof Long || maxReauthMs > 0;
        // Bounded so that the nanoseconds cannot overflow: a token valid for centuries is one valid for a century.
        expiresAtNanos = expires ? nanos.getAsLong() + Math.min(lifetimeMs, MAX_LIFETIME_MS) * 1_000_000L : null;
        return lifetimeMs;
    }

    private static SaslAuthenticateResponseData failed(String message) {
        return new SaslAuthenticateResponseData().setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(message)
                .setAuthBytes(new byte[0]);
    }

    private Failure fail(String message, ApiMessage response) {
        state = State.FAILED;
        disposeServer();
        return new Failure(message, response);
    }

    private void disposeServer() {
        if (server != null) {
            try {
                server.dispose();
            } catch (SaslException ignored) {
                // Nothing is held that matters after the exchange.
            }
        }
    }
}
