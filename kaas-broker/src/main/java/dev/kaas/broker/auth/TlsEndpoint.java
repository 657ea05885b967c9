package dev.kaas.broker.auth;

import java.security.Principal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.Mode;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.ssl.SslFactory;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.jboss.logging.Logger;

/**
 * The TLS side of one SSL listener, built from Apache's {@code ssl.*} settings exactly as an
 * Apache 3.7 broker builds it: kafka-clients' {@link SslFactory} in server mode (keystores and
 * truststores of type JKS, PKCS12 or PEM, files or inline PEM, {@code ssl.client.auth},
 * {@code ssl.enabled.protocols}, {@code ssl.cipher.suites}), each setting read first under the
 * listener's prefix ({@code listener.name.<listener>.ssl.keystore.location}) then plain.
 *
 * <p>{@link #reload} is Apache's dynamic keystore update, triggered here by the files changing
 * (a Kubernetes Secret rotated under its mount): the new stores must pass Apache's checks of a
 * client listener's store update (the same distinguished name and subject alternative names
 * unless {@code ssl.allow.dn.changes} / {@code ssl.allow.san.changes}), or the old ones stay.
 * Engines are created on event loops while a reload runs on another thread: the factory in use
 * is swapped whole.
 */
public final class TlsEndpoint {
    private static final Logger LOG = Logger.getLogger(TlsEndpoint.class);

    /** Apache's definitions of the settings a server-side SSL listener reads (DescribeConfigs lists them). */
    public static final ConfigDef DEF = definitions();

    private final String listener;
    private final Function<String, Optional<String>> settings;
    private final SslPrincipalMapper principalMapper;
    private volatile SslFactory factory;
    /** The settings and store file times of the last update refused (logged once; retried when they change); reload thread only. */
    private Object refused;

    private TlsEndpoint(String listener, Function<String, Optional<String>> settings, Map<String, Object> parsed) {
        this.listener = listener;
        this.settings = settings;
        this.principalMapper = SslPrincipalMapper.fromRules((String) parsed.get(BrokerSecurityConfigs.SSL_PRINCIPAL_MAPPING_RULES_CONFIG));
        this.factory = configured(parsed);
    }

    /**
     * @param settings looks a setting up by its Apache name (the broker's configuration: an
     *                 Apache server.properties, system properties, the environment)
     * @throws IllegalArgumentException with one line naming the listener and the cause
     */
    public static TlsEndpoint create(String listener, Function<String, Optional<String>> settings) {
        try {
            return new TlsEndpoint(listener, settings, parse(listener, settings));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("listener " + listener + ": " + message(e), e);
        }
    }

