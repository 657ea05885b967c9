package dev.kaas.broker.auth;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslServer;
import org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCredentialCallback;

/**
 * The SASL side of one SASL_PLAINTEXT or SASL_SSL listener, from Apache's settings under
 * Apache's names: {@code sasl.enabled.mechanisms} (the listener's
 * {@code listener.name.<l>.sasl.enabled.mechanisms} first), each mechanism's JAAS configuration
 * ({@code listener.name.<l>.<mechanism>.sasl.jaas.config}, else the JAAS file named by
 * {@code java.security.auth.login.config}, section {@code <l>.KafkaServer} or
 * {@code KafkaServer}, as Apache's {@link JaasContext} looks them up),
 * {@code connections.max.reauth.ms} (KIP-368; per listener and mechanism as Apache) and
 * {@code sasl.server.max.receive.size}.
 *
 * <p>Mechanisms are kafka-clients' own servers: PLAIN is {@link PlainSaslServer} with Apache's
 * default {@link PlainServerCallbackHandler}, which checks a password against the
 * {@code user_<name>="<password>"} options of the JAAS entry; SCRAM-SHA-256 and SCRAM-SHA-512
 * are {@link ScramSaslServer} with the credentials the controller published
 * (AlterUserScramCredentials, {@link ScramCredentials}), and need a JAAS entry as in Apache
 * ({@code org.apache.kafka.common.security.scram.ScramLoginModule required;}); OAUTHBEARER is
 * {@link OAuthBearerSaslServer} with the validator named by
 * {@code listener.name.<l>.oauthbearer.sasl.server.callback.handler.class}: Apache's KIP-768
 * {@link OAuthBearerValidatorCallbackHandler} (JWTs checked against a JWKS file or URL with
 * Apache's {@code sasl.oauthbearer.*} settings), or Apache's unsecured-JWS validator, which
 * accepts unsigned tokens and so is used only when named explicitly (Apache's default, not
 * kaas's). GSSAPI (Kerberos) is not served: a listener that enables it fails start-up with one
 * line, rather than failing every client's handshake later.
 */
public final class SaslEndpoint {
    public static final String PLAIN = PlainSaslServer.PLAIN_MECHANISM;
    public static final String OAUTHBEARER = OAuthBearerLoginModule.OAUTHBEARER_MECHANISM;
    /** Apache's defaults: {@code sasl.enabled.mechanisms}, {@code sasl.server.max.receive.size}. */
    public static final String DEFAULT_MECHANISMS = "GSSAPI";
    public static final int DEFAULT_MAX_RECEIVE = 524_288;
    public static final long DEFAULT_FAILED_AUTHENTICATION_DELAY_MS = 100;

    private final String listener;
    private final List<String> mechanisms;
    private final Map<String, PlainServerCallbackHandler> plain;
    private final ScramCredentials scram;
    /** The OAUTHBEARER token validator, when the mechanism is enabled. */
    private final AuthenticateCallbackHandler oauth;
    private final Map<String, Long> reauthMs;
    private final int maxReceiveSize;
    private final long failedAuthenticationDelayMs;

    private SaslEndpoint(String listener, List<String> mechanisms, Map<String, PlainServerCallbackHandler> plain, ScramCredentials scram,
                         AuthenticateCallbackHandler oauth, Map<String, Long> reauthMs, int maxReceiveSize, long failedAuthenticationDelayMs) {
        this.scram = scram;
        this.oauth = oauth;
        this.listener = listener;
        this.mechanisms = List.copyOf(mechanisms);
        this.plain = Map.copyOf(plain);
        this.reauthMs = Map.copyOf(reauthMs);
        this.maxReceiveSize = maxReceiveSize;
        this.failedAuthenticationDelayMs = failedAuthenticationDelayMs;
    }

