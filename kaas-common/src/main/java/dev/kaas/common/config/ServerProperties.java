package dev.kaas.common.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * An Apache-style {@code server.properties} file, read by every kaas process started with
 * {@code kaas.config-file} ({@code ./kaas up --config FILE}, or the file mounted in Kubernetes):
 * Apache 3.7's broker names become the {@code kaas.*} keys the processes read, the broker's topic
 * defaults ({@link TopicDefaults}) keep their Apache names, keys kaas does not read are reported
 * (each once, at start-up), and a value of the wrong type or range is an {@link Invalid} whose
 * message is one line naming the key. Pure: no I/O but {@link #load}. See src/docs/running.md.
 */
public final class ServerProperties {
    /** The system property (or environment variable {@code KAAS_CONFIG_FILE}) naming the file. */
    public static final String FILE_KEY = "kaas.config-file";

    /** How an Apache value becomes a kaas value. */
    enum Kind {
        INT, LONG, BOOLEAN, DOUBLE, STRING,
        /** Apache's milliseconds; kaas reads a duration. */
        MILLIS,
        /** Apache's minutes; kaas reads a duration. */
        MINUTES
    }

    /** One Apache broker name kaas reads, the kaas key it sets, and Apache's lower bound (null: none). */
    record Setting(String apacheName, String kaasKey, Kind kind, Long min) {
        Setting(String apacheName, String kaasKey, Kind kind) {
            this(apacheName, kaasKey, kind, kind == Kind.MILLIS || kind == Kind.MINUTES ? 0L : null);
        }
    }

    static final List<Setting> SETTINGS = List.of(
            new Setting("node.id", "kaas.broker.id", Kind.INT),
            new Setting("broker.id", "kaas.broker.id", Kind.INT),
            new Setting("listeners", "kaas.broker.listeners", Kind.STRING),
            new Setting("advertised.listeners", "kaas.broker.advertised-listeners", Kind.STRING),
            new Setting("listener.security.protocol.map", "kaas.broker.listener-security-protocol-map", Kind.STRING),
            new Setting("log.dirs", "kaas.data-dir", Kind.STRING),
            new Setting("log.dir", "kaas.data-dir", Kind.STRING),
            new Setting("num.partitions", "kaas.controller.num-partitions", Kind.INT, 1L),
            new Setting("auto.create.topics.enable", "kaas.broker.auto-create-topics-enable", Kind.BOOLEAN),
            new Setting("socket.request.max.bytes", "kaas.broker.socket-request-max-bytes", Kind.INT, 1L),
            new Setting("queued.max.request.bytes", "kaas.broker.queued-max-request-bytes", Kind.LONG),
            new Setting("connections.max.idle.ms", "kaas.broker.connections-max-idle", Kind.MILLIS),
            new Setting("max.connections.per.ip", "kaas.broker.max-connections-per-ip", Kind.INT, 0L),
            new Setting("max.connections.per.ip.overrides", "kaas.broker.max-connections-per-ip-overrides", Kind.STRING),
            new Setting("max.connections", "kaas.broker.max-connections", Kind.INT, 0L),
            new Setting("max.connection.creation.rate", "kaas.broker.max-connection-creation-rate", Kind.INT, 0L),
            new Setting("fetch.max.bytes", "kaas.broker.fetch-max-bytes", Kind.INT, 1024L),
            new Setting("authorizer.class.name", "kaas.broker.authorizer-class-name", Kind.STRING),
            new Setting("super.users", "kaas.broker.super-users", Kind.STRING),
            new Setting("allow.everyone.if.no.acl.found", "kaas.broker.allow-everyone-if-no-acl-found", Kind.BOOLEAN),
            new Setting("controller.quota.window.num", "kaas.controller.quota-window-num", Kind.INT, 1L),
            new Setting("controller.quota.window.size.seconds", "kaas.controller.quota-window-size-seconds", Kind.INT, 1L),
            new Setting("quota.window.num", "kaas.broker.quota-window-num", Kind.INT, 1L),
            new Setting("quota.window.size.seconds", "kaas.broker.quota-window-size-seconds", Kind.INT, 1L),
            new Setting("log.retention.check.interval.ms", "kaas.broker.log-retention-check-interval", Kind.MILLIS, 1L),
            new Setting("log.cleaner.enable", "kaas.broker.log-cleaner-enable", Kind.BOOLEAN),
            new Setting("log.cleaner.threads", "kaas.broker.log-cleaner-threads", Kind.INT, 0L),
            new Setting("log.cleaner.backoff.ms", "kaas.broker.log-cleaner-backoff", Kind.MILLIS),
            new Setting("log.cleaner.dedupe.buffer.size", "kaas.broker.log-cleaner-dedupe-buffer-size", Kind.LONG),
            new Setting("log.cleaner.io.buffer.size", "kaas.broker.log-cleaner-io-buffer-size", Kind.INT, 0L),
            new Setting("log.cleaner.io.max.bytes.per.second", "kaas.broker.log-cleaner-io-max-bytes-per-second", Kind.DOUBLE),
            new Setting("log.cleaner.io.buffer.load.factor", "kaas.broker.log-cleaner-io-buffer-load-factor", Kind.DOUBLE),
            new Setting("group.min.session.timeout.ms", "kaas.group.min-session-timeout", Kind.MILLIS),
            new Setting("group.max.session.timeout.ms", "kaas.group.max-session-timeout", Kind.MILLIS),
            new Setting("group.initial.rebalance.delay.ms", "kaas.group.initial-rebalance-delay", Kind.MILLIS),
            new Setting("group.max.size", "kaas.group.max-size", Kind.INT, 1L),
            new Setting("offsets.retention.minutes", "kaas.group.offsets-retention", Kind.MINUTES, 1L),
            new Setting("offsets.retention.check.interval.ms", "kaas.group.offsets-retention-check-interval", Kind.MILLIS, 1L),
            new Setting("offset.metadata.max.bytes", "kaas.group.offset-metadata-max-bytes", Kind.INT),
            new Setting("transaction.max.timeout.ms", "kaas.transaction.max-timeout", Kind.MILLIS, 1L),
            new Setting("transactional.id.expiration.ms", "kaas.transaction.id-expiration", Kind.MILLIS, 1L),
            new Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", "kaas.transaction.abort-timed-out-interval", Kind.MILLIS, 1L),
            new Setting("transaction.remove.expired.transaction.cleanup.interval.ms", "kaas.transaction.remove-expired-interval", Kind.MILLIS, 1L),
            new Setting("transaction.partition.verification.enable", "kaas.transaction.partition-verification-enable", Kind.BOOLEAN));

    /**
     * Apache names with nothing to do in kaas (src/docs/non-goals: no KRaft quorum, no replication,
     * no internal topics; threads and socket buffers are sized differently), each with why. Read
     * and reported, never an error, so an Apache file works unchanged.
     */
    static final Map<String, String> NOT_APPLICABLE = notApplicable();

    /** The file, translated. */
    public record Translation(Map<String, String> properties, List<String> notRead) {
        public Translation {
            properties = Map.copyOf(properties);
            notRead = List.copyOf(notRead);
        }

        /** One line per key kaas does not read, for the process to log once at start-up. */
        public List<String> warnings(Path file) {
            return notRead.stream().map(k -> file + ": " + k + " is " + NOT_APPLICABLE.getOrDefault(k, "not a setting kaas reads")
                    + "; ignored").toList();
        }
    }

    /** A value kaas cannot start with; the message is the one line the process prints before it exits. */
    public static final class Invalid extends Exception {
        public Invalid(String message) {
            super(message);
        }
    }

    private ServerProperties() {
    }

    /** The file {@code kaas.config-file} names (system property, then {@code KAAS_CONFIG_FILE}), or null. */
    public static Path configured() {
        String v = System.getProperty(FILE_KEY);
        if (v == null || v.isBlank()) {
            v = System.getenv("KAAS_CONFIG_FILE");
        }
        return v == null || v.isBlank() ? null : Path.of(v.trim());
    }

    /**
     * What a process's main method runs before Quarkus starts: each key of the configured file
     * that kaas does not read is reported once on {@code err}; a file kaas cannot start with, or
     * a bad topic default from the file, a system property or the environment, is reported in one
     * line. Both processes read the topic defaults: the broker as its topics' defaults, the
     * controller to validate topic configs over them. Nothing has been opened yet, so the caller
     * may exit.
     *
     * @return false when the process must not start
     */
    public static boolean preflight(String process, java.io.PrintStream err) {
        Path file = configured();
        try {
            Map<String, String> settings = new java.util.HashMap<>();
            if (file != null) {
                Translation t = load(file);
                t.warnings(file).forEach(w -> err.println(process + ": WARN " + w));
                settings.putAll(t.properties());
            }
            // Topic defaults may also come from system properties and the environment (LOG_RETENTION_HOURS), which win over the file.
            for (String name : TopicDefaults.brokerNames()) {
                String v = System.getProperty(name);
                if (v == null) {
                    v = System.getenv(name.replace('.', '_').toUpperCase(java.util.Locale.ROOT));
                }
                // Blank is unset, as Quarkus's configuration reads an empty value.
                if (v != null && !v.isBlank()) {
                    settings.put(name, v);
                }
            }
            try {
                TopicDefaults.ofStatic(settings);
            } catch (ConfigException e) {
                throw new Invalid(e.getMessage());
            }
            return true;
        } catch (Invalid e) {
            err.println(process + ": cannot start: " + e.getMessage());
            return false;
        }
    }

    /** Reads and translates {@code file}. */
    public static Translation load(Path file) throws Invalid {
        Properties props = new Properties();
        // As Apache's Utils.loadProps: Properties.load of a byte stream, ISO-8859-1 with \\u escapes.
        try (InputStream in = Files.newInputStream(file)) {
            props.load(in);
        } catch (IOException | IllegalArgumentException e) {
            throw new Invalid(file + ": cannot be read: " + e.getMessage());
        }
        Map<String, String> raw = new TreeMap<>();
        props.stringPropertyNames().forEach(k -> raw.put(k.trim(), props.getProperty(k).trim()));
        try {
            return translate(raw);
        } catch (Invalid e) {
            throw new Invalid(file + ": " + e.getMessage());
        }
    }

    /** Translates the file's entries; nothing is returned for a file with an invalid value. */
    public static Translation translate(Map<String, String> raw) throws Invalid {
        Map<String, String> out = new LinkedHashMap<>();
        List<String> notRead = new ArrayList<>();
        Set<String> topicDefaultNames = Set.copyOf(TopicDefaults.brokerNames());
        Set<String> controllerListeners = Arrays.stream(raw.getOrDefault("controller.listener.names", "").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        Map<String, Setting> byName = SETTINGS.stream().collect(Collectors.toMap(Setting::apacheName, s -> s));
        for (var e : new TreeMap<>(raw).entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            Setting s = byName.get(name);
            if (s != null) {
                String converted = convert(s, value, controllerListeners);
                String earlier = out.get(s.kaasKey());
                if (earlier != null && !earlier.equals(converted) && !name.equals("log.dir")) {
                    throw new Invalid(name + "=" + value + " disagrees with another key for the same setting (" + s.kaasKey() + "=" + earlier + ")");
                }
                // log.dirs wins over log.dir, as in Apache.
                if (!(name.equals("log.dir") && raw.containsKey("log.dirs"))) {
                    out.put(s.kaasKey(), converted);
                }
            } else if (topicDefaultNames.contains(name) || tls(name) || sasl(name) || listenerLimit(name)) {
                // Read by the broker under the Apache name itself (TopicDefaults; the SSL and SASL listeners' settings, a listener's limits).
                out.put(name, value);
            } else if (!name.equals("controller.listener.names") || controllerListeners.isEmpty()) {
                notRead.add(name);
            }
        }
        try {
            // Each value on its own: the rule across keys is checked on the merged settings (preflight).
            TopicDefaults.of(raw);
        } catch (ConfigException e) {
            throw new Invalid(e.getMessage());
        }
        String listeners = out.get("kaas.broker.listeners");
        if (listeners != null) {
            checkProtocols(listeners, raw.get("listener.security.protocol.map"));
            // Apache advertises the listeners themselves when advertised.listeners is not set.
            out.putIfAbsent("kaas.broker.advertised-listeners", listeners.replaceAll("://(0\\.0\\.0\\.0)?:", "://localhost:"));
        }
        String socketMax = out.get("kaas.broker.socket-request-max-bytes");
        if (socketMax != null && !out.containsKey("kaas.broker.queued-max-request-bytes")) {
            // kaas bounds the bytes of requests in flight at two maximum-size requests (running.md); Apache leaves it unbounded.
            out.put("kaas.broker.queued-max-request-bytes", Long.toString(Math.max(209_715_200L, 2L * Long.parseLong(socketMax))));
        }
        return new Translation(out, notRead);
    }

    /** The SSL listener settings of an Apache 3.7 broker (kafka-clients' definitions, and the two the broker adds). */
    private static final Set<String> TLS_NAMES = tlsNames();

    private static Set<String> tlsNames() {
        ConfigDef def = new ConfigDef();
        org.apache.kafka.common.config.SslConfigs.addClientSslSupport(def);
        Set<String> names = new java.util.HashSet<>(def.names());
        names.add("ssl.client.auth");
        names.add("ssl.principal.mapping.rules");
        names.add("ssl.allow.dn.changes");
        names.add("ssl.allow.san.changes");
        return Set.copyOf(names);
    }

    /**
     * A listener's own connection limit: {@code listener.name.client.max.connections} or
     * {@code ….max.connection.creation.rate}, the listener lower-cased as Apache's prefix has it
     * (another spelling Apache never reads, so neither does kaas: it is reported).
     */
    static boolean listenerLimit(String name) {
        return name.matches("listener\\.name\\.[^.A-Z]+\\.(max\\.connections|max\\.connection\\.creation\\.rate)");
    }

    /** An SSL listener's setting, plain ({@code ssl.keystore.location}) or for one listener ({@code listener.name.client.ssl.…}). */
    static boolean tls(String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("listener\\.name\\.[^.]+\\.(ssl\\..+)").matcher(name);
        return TLS_NAMES.contains(m.matches() ? m.group(1) : name);
    }

    /** The SASL listener settings of an Apache 3.7 broker that kaas reads. */
    private static final Set<String> SASL_NAMES = Set.of("sasl.enabled.mechanisms", "sasl.server.max.receive.size",
            "connections.max.reauth.ms", "connection.failed.authentication.delay.ms");

    /**
     * A SASL listener's setting: plain, for one listener ({@code listener.name.client.sasl.enabled.mechanisms}),
     * or for one listener's mechanism ({@code listener.name.client.plain.sasl.jaas.config}).
     */
    static boolean sasl(String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("listener\\.name\\.[^.]+\\.(?:[a-z0-9-]+\\.)?((?:sasl|connections)\\..+)")
                .matcher(name);
        if (m.matches()) {
            return SASL_NAMES.contains(m.group(1)) || m.group(1).equals("sasl.jaas.config") || oauth(m.group(1));
        }
        return SASL_NAMES.contains(name) || oauth(name);
    }

    /** OAUTHBEARER's validator and its KIP-768 settings. */
    private static boolean oauth(String name) {
        return name.equals("sasl.server.callback.handler.class") || name.startsWith("sasl.oauthbearer.");
    }

    /** Every listener must have a protocol, by {@code listener.security.protocol.map} or by its name (Apache's rule). */
    private static void checkProtocols(String listeners, String protocolMap) throws Invalid {
        // Apache's default map and its case rules: listener names and protocols are upper-cased.
        Map<String, String> map = new java.util.HashMap<>();
        for (String entry : (protocolMap != null ? protocolMap : "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL")
                .split(",")) {
            String[] kv = entry.trim().split(":", 2);
            if (kv.length == 2) {
                map.put(kv[0].trim().toUpperCase(java.util.Locale.ROOT), kv[1].trim().toUpperCase(java.util.Locale.ROOT));
            }
        }
        for (String l : listeners.split(",")) {
            String name = (l.trim().contains("://") ? l.trim().substring(0, l.trim().indexOf("://")) : l.trim()).toUpperCase(java.util.Locale.ROOT);
            String protocol = map.get(name);
            if (protocol == null) {
                throw new Invalid("No security protocol defined for listener " + name);
            }
            if (!Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL").contains(protocol)) {
                throw new Invalid("listener " + name + ": unknown security protocol " + protocol);
            }
        }
    }

    private static String convert(Setting s, String value, Set<String> controllerListeners) throws Invalid {
        try {
            switch (s.kind()) {
                case INT -> {
                    return Integer.toString((int) atLeast(s, value, (Integer) ConfigDef.parseType(s.apacheName(), value, ConfigDef.Type.INT)));
                }
                case LONG -> {
                    return Long.toString((Long) ConfigDef.parseType(s.apacheName(), value, ConfigDef.Type.LONG));
                }
                case BOOLEAN -> {
                    return Boolean.toString((Boolean) ConfigDef.parseType(s.apacheName(), value, ConfigDef.Type.BOOLEAN));
                }
                case DOUBLE -> {
                    return Double.toString((Double) ConfigDef.parseType(s.apacheName(), value, ConfigDef.Type.DOUBLE));
                }
                case MILLIS, MINUTES -> {
                    long v = atLeast(s, value, (Long) ConfigDef.parseType(s.apacheName(), value, ConfigDef.Type.LONG));
                    return v + (s.kind() == Kind.MILLIS ? "ms" : "m");
                }
                default -> {
                    return string(s, value, controllerListeners);
                }
            }
        } catch (ConfigException e) {
            throw new Invalid(e.getMessage());
        }
    }

    private static long atLeast(Setting s, String value, long v) throws Invalid {
        if (s.min() != null && v < s.min()) {
            throw new Invalid("Invalid value " + value + " for configuration " + s.apacheName() + ": Value must be at least " + s.min());
        }
        return v;
    }

    private static String string(Setting s, String value, Set<String> controllerListeners) throws Invalid {
        if (value.isEmpty()) {
            throw new Invalid("Invalid value for configuration " + s.apacheName() + ": must not be empty");
        }
        if (s.kaasKey().equals("kaas.data-dir")) {
            String[] dirs = value.split(",");
            if (dirs.length != 1) {
                throw new Invalid(s.apacheName() + "=" + value + " names " + dirs.length
                        + " directories; kaas keeps every partition on one shared volume: name one directory");
            }
            return dirs[0].trim();
        }
        if (s.apacheName().equals("listeners") && !controllerListeners.isEmpty()) {
            // An Apache KRaft file also lists its controller listener; kaas has no quorum to serve on it.
            String kept = Arrays.stream(value.split(",")).map(String::trim)
                    .filter(l -> !controllerListeners.contains(l.contains("://") ? l.substring(0, l.indexOf("://")) : l))
                    .collect(Collectors.joining(","));
            if (kept.isEmpty()) {
                throw new Invalid("listeners=" + value + " has no listener left once the controller listeners "
                        + controllerListeners + " are taken out");
            }
            return kept;
        }
        return value;
    }

    private static Map<String, String> notApplicable() {
        Map<String, String> m = new LinkedHashMap<>();
        String kraft = "a KRaft setting: kaas elects its controller with a Kubernetes Lease";
        String replication = "a replication setting: kaas has one writer per partition on a shared volume";
        String internal = "an internal-topic setting: kaas keeps coordinator state in files";
        for (String k : List.of("process.roles", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
                "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms", "metadata.log.dir",
                "zookeeper.connect", "zookeeper.connection.timeout.ms")) {
            m.put(k, kraft);
        }
        for (String k : List.of("default.replication.factor", "inter.broker.listener.name", "replica.lag.time.max.ms",
                "num.replica.fetchers", "replica.fetch.max.bytes", "unclean.leader.election.enable.interval.ms",
                "auto.leader.rebalance.enable")) {
            m.put(k, replication);
        }
        for (String k : List.of("offsets.topic.replication.factor", "offsets.topic.num.partitions", "offsets.topic.segment.bytes",
                "transaction.state.log.replication.factor", "transaction.state.log.min.isr", "transaction.state.log.num.partitions",
                "transaction.state.log.segment.bytes")) {
            m.put(k, internal);
        }
        for (String k : List.of("num.network.threads", "num.io.threads", "num.recovery.threads.per.data.dir",
                "socket.send.buffer.bytes", "socket.receive.buffer.bytes")) {
            m.put(k, "a thread or socket-buffer size kaas does not use (its writer and storage threads are kaas.broker.* keys)");
        }
        return Map.copyOf(m);
    }
}