    private static String message(Throwable e) {
        StringBuilder out = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            out.append(": ").append(c.getMessage());
        }
        return out.toString();
    }

    private static Map<String, Object> parse(String listener, Function<String, Optional<String>> settings) {
        String prefix = "listener.name." + listener.toLowerCase(Locale.ROOT) + ".";
        Map<String, String> raw = new HashMap<>();
        for (String name : DEF.names()) {
            settings.apply(prefix + name).or(() -> settings.apply(name)).ifPresent(v -> raw.put(name, v));
        }
        Map<String, Object> parsed = new HashMap<>(DEF.parse(raw));
        if (parsed.get(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG) == null && parsed.get(SslConfigs.SSL_KEYSTORE_KEY_CONFIG) == null) {
            // Apache would start and fail every handshake; an operator is better told now.
            throw new ConfigException("an SSL listener needs a keystore: set ssl.keystore.location (or ssl.keystore.key and "
                    + "ssl.keystore.certificate.chain for PEM)");
        }
        return parsed;
    }

    private static SslFactory configured(Map<String, Object> parsed) {
        SslFactory f = new SslFactory(Mode.SERVER);
        // SslFactory may add to the map it is given.
        f.configure(new HashMap<>(parsed));
        return f;
    }

    /** A server-side engine for a new connection, with the stores in force now. */
    public SSLEngine newEngine(String peerHost, int peerPort) {
        return factory.createSslEngine(peerHost, peerPort);
    }

    /**
     * Checks the settings and store files again; when a store file changed (or a setting), the
     * new stores replace the old ones for connections from now on, if Apache's checks pass.
     * Blocking (file reads, an in-memory handshake): never on an event loop.
     *
     * @return true when new stores are in force
     */
    public boolean reload() {
        Map<String, Object> next;
        try {
            next = parse(listener, settings);
        } catch (RuntimeException e) {
            return refuse(List.of(String.valueOf(e.getMessage())), "TLS settings of listener " + listener + " not reloaded: " + message(e));
        }
        SslFactory current = factory;
        if (!current.sslEngineFactory().shouldBeRebuilt(new HashMap<>(next))) {
            return false;
        }
        Object attempt = List.of(next, fileTimes(next));
        if (attempt.equals(refused)) {
            return false;
        }
        SslFactory replacement = null;
        try {
            // Built first, then checked against the stores in use; a file rewritten meanwhile is
            // caught by the last check, and taken at the next reload instead.
            replacement = configured(next);
            current.validateReconfiguration(new HashMap<>(next));
            if (replacement.sslEngineFactory().shouldBeRebuilt(new HashMap<>(next))) {
                replacement.close();
                return false;
            }
            factory = replacement;
            refused = null;
            LOG.infof("TLS keystore and truststore of listener %s reloaded", listener);
            return true;
        } catch (RuntimeException e) {
            if (replacement != null) {
                replacement.close();
            }
            return refuse(attempt, "TLS stores of listener " + listener + " changed but were not reloaded, the previous ones stay in use: "
                    + message(e));
        }
    }

    private boolean refuse(Object attempt, String message) {
        if (!attempt.equals(refused)) {
            LOG.error(message);
            refused = attempt;
        }
        return false;
    }

    /** The store files' modification times: a refused update is tried again once one changes. */
    private static List<Long> fileTimes(Map<String, Object> parsed) {
        List<Long> out = new ArrayList<>();
        for (String key : List.of(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG)) {
            Object location = parsed.get(key);
            long t = -1;
            if (location != null) {
                try {
                    t = java.nio.file.Files.getLastModifiedTime(java.nio.file.Path.of(location.toString())).toMillis();
                } catch (java.io.IOException | RuntimeException e) {
                    t = -2;
                }
            }
            out.add(t);
        }
        return out;
    }

    /**
     * Apache's {@code DefaultKafkaPrincipalBuilder} for SSL: the peer's certificate subject
     * through {@code ssl.principal.mapping.rules}, or ANONYMOUS without a client certificate.
     */
    public KafkaPrincipal principal(SSLSession session) {
        Principal peer;
        try {
            peer = session.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException noClientCertificate) {
            return KafkaPrincipal.ANONYMOUS;
        }
        if (!(peer instanceof X500Principal)) {
            return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, peer.getName());
        }
        try {
            return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, principalMapper.getName(peer.getName()));
        } catch (java.io.IOException e) {
            throw new IllegalStateException("ssl.principal.mapping.rules of listener " + listener + " did not map " + peer.getName(), e);
        }
    }

    public String listener() {
        return listener;
    }

    private static ConfigDef definitions() {
        ConfigDef def = new ConfigDef();
        SslConfigs.addClientSslSupport(def);
        def.define(BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG, ConfigDef.Type.STRING, "none",
                ConfigDef.ValidString.in("required", "requested", "none"), ConfigDef.Importance.MEDIUM, BrokerSecurityConfigs.SSL_CLIENT_AUTH_DOC);
        def.define(BrokerSecurityConfigs.SSL_PRINCIPAL_MAPPING_RULES_CONFIG, ConfigDef.Type.STRING,
                BrokerSecurityConfigs.DEFAULT_SSL_PRINCIPAL_MAPPING_RULES, ConfigDef.Importance.LOW,
                BrokerSecurityConfigs.SSL_PRINCIPAL_MAPPING_RULES_DOC);
        // KIP-978: whether a store update may change the certificate's subject or alternative names.
        def.define(BrokerSecurityConfigs.SSL_ALLOW_DN_CHANGES_CONFIG, ConfigDef.Type.BOOLEAN,
                BrokerSecurityConfigs.DEFAULT_SSL_ALLOW_DN_CHANGES_VALUE, ConfigDef.Importance.LOW, "");
        def.define(BrokerSecurityConfigs.SSL_ALLOW_SAN_CHANGES_CONFIG, ConfigDef.Type.BOOLEAN,
                BrokerSecurityConfigs.DEFAULT_SSL_ALLOW_SAN_CHANGES_VALUE, ConfigDef.Importance.LOW, "");
        return def;
    }
}