    /**
     * @param settings a setting by its Apache name (the broker's configuration), raw: a JAAS
     *                 password is taken literally
     * @throws IllegalArgumentException one line naming the listener and what is wrong
     */
    public static SaslEndpoint create(String listener, Function<String, Optional<String>> settings, ScramCredentials scram) {
        String prefix = "listener.name." + listener.toLowerCase(Locale.ROOT) + ".";
        Function<String, Optional<String>> scoped = name -> settings.apply(prefix + name).or(() -> settings.apply(name));
        List<String> mechanisms = new ArrayList<>();
        for (String m : scoped.apply("sasl.enabled.mechanisms").orElse(DEFAULT_MECHANISMS).split(",")) {
            if (!m.isBlank() && !mechanisms.contains(m.trim())) {
                mechanisms.add(m.trim());
            }
        }
        if (mechanisms.isEmpty()) {
            throw new IllegalArgumentException("listener " + listener + ": sasl.enabled.mechanisms is empty");
        }
        Map<String, PlainServerCallbackHandler> plain = new LinkedHashMap<>();
        AuthenticateCallbackHandler oauth = null;
        Map<String, Long> reauth = new LinkedHashMap<>();
        for (String m : mechanisms) {
            if (!m.equals(PLAIN) && !m.equals(OAUTHBEARER) && ScramMechanism.forMechanismName(m) == null) {
                throw new IllegalArgumentException("listener " + listener + ": SASL mechanism " + m + " is not served"
                        + (m.equals("GSSAPI") ? " (Kerberos is not supported; Apache's default sasl.enabled.mechanisms is GSSAPI:"
                        + " set it, e.g. to PLAIN or SCRAM-SHA-512)" : "; kaas serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER"));
            }
            String jaasKey = m.toLowerCase(Locale.ROOT) + ".sasl.jaas.config";
            Map<String, Object> jaas = new LinkedHashMap<>();
            settings.apply(prefix + jaasKey).ifPresent(v -> jaas.put(jaasKey, new Password(v)));
            JaasContext context;
            try {
                context = JaasContext.loadServerContext(ListenerName.normalised(listener), m, jaas);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("listener " + listener + ": no JAAS configuration for " + m + " (set " + prefix
                        + jaasKey + "): " + e.getMessage(), e);
            }
            if (m.equals(PLAIN)) {
                PlainServerCallbackHandler handler = new PlainServerCallbackHandler();
                handler.configure(Map.of(), m, context.configurationEntries());
                plain.put(m, handler);
            } else if (m.equals(OAUTHBEARER)) {
                oauth = oauthValidator(listener, prefix, settings, context);
            }
            String mechanismReauth = prefix + m.toLowerCase(Locale.ROOT) + ".connections.max.reauth.ms";
            reauth.put(m, number(listener, "connections.max.reauth.ms",
                    settings.apply(mechanismReauth).or(() -> scoped.apply("connections.max.reauth.ms")).orElse("0")));
        }
        long maxReceive = number(listener, "sasl.server.max.receive.size",
                scoped.apply("sasl.server.max.receive.size").orElse(Integer.toString(DEFAULT_MAX_RECEIVE)));
        if (maxReceive < 1 || maxReceive > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("listener " + listener + ": sasl.server.max.receive.size " + maxReceive + " is out of range");
        }
        // A broker-wide setting in Apache, not per listener.
        long delay = number(listener, "connection.failed.authentication.delay.ms",
                settings.apply("connection.failed.authentication.delay.ms").orElse(Long.toString(DEFAULT_FAILED_AUTHENTICATION_DELAY_MS)));
        if (delay < 0) {
            throw new IllegalArgumentException("listener " + listener + ": connection.failed.authentication.delay.ms must not be negative");
        }
        return new SaslEndpoint(listener, mechanisms, plain, scram, oauth, reauth, (int) maxReceive, delay);
    }

