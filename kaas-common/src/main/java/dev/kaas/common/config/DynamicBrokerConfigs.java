package dev.kaas.common.config;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The broker settings kaas changes at run time (IncrementalAlterConfigs and AlterConfigs on a
 * BROKER resource: {@code ""} for the whole cluster, a broker id for one broker), a subset of
 * Apache 3.7's dynamic ones (src/docs/compatibility.md):
 * <ul>
 *   <li>the topic defaults under their primary broker names, as Apache's {@code DynamicLogConfig}
 *       ({@code log.retention.ms}, {@code log.segment.bytes}, {@code message.max.bytes}, …; not
 *       {@code log.message.format.version}, nor the secondary names such as
 *       {@code log.retention.hours}): open partitions follow a change at once;</li>
 *   <li>the log cleaner's settings, as Apache's {@code LogCleaner.ReconfigurableConfigs}
 *       ({@code log.cleaner.threads}, {@code log.cleaner.io.max.bytes.per.second}, …): the
 *       broker restarts its cleaner threads with them;</li>
 *   <li>the replication throttles ({@code leader.replication.throttled.rate}, …), which
 *       {@code kafka-reassign-partitions.sh --throttle} sets: kept and described, but kaas
 *       copies no data between brokers, so they limit nothing;</li>
 *   <li>the connection limits, as Apache's {@code DynamicConnectionQuota} and its listeners'
 *       reconfigurable settings ({@code max.connections}, {@code max.connections.per.ip},
 *       {@code max.connections.per.ip.overrides}, {@code max.connection.creation.rate},
 *       {@code listener.name.<listener>.max.connections} and
 *       {@code listener.name.<listener>.max.connection.creation.rate}): new connections meet the
 *       new limits, open ones are kept.</li>
 * </ul>
 * A name Apache 3.7 does not know at all (not one of {@code KafkaConfig.configNames}, nor
 * listener-prefixed) is a custom broker property ({@link #custom}): Apache's broker stores it for
 * plug-ins such as metric reporters, and so does kaas, which reads nothing from it. Any other name
 * is refused as Apache refuses one it cannot update dynamically.
 */
public final class DynamicBrokerConfigs {
    public static final Set<String> THROTTLES = Set.of("leader.replication.throttled.rate", "follower.replication.throttled.rate",
            "replica.alter.log.dirs.io.max.bytes.per.second");

    /**
     * The log cleaner's reconfigurable settings, typed and bounded as Apache 3.7 defines them
     * ({@code KafkaConfig}): a dynamic value is checked against this before it is stored.
     */
    public static final ConfigDef CLEANER = new ConfigDef()
            .define("log.cleaner.threads", ConfigDef.Type.INT, 1, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.dedupe.buffer.size", ConfigDef.Type.LONG, 128L * 1024 * 1024, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.buffer.load.factor", ConfigDef.Type.DOUBLE, 0.9d, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.buffer.size", ConfigDef.Type.INT, 512 * 1024, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.io.max.bytes.per.second", ConfigDef.Type.DOUBLE, Double.MAX_VALUE, ConfigDef.Importance.MEDIUM, "")
            .define("log.cleaner.backoff.ms", ConfigDef.Type.LONG, 15_000L, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "");

    /** The connection limits, typed and bounded as Apache 3.7 defines them ({@code KafkaConfig}). */
    public static final ConfigDef CONNECTIONS = new ConfigDef()
            .define("max.connections.per.ip", ConfigDef.Type.INT, Integer.MAX_VALUE, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("max.connections.per.ip.overrides", ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM, "")
            .define("max.connections", ConfigDef.Type.INT, Integer.MAX_VALUE, ConfigDef.Range.atLeast(0), ConfigDef.Importance.MEDIUM, "")
            .define("max.connection.creation.rate", ConfigDef.Type.INT, Integer.MAX_VALUE, ConfigDef.Range.atLeast(0),
                    ConfigDef.Importance.MEDIUM, "");

    /**
     * A listener's own connection limits, under Apache's listener prefix (the listener name
     * lower-cased): {@code listener.name.<listener>.max.connections} and
     * {@code listener.name.<listener>.max.connection.creation.rate}.
     */
    public static final java.util.regex.Pattern LISTENER_CONNECTIONS =
            java.util.regex.Pattern.compile("listener\\.name\\.([a-z0-9_\\-]+)\\.(max\\.connections|max\\.connection\\.creation\\.rate)");

    /**
     * Apache's listener prefix ({@code DynamicBrokerConfig.ListenerConfigRegex}): a name under it
     * is never a custom property, as Apache reads it as its base name's per-listener value.
     */
    private static final java.util.regex.Pattern LISTENER_PREFIXED = java.util.regex.Pattern.compile("listener\\.name\\.[^.]*\\.(.*)");

    /**
     * Apache 3.7.2's broker config names ({@code KafkaConfig.configNames}), from the list kept
     * next to this class; ApacheBrokerConfigNamesIT checks it against Apache's own.
     */
    public static final Set<String> APACHE_NAMES = apacheNames();

    /** Every name kaas changes at run time, sorted (besides a listener's own connection limits: {@link #LISTENER_CONNECTIONS}). */
    @SuppressWarnings("deprecation")
    public static final Set<String> NAMES = names();

    private DynamicBrokerConfigs() {
    }

    public static boolean dynamic(String name) {
        return NAMES.contains(name) || LISTENER_CONNECTIONS.matcher(name).matches();
    }

    /**
     * A custom broker property: a name Apache 3.7 does not know and does not read as a listener's
     * value. Apache's {@code DynamicConfig.Broker.validate} lets it through ({@code
     * customPropsAllowed}) and DescribeConfigs lists it, sensitive with its value hidden, since its
     * type is unknown ({@code KafkaConfig.maybeSensitive}).
     */
    public static boolean custom(String name) {
        // The throttles are Apache's too, but quota settings, outside KafkaConfig's names.
        return !APACHE_NAMES.contains(name) && !THROTTLES.contains(name) && !LISTENER_PREFIXED.matcher(name).matches();
    }

    /** A name a BROKER resource's dynamic configuration keeps: one kaas changes at run time, or a custom one. */
    public static boolean kept(String name) {
        return dynamic(name) || custom(name);
    }

    /**
     * Apache's refusal of the names an alteration sets (not those it deletes) that kaas does not
     * keep, or null: "Cannot update these configs dynamically", or, when every one of them is a
     * security setting Apache changes only under a listener prefix, Apache's message for that.
     */
    public static String refusal(java.util.Collection<String> setNames) {
        List<String> fixed = setNames.stream().filter(n -> !kept(n)).sorted().distinct().toList();
        if (fixed.isEmpty()) {
            return null;
        }
        // Apache checks its non-dynamic names first, and names only those; a security setting is dynamic there, but only under
        // a listener's prefix.
        List<String> nonDynamic = fixed.stream().filter(n -> !org.apache.kafka.common.config.SslConfigs.RECONFIGURABLE_CONFIGS.contains(n)).toList();
        if (nonDynamic.isEmpty()) {
            return "These security configs can be dynamically updated only per-listener using the listener prefix: Set("
                    + String.join(", ", fixed) + ")";
        }
        return "Cannot update these configs dynamically: Set(" + String.join(", ", nonDynamic) + ")";
    }

    /**
     * kaas's own bound on custom properties (Apache has none), checked after Apache's checks:
     * every broker receives each resource's configuration with every assignment. Refuses only a
     * change that adds to a resource past the bound, so one already past it (kept by an earlier
     * version) can still be altered and shrunk. Returns the message, or null.
     */
    public static String customBound(Map<String, String> before, Map<String, String> after) {
        long[] was = customSize(before);
        long[] now = customSize(after);
        boolean over = now[0] > MAX_CUSTOM || now[1] > MAX_CUSTOM_CHARS;
        boolean grows = now[0] > was[0] || now[1] > was[1];
        return over && grows ? "Too many custom broker configs: a resource keeps at most " + MAX_CUSTOM
                + " names not known to Apache Kafka, of " + MAX_CUSTOM_CHARS + " characters in all (names and values)" : null;
    }

    private static long[] customSize(Map<String, String> configs) {
        long count = 0;
        long chars = 0;
        for (var e : configs.entrySet()) {
            if (custom(e.getKey())) {
                count++;
                chars += e.getKey().length() + (e.getValue() == null ? 0 : e.getValue().length());
            }
        }
        return new long[] {count, chars};
    }

    /** The most custom properties one BROKER resource keeps, and their names' and values' characters in all. */
    public static final int MAX_CUSTOM = 100;
    public static final int MAX_CUSTOM_CHARS = 64 * 1024;

    /** A name whose value is a list (APPEND and SUBTRACT apply to it). */
    public static boolean isList(String name) {
        return name.equals("log.cleanup.policy");
    }

    /**
     * Checks one resource's dynamic configuration as it would be after a change, each value by its
     * broker name's type and its topic key's validator (Apache has no broker-level rule across
     * keys). Returns Apache's message, or null.
     */
    public static String validate(Map<String, String> configs) {
        // In Apache's order: every value's type and range (validateConfigTypes), then what building
        // a KafkaConfig checks (the overrides' parse, the per-ip rule, their hosts), and last its
        // listeners' own check, max.connections before the creation rate.
        String noConnections = null;
        String noRate = null;
        for (var e : configs.entrySet()) {
            if (CLEANER.configKeys().containsKey(e.getKey())) {
                try {
                    cleanerValue(e.getKey(), e.getValue());
                } catch (ConfigException ex) {
                    return ex.getMessage();
                }
            }
            boolean overrides = e.getKey().equals("max.connections.per.ip.overrides");
            if (!overrides && (CONNECTIONS.configKeys().containsKey(e.getKey()) || LISTENER_CONNECTIONS.matcher(e.getKey()).matches())) {
                Object v;
                try {
                    v = connectionValue(e.getKey(), e.getValue());
                } catch (ConfigException ex) {
                    return ex.getMessage();
                }
                // Apache's listeners refuse a reconfiguration that leaves one with no connection or no rate at all.
                if (e.getKey().endsWith("max.connections") && (Integer) v <= 0 && noConnections == null) {
                    noConnections = listenerRefusal("Invalid max.connections " + v);
                } else if (e.getKey().endsWith("max.connection.creation.rate") && (Integer) v <= 0 && noRate == null) {
                    noRate = listenerRefusal("Invalid max.connection.creation.rate " + v);
                }
            }
            if (THROTTLES.contains(e.getKey())) {
                try {
                    long v = (Long) ConfigDef.parseType(e.getKey(), e.getValue(), ConfigDef.Type.LONG);
                    if (v < 0) {
                        return "Invalid value " + e.getValue() + " for configuration " + e.getKey() + ": Value must be at least 0";
                    }
                } catch (ConfigException ex) {
                    return ex.getMessage();
                }
            }
        }
        try {
            TopicDefaults.of(configs);
        } catch (ConfigException ex) {
            return ex.getMessage();
        }
        Map<String, Integer> overrides;
        try {
            overrides = overridesParsed(configs.get("max.connections.per.ip.overrides"));
        } catch (ConfigException ex) {
            return ex.getMessage();
        }
        if ("0".equals(String.valueOf(configs.get("max.connections.per.ip")).trim()) && overrides.isEmpty()) {
            // Apache's rule, on the parsed overrides of the configuration as it would be (kaas sees the dynamic
            // layer only: overrides set statically do not count here).
            return "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.";
        }
        try {
            checkHosts(overrides);
        } catch (ConfigException ex) {
            return ex.getMessage();
        }
        return noConnections != null ? noConnections : noRate;
    }

    /**
     * Apache 3.7's text for a refusal by one of its listeners' reconfigurables: DynamicBrokerConfig
     * wraps it as {@code new ConfigException("Invalid dynamic configuration", e)}, whose two-argument
     * constructor takes them as a name and a value.
     */
    static String listenerRefusal(String message) {
        return new ConfigException("Invalid dynamic configuration", new ConfigException(message)).getMessage();
    }

    /**
     * A cleaner setting's value, typed and checked by Apache's definition ({@link #CLEANER}).
     *
     * @throws ConfigException with Apache's message when it does not pass
     */
    public static Object cleanerValue(String name, String value) {
        ConfigDef.ConfigKey key = CLEANER.configKeys().get(name);
        Object v = ConfigDef.parseType(name, value, key.type);
        if (key.validator != null) {
            key.validator.ensureValid(name, v);
        }
        return v;
    }

    /**
     * A connection limit's value, typed and checked as Apache's definition ({@link #CONNECTIONS};
     * a listener's own limits are INT, at least 0, named by their base name in a refusal), the
     * overrides by Apache's format ({@link #overrides}).
     *
     * @throws ConfigException with Apache's message when it does not pass
     */
    public static Object connectionValue(String name, String value) {
        ConfigDef.ConfigKey key = CONNECTIONS.configKeys().get(name);
        if (key == null) {
            // A listener's own limit is checked under its base name, as Apache's validateConfigTypes strips the prefix.
            java.util.regex.Matcher m = LISTENER_CONNECTIONS.matcher(name);
            String base = m.matches() ? m.group(2) : name;
            int v = (Integer) ConfigDef.parseType(base, value, ConfigDef.Type.INT);
            ConfigDef.Range.atLeast(0).ensureValid(base, v);
            return v;
        }
        Object v = ConfigDef.parseType(name, value, key.type);
        if (key.validator != null) {
            key.validator.ensureValid(name, v);
        }
        if (name.equals("max.connections.per.ip.overrides")) {
            overrides((String) v);
        }
        return v;
    }

    /**
     * Apache's {@code max.connections.per.ip.overrides} by host, as written (not resolved):
     * {@code host:count} entries separated by commas, read as Apache 3.7's KafkaConfig reads them
     * (CoreUtils.parseCsvMap, then each count's toInt; the last entry of a host wins), with its
     * messages: an entry without a colon fails on the substring it cannot take, a count that is
     * not an int with the JDK's NumberFormatException text. A negative count is taken, as Apache
     * takes it: no connection from that host is ever below it. A blank value is none (Apache's
     * ConfigDef trims it first).
     *
     * @throws ConfigException with Apache's message when an entry does not parse or a host is not
     *         a valid host name or address
     */
    public static Map<String, Integer> overrides(String value) {
        Map<String, Integer> byHost = overridesParsed(value);
        checkHosts(byHost);
        return byHost;
    }

    /** The overrides parsed, their hosts not yet checked (Apache checks those after the per-ip rule). */
    private static Map<String, Integer> overridesParsed(String value) {
        Map<String, Integer> byHost = new java.util.LinkedHashMap<>();
        // Apache's ConfigDef trims a STRING value first: blanks are no overrides.
        String trimmed = value == null ? "" : value.trim();
        if (trimmed.isEmpty()) {
            return byHost;
        }
        String name = "max.connections.per.ip.overrides";
        Map<String, String> raw = new java.util.LinkedHashMap<>();
        for (String entry : trimmed.split("\\s*,\\s*")) {
            int colon = entry.lastIndexOf(':');
            if (colon < 0) {
                // Scala's s.substring(0, -1) on Apache's side, wrapped by its getMap.
                throw new ConfigException("Error parsing configuration property '" + name + "': begin 0, end -1, length " + entry.length());
            }
            String host = entry.substring(0, colon).trim();
            raw.remove(host);
            raw.put(host, entry.substring(colon + 1).trim());
        }
        for (Map.Entry<String, String> e : raw.entrySet()) {
            try {
                byHost.put(e.getKey(), Integer.parseInt(e.getValue()));
            } catch (NumberFormatException notAnInt) {
                // Outside Apache's getMap, so not wrapped: the client reads the JDK's text alone.
                throw new ConfigException(notAnInt.getMessage());
            }
        }
        return byHost;
    }

    private static void checkHosts(Map<String, Integer> byHost) {
        var invalid = byHost.keySet().stream().filter(h -> !org.apache.kafka.common.utils.Utils.validHostPattern(h)).sorted().toList();
        if (!invalid.isEmpty()) {
            throw new ConfigException("max.connections.per.ip.overrides contains invalid addresses : " + String.join(",", invalid));
        }
    }

    private static Set<String> apacheNames() {
        var in = DynamicBrokerConfigs.class.getResourceAsStream("apache-broker-config-names.txt");
        if (in == null) {
            throw new IllegalStateException("apache-broker-config-names.txt is missing from kaas-common");
        }
        try (in) {
            Set<String> out = new TreeSet<>();
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                String name = line.trim();
                if (!name.isEmpty() && !name.startsWith("#")) {
                    out.add(name);
                }
            }
            return java.util.Collections.unmodifiableSet(out);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @SuppressWarnings("deprecation")
    private static Set<String> names() {
        Set<String> out = new TreeSet<>(THROTTLES);
        out.addAll(CLEANER.names());
        out.addAll(CONNECTIONS.names());
        TopicDefaults.SYNONYMS.forEach((topicKey, names) -> {
            if (!topicKey.equals(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG)) {
                out.add(names.get(0).name());
            }
        });
        return java.util.Collections.unmodifiableSet(out);
    }
}