    /**
     * The OAUTHBEARER validator Apache's setting names: the KIP-768 JWKS validator with the
     * {@code sasl.oauthbearer.*} settings (the mechanism's, the listener's, then plain, as Apache
     * looks them up), or the unsecured one only when named. No other class is loaded.
     */
    private static AuthenticateCallbackHandler oauthValidator(String listener, String prefix, Function<String, Optional<String>> settings,
                                                           JaasContext context) {
        String mechanismPrefix = prefix + "oauthbearer.";
        Function<String, Optional<String>> scoped = name -> settings.apply(mechanismPrefix + name)
                .or(() -> settings.apply(prefix + name)).or(() -> settings.apply(name));
        String handlerKey = "sasl.server.callback.handler.class";
        String handlerClass = scoped.apply(handlerKey).map(String::trim).orElse("");
        AuthenticateCallbackHandler handler;
        if (handlerClass.equals(OAuthBearerValidatorCallbackHandler.class.getName())) {
            handler = new OAuthBearerValidatorCallbackHandler();
        } else if (handlerClass.equals(OAuthBearerUnsecuredValidatorCallbackHandler.class.getName())) {
            handler = new OAuthBearerUnsecuredValidatorCallbackHandler();
        } else {
            throw new IllegalArgumentException("listener " + listener + ": OAUTHBEARER needs " + mechanismPrefix + handlerKey + " set to "
                    + OAuthBearerValidatorCallbackHandler.class.getName() + " (JWTs checked against sasl.oauthbearer.jwks.endpoint.url)"
                    + " or, to accept unsigned tokens, explicitly to " + OAuthBearerUnsecuredValidatorCallbackHandler.class.getName()
                    + (handlerClass.isEmpty() ? "" : "; '" + handlerClass + "' is not served"));
        }
        ConfigDef def = new ConfigDef();
        SaslConfigs.addClientSaslSupport(def);
        Map<String, String> raw = new LinkedHashMap<>();
        for (String name : def.names()) {
            if (name.startsWith("sasl.oauthbearer.")) {
                scoped.apply(name).ifPresent(v -> raw.put(name, v));
            }
        }
        try {
            Map<String, Object> parsed = new LinkedHashMap<>();
            def.parse(raw).forEach((k, v) -> {
                if (k.startsWith("sasl.oauthbearer.") && v != null) {
                    parsed.put(k, v);
                }
            });
            handler.configure(parsed, OAUTHBEARER, context.configurationEntries());
        } catch (RuntimeException e) {
            StringBuilder why = new StringBuilder(String.valueOf(e.getMessage()));
            for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                why.append(": ").append(c.getMessage());
            }
            throw new IllegalArgumentException("listener " + listener + ": OAUTHBEARER validator: " + why, e);
        }
        return handler;
    }

    private static long number(String listener, String name, String value) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("listener " + listener + ": " + name + " '" + value + "' is not a number");
        }
    }

    public String listener() {
        return listener;
    }

    /** In the listener's configured order: what a SaslHandshake response lists. */
    public List<String> mechanisms() {
        return mechanisms;
    }

    public boolean enabled(String mechanism) {
        return mechanisms.contains(mechanism);
    }

    /** A new server for one authentication with {@code mechanism}, which must be enabled. */
    public SaslServer newServer(String mechanism) {
        if (!enabled(mechanism)) {
            throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not enabled on listener " + listener);
        }
        PlainServerCallbackHandler handler = plain.get(mechanism);
        if (handler != null) {
            return new PlainSaslServer(handler);
        }
        if (mechanism.equals(OAUTHBEARER)) {
            return new OAuthBearerSaslServer(oauth);
        }
        try {
            return new ScramSaslServer(ScramMechanism.forMechanismName(mechanism), Map.of(), callbacks -> {
                String user = null;
                for (Callback c : callbacks) {
                    if (c instanceof NameCallback name) {
                        user = name.getDefaultName();
                    } else if (c instanceof DelegationTokenCredentialCallback) {
                        // No delegation tokens: the token's credential stays unknown, and the server fails the exchange.
                        continue;
                    } else if (c instanceof ScramCredentialCallback credential) {
                        credential.scramCredential(user == null ? null : scram.find(user, mechanism));
                    } else {
                        throw new UnsupportedCallbackException(c);
                    }
                }
            });
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks " + mechanism + "'s hash", e);
        }
    }

    /** Apache's DefaultKafkaPrincipalBuilder: {@code User:} and the authorization id the exchange settled on. */
    public static KafkaPrincipal principal(SaslServer server) {
        return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, server.getAuthorizationID());
    }

    /** {@code connections.max.reauth.ms} of the mechanism: 0 means sessions never expire. */
    public long reauthMs(String mechanism) {
        return reauthMs.getOrDefault(mechanism, 0L);
    }

    /**
     * Apache's {@code connection.failed.authentication.delay.ms}: a failed authentication is
     * answered, and its connection closed, only after this long, which slows a password guesser.
     */
    public long failedAuthenticationDelayMs() {
        return failedAuthenticationDelayMs;
    }

    /** Stops what the validators run (an https JWKS's refresh thread). */
    public void close() {
        if (oauth != null) {
            oauth.close();
        }
    }

    /** The largest frame read before authentication completes. */
    public int maxReceiveSize() {
        return maxReceiveSize;
    }
}
