package dev.kaas.broker.admin;

import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.common.config.DynamicBrokerConfigs;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.config.TopicDefaults;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * This broker's configuration under Apache 3.7's broker key names, as DescribeConfigs BROKER
 * answers it ({@code kafka-configs.sh --describe --entity-type brokers}): the keys kaas honours,
 * each with its value, its kaas key when it has one, and its source (STATIC_BROKER_CONFIG when
 * the kaas key was set for this process, else DEFAULT_CONFIG). The topic defaults
 * ({@code log.retention.hours}, …) are read under their Apache names ({@link TopicDefaults});
 * unset, they are Apache's defaults, which kaas keeps (except {@code log.flush.interval.messages},
 * 1: see durability.md). The topic defaults under their primary names, the replication
 * throttles, the log cleaner's settings and the connection limits can be changed at run time ({@link DynamicBrokerConfigs}): those are not read-only, and
 * their source and synonyms follow Apache's layers (DYNAMIC_BROKER_CONFIG,
 * DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG); every other key is
 * read-only.
 */
final class BrokerConfigs {
    /**
     * One broker key: its Apache name and type, the configuration key it is read under (a kaas
     * key, or the Apache name itself for the topic defaults; null: a fixed default), its value and
     * a line of doc; for a key kaas changes at run time, its synonym chain (its first link is where
     * the value comes from), else null.
     */
    record Entry(String name, ConfigType type, String kaasKey, String value, String doc, List<TopicConfigEntries.Synonym> chain,
                 boolean sensitive) {
        Entry(String name, ConfigType type, String kaasKey, String value, String doc) {
            this(name, type, kaasKey, value, doc, null);
        }

        Entry(String name, ConfigType type, String kaasKey, String value, String doc, List<TopicConfigEntries.Synonym> chain) {
            this(name, type, kaasKey, value, doc, chain, false);
        }

        ConfigSource source() {
            if (chain != null) {
                return chain.isEmpty() ? ConfigSource.DEFAULT_CONFIG : chain.get(0).source();
            }
            if (kaasKey == null) {
                return ConfigSource.DEFAULT_CONFIG;
            }
            var v = ConfigProvider.getConfig().getConfigValue(kaasKey);
            // System properties and the environment (what `./kaas up` and the manifests set) are this broker's static config.
            return v.getRawValue() != null && v.getSourceOrdinal() > 250 ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
        }

        /**
         * Apache's: only its reconfigurable keys are writable (the throttles are quota configs, and a
         * listener's prefixed names are not among Apache's dynamic names: both described read-only).
         */
        boolean readOnly() {
            return BrokerConfigs.readOnly(name);
        }

        /** What include_synonyms lists: the chain, or the entry itself. */
        List<TopicConfigEntries.Synonym> synonyms() {
            return chain != null ? chain : List.of(new TopicConfigEntries.Synonym(name, value, source()));
        }
    }

    private BrokerConfigs() {
    }

    /**
     * @param defaults       this broker's topic defaults in force, static and dynamic
     * @param clusterDefault the cluster-wide dynamic configuration
     * @param dynamic        this broker's own dynamic configuration
     */
    static List<Entry> of(BrokerConfig c, TopicDefaults defaults, Map<String, String> clusterDefault, Map<String, String> dynamic) {
        BrokerConfig.Broker b = c.broker();
        List<Entry> out = new ArrayList<>();
        out.add(new Entry("node.id", ConfigType.INT, "kaas.broker.id", Integer.toString(b.id()), "This broker's id."));
        out.add(new Entry("broker.id", ConfigType.INT, "kaas.broker.id", Integer.toString(b.id()), "This broker's id (as node.id)."));
        out.add(new Entry("listeners", ConfigType.STRING, "kaas.broker.listeners", b.listeners(), "The Kafka listeners."));
        out.add(new Entry("advertised.listeners", ConfigType.STRING, "kaas.broker.advertised-listeners", b.advertisedListeners(),
                "The listeners' addresses as clients are told them."));
        out.add(new Entry("log.dirs", ConfigType.STRING, "kaas.data-dir", java.nio.file.Path.of(c.dataDir()).toAbsolutePath().toString(),
                "The shared volume's data directory, this broker's one log dir."));
        out.add(new Entry("auto.create.topics.enable", ConfigType.BOOLEAN, "kaas.broker.auto-create-topics-enable",
                Boolean.toString(b.autoCreateTopicsEnable()), "Whether Metadata for an unknown topic creates it."));
        out.add(new Entry("socket.request.max.bytes", ConfigType.INT, "kaas.broker.socket-request-max-bytes",
                Integer.toString(b.socketRequestMaxBytes()), "The largest request accepted."));
        out.add(new Entry("queued.max.request.bytes", ConfigType.LONG, "kaas.broker.queued-max-request-bytes",
                Long.toString(b.queuedMaxRequestBytes()), "Request bytes read but not yet answered, over all connections."));
        out.add(new Entry("connections.max.idle.ms", ConfigType.LONG, "kaas.broker.connections-max-idle",
                Long.toString(b.connectionsMaxIdle().toMillis()), "Idle connections are closed after this long."));
        // The connection limits change at run time too: the same layers as the cleaner's.
        layered(out, "max.connections.per.ip", ConfigType.INT, "kaas.broker.max-connections-per-ip", Integer.toString(b.maxConnectionsPerIp()),
                "Connections one address may hold.", DynamicBrokerConfigs.CONNECTIONS, clusterDefault, dynamic);
        layered(out, "max.connections.per.ip.overrides", ConfigType.STRING, "kaas.broker.max-connections-per-ip-overrides",
                b.maxConnectionsPerIpOverrides().orElse(""), "Connections named hosts or addresses may hold, instead of max.connections.per.ip.",
                DynamicBrokerConfigs.CONNECTIONS, clusterDefault, dynamic);
        layered(out, "max.connections", ConfigType.INT, "kaas.broker.max-connections", Integer.toString(b.maxConnections()),
                "Connections the broker holds in all.", DynamicBrokerConfigs.CONNECTIONS, clusterDefault, dynamic);
        layered(out, "max.connection.creation.rate", ConfigType.INT, "kaas.broker.max-connection-creation-rate",
                Integer.toString(b.maxConnectionCreationRate()), "Connections accepted per second over every listener; past it they wait.",
                DynamicBrokerConfigs.CONNECTIONS, clusterDefault, dynamic);
        listenerLimits(out, b.listeners(), clusterDefault, dynamic);
        out.add(new Entry("fetch.max.bytes", ConfigType.INT, "kaas.broker.fetch-max-bytes", Integer.toString(b.fetchMaxBytes()),
                "The most bytes one Fetch answers."));
        out.add(new Entry("authorizer.class.name", ConfigType.STRING, "kaas.broker.authorizer-class-name",
                b.authorizerClassName().orElse(""), "The authorizer: StandardAuthorizer turns ACLs on; empty, everyone may do everything."));
        out.add(new Entry("super.users", ConfigType.STRING, "kaas.broker.super-users", b.superUsers().orElse(""),
                "Principals every ACL check allows, ';'-separated."));
        out.add(new Entry("allow.everyone.if.no.acl.found", ConfigType.BOOLEAN, "kaas.broker.allow-everyone-if-no-acl-found",
                Boolean.toString(b.allowEveryoneIfNoAclFound()), "Whether a resource without any ACL is open to all."));
        security(out, b);
        out.add(new Entry("quota.window.num", ConfigType.INT, "kaas.broker.quota-window-num", Integer.toString(b.quotaWindowNum()),
                "The number of samples to retain in memory for client quotas."));
        out.add(new Entry("quota.window.size.seconds", ConfigType.INT, "kaas.broker.quota-window-size-seconds",
                Integer.toString(b.quotaWindowSizeSeconds()), "The time span of each sample for client quotas."));
        out.add(new Entry("log.retention.check.interval.ms", ConfigType.LONG, "kaas.broker.log-retention-check-interval",
                Long.toString(b.logRetentionCheckInterval().toMillis()), "How often retention is checked."));
        out.add(new Entry("log.cleaner.enable", ConfigType.BOOLEAN, "kaas.broker.log-cleaner-enable", Boolean.toString(b.logCleanerEnable()),
                "Whether compacted topics are compacted."));
        // The cleaner's reconfigurable settings: their chain runs from this broker's dynamic value down to Apache's default.
        layered(out, "log.cleaner.threads", ConfigType.INT, "kaas.broker.log-cleaner-threads", Integer.toString(b.logCleanerThreads()),
                "Compaction passes run at once.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        layered(out, "log.cleaner.backoff.ms", ConfigType.LONG, "kaas.broker.log-cleaner-backoff", Long.toString(b.logCleanerBackoff().toMillis()),
                "How long an idle cleaner waits before looking again.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        layered(out, "log.cleaner.dedupe.buffer.size", ConfigType.LONG, "kaas.broker.log-cleaner-dedupe-buffer-size",
                Long.toString(b.logCleanerDedupeBufferSize()), "Key-map memory of all cleaner threads.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        layered(out, "log.cleaner.io.buffer.size", ConfigType.INT, "kaas.broker.log-cleaner-io-buffer-size",
                Integer.toString(b.logCleanerIoBufferSize()), "Read and write buffers of all cleaner threads.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        layered(out, "log.cleaner.io.buffer.load.factor", ConfigType.DOUBLE, "kaas.broker.log-cleaner-io-buffer-load-factor",
                Double.toString(b.logCleanerIoBufferLoadFactor()), "The share of a key map's slots a pass fills.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        layered(out, "log.cleaner.io.max.bytes.per.second", ConfigType.DOUBLE, "kaas.broker.log-cleaner-io-max-bytes-per-second",
                Double.toString(b.logCleanerIoMaxBytesPerSecond()), "Each cleaner thread's read plus write rate.", DynamicBrokerConfigs.CLEANER, clusterDefault, dynamic);
        BrokerConfig.Group g = c.group();
        out.add(new Entry("group.min.session.timeout.ms", ConfigType.INT, "kaas.group.min-session-timeout",
                Long.toString(g.minSessionTimeout().toMillis()), "The shortest session timeout a member may ask for."));
        out.add(new Entry("group.max.session.timeout.ms", ConfigType.INT, "kaas.group.max-session-timeout",
                Long.toString(g.maxSessionTimeout().toMillis()), "The longest session timeout a member may ask for."));
        out.add(new Entry("group.initial.rebalance.delay.ms", ConfigType.INT, "kaas.group.initial-rebalance-delay",
                Long.toString(g.initialRebalanceDelay().toMillis()), "How long a new group waits for more members."));
        out.add(new Entry("group.max.size", ConfigType.INT, "kaas.group.max-size", Integer.toString(g.maxSize()), "Members one group may have."));
        out.add(new Entry("offsets.retention.minutes", ConfigType.INT, "kaas.group.offsets-retention",
                Long.toString(g.offsetsRetention().toMinutes()), "How long an empty group's offsets are kept."));
        out.add(new Entry("offsets.retention.check.interval.ms", ConfigType.LONG, "kaas.group.offsets-retention-check-interval",
                Long.toString(g.offsetsRetentionCheckInterval().toMillis()), "How often expired offsets are removed."));
        out.add(new Entry("offset.metadata.max.bytes", ConfigType.INT, "kaas.group.offset-metadata-max-bytes",
                Integer.toString(g.offsetMetadataMaxBytes()), "The longest metadata a committed offset may carry."));
        BrokerConfig.Transaction t = c.transaction();
        out.add(new Entry("transaction.max.timeout.ms", ConfigType.INT, "kaas.transaction.max-timeout",
                Long.toString(t.maxTimeout().toMillis()), "The longest transaction timeout a producer may ask for."));
        out.add(new Entry("transactional.id.expiration.ms", ConfigType.INT, "kaas.transaction.id-expiration",
                Long.toString(t.idExpiration().toMillis()), "How long an idle transactional id is kept."));
        out.add(new Entry("transaction.abort.timed.out.transaction.cleanup.interval.ms", ConfigType.INT,
                "kaas.transaction.abort-timed-out-interval", Long.toString(t.abortTimedOutInterval().toMillis()),
                "How often timed-out transactions are aborted."));
        out.add(new Entry("transaction.remove.expired.transaction.cleanup.interval.ms", ConfigType.INT,
                "kaas.transaction.remove-expired-interval", Long.toString(t.removeExpiredInterval().toMillis()),
                "How often expired transactional ids are removed."));
        out.add(new Entry("transaction.partition.verification.enable", ConfigType.BOOLEAN, "kaas.transaction.partition-verification-enable",
                Boolean.toString(t.partitionVerificationEnable()), "Whether a transaction's first write to a partition is verified."));
        // The topic defaults, under every Apache broker name (TopicDefaults): a name set for this broker shows its value as set;
        // of the names left unset, the one that carries Apache's default shows it (log.retention.hours=168), the others null.
        for (var e : TopicDefaults.SYNONYMS.entrySet()) {
            topicDefaults(out, e.getKey(), e.getValue(), defaults);
        }
        // Set at run time and kept; kaas copies nothing between brokers, so they limit nothing (compatibility.md).
        for (String throttle : DynamicBrokerConfigs.THROTTLES) {
            List<TopicConfigEntries.Synonym> chain = dynamicChain(throttle, clusterDefault, dynamic);
            // As Apache: described only once set.
            if (!chain.isEmpty()) {
                out.add(new Entry(throttle, ConfigType.LONG, throttle, chain.get(0).value(),
                        "A replication throttle: kept, but nothing is replicated in kaas.", chain));
            }
        }
        // Custom properties (names Apache does not know), as Apache's allConfigs lists them: kept, read by nothing in kaas.
        java.util.Set<String> custom = new java.util.TreeSet<>();
        clusterDefault.keySet().stream().filter(DynamicBrokerConfigs::custom).forEach(custom::add);
        dynamic.keySet().stream().filter(DynamicBrokerConfigs::custom).forEach(custom::add);
        // A name kaas already describes (super.users, allow.everyone.if.no.acl.found: the authorizer's, not KafkaConfig's) once.
        out.forEach(e -> custom.remove(e.name()));
        for (String name : custom) {
            // Apache's maybeSensitive: of unknown type, so its value is never shown, nor its synonyms'.
            List<TopicConfigEntries.Synonym> chain = dynamicChain(name, clusterDefault, dynamic).stream()
                    .map(y -> new TopicConfigEntries.Synonym(y.name(), null, y.source())).toList();
            out.add(new Entry(name, ConfigType.UNKNOWN, null, null, "A custom broker property: kept, not read by kaas.", chain, true));
        }
        out.sort(java.util.Comparator.comparing(Entry::name));
        return out;
    }

    /**
     * Apache's: only its reconfigurable keys are writable (the throttles are quota configs, and a
     * listener's prefixed names and custom properties are not among Apache's dynamic names: all
     * described read-only).
     */
    static boolean readOnly(String name) {
        return !DynamicBrokerConfigs.dynamic(name) || DynamicBrokerConfigs.THROTTLES.contains(name)
                || DynamicBrokerConfigs.LISTENER_CONNECTIONS.matcher(name).matches();
    }

    /**
     * A setting kaas changes at run time (the cleaner's, the connection limits): its value in force
     * and Apache's synonym chain (this broker's dynamic value, the cluster's, the static one when
     * this process was given it, Apache's default from {@code def}).
     */
    private static void layered(List<Entry> out, String name, ConfigType type, String kaasKey, String staticValue, String doc,
                                ConfigDef def, Map<String, String> clusterDefault, Map<String, String> dynamic) {
        List<TopicConfigEntries.Synonym> chain = dynamicChain(name, clusterDefault, dynamic);
        if (new Entry(name, type, kaasKey, staticValue, doc).source() == ConfigSource.STATIC_BROKER_CONFIG) {
            chain.add(new TopicConfigEntries.Synonym(name, staticValue, ConfigSource.STATIC_BROKER_CONFIG));
        }
        Object apacheDefault = def.configKeys().get(name).defaultValue;
        chain.add(new TopicConfigEntries.Synonym(name, String.valueOf(apacheDefault), ConfigSource.DEFAULT_CONFIG));
        // Without a dynamic or static value, kaas's own default is in force: Apache's (a test's kaas key may differ).
        String value = chain.get(0).source() == ConfigSource.DEFAULT_CONFIG ? staticValue : chain.get(0).value();
        out.add(new Entry(name, type, kaasKey, value, doc, chain));
    }

    /**
     * The listeners' security settings as Apache's broker describes its own (broker-wide names; a
     * listener's {@code listener.name.<l>.} variants are not listed): the protocol map, every SSL
     * setting a listener reads (Apache's definitions), the SASL server's. Passwords are sensitive,
     * as in Apache: described with a null value, never the secret.
     */
    private static void security(List<Entry> out, BrokerConfig.Broker b) {
        out.add(new Entry("listener.security.protocol.map", ConfigType.STRING, "kaas.broker.listener-security-protocol-map",
                b.listenerSecurityProtocolMap(), "Each listener's security protocol."));
        for (ConfigDef.ConfigKey k : dev.kaas.broker.auth.TlsEndpoint.DEF.configKeys().values()) {
            boolean secret = k.type == ConfigDef.Type.PASSWORD;
            String value = secret ? null : ConfigProvider.getConfig().getOptionalValue(k.name, String.class)
                    .orElse(k.defaultValue == null ? null : ConfigDef.convertToString(k.defaultValue, k.type));
            out.add(new Entry(k.name, typeOf(k.type), k.name, value, k.documentation, null, secret));
        }
        sasl(out, "sasl.enabled.mechanisms", ConfigType.LIST, dev.kaas.broker.auth.SaslEndpoint.DEFAULT_MECHANISMS,
                "The SASL mechanisms the SASL listeners offer.");
        sasl(out, "connections.max.reauth.ms", ConfigType.LONG, "0", "A SASL session's lifetime before it must re-authenticate (KIP-368); 0: none.");
        sasl(out, "sasl.server.max.receive.size", ConfigType.INT, Integer.toString(dev.kaas.broker.auth.SaslEndpoint.DEFAULT_MAX_RECEIVE),
                "The largest frame read before a SASL connection authenticates.");
        sasl(out, "connection.failed.authentication.delay.ms", ConfigType.INT,
                Long.toString(dev.kaas.broker.auth.SaslEndpoint.DEFAULT_FAILED_AUTHENTICATION_DELAY_MS),
                "How long a failed authentication waits before its connection closes.");
        ConfigDef saslDef = new ConfigDef();
        org.apache.kafka.common.config.SaslConfigs.addClientSaslSupport(saslDef);
        for (ConfigDef.ConfigKey k : saslDef.configKeys().values()) {
            if (k.name.startsWith("sasl.oauthbearer.")) {
                sasl(out, k.name, typeOf(k.type), k.defaultValue == null ? null : ConfigDef.convertToString(k.defaultValue, k.type), k.documentation);
            }
        }
    }

    private static void sasl(List<Entry> out, String name, ConfigType type, String apacheDefault, String doc) {
        out.add(new Entry(name, type, name, ConfigProvider.getConfig().getOptionalValue(name, String.class).orElse(apacheDefault), doc));
    }

    /** The dynamic layers of {@code name} that set it: this broker's, then the cluster's. */
    private static List<TopicConfigEntries.Synonym> dynamicChain(String name, Map<String, String> clusterDefault, Map<String, String> dynamic) {
        List<TopicConfigEntries.Synonym> chain = new ArrayList<>();
        if (dynamic.get(name) != null) {
            chain.add(new TopicConfigEntries.Synonym(name, dynamic.get(name), ConfigSource.DYNAMIC_BROKER_CONFIG));
        }
        if (clusterDefault.get(name) != null) {
            chain.add(new TopicConfigEntries.Synonym(name, clusterDefault.get(name), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        }
        return chain;
    }

    /**
     * Each listener's own connection limits ({@code listener.name.<l>.max.connections}, {@code
     * …max.connection.creation.rate}), described as Apache describes them: only where set, statically
     * (server.properties) or at run time, the value in force with its chain.
     */
    private static void listenerLimits(List<Entry> out, String listeners, Map<String, String> clusterDefault, Map<String, String> dynamic) {
        for (dev.kaas.broker.protocol.ListenerSpec spec : dev.kaas.broker.protocol.ListenerSpec.parseList(listeners)) {
            for (String limit : List.of("max.connections", "max.connection.creation.rate")) {
                String name = "listener.name." + spec.name().toLowerCase(java.util.Locale.ROOT) + "." + limit;
                List<TopicConfigEntries.Synonym> chain = dynamicChain(name, clusterDefault, dynamic);
                ConfigProvider.getConfig().getOptionalValue(name, String.class)
                        .ifPresent(v -> chain.add(new TopicConfigEntries.Synonym(name, v, ConfigSource.STATIC_BROKER_CONFIG)));
                if (!chain.isEmpty()) {
                    out.add(new Entry(name, ConfigType.INT, name, chain.get(0).value(), "Listener " + spec.name() + "'s own " + limit + ".", chain));
                }
            }
        }
    }

    /** The type of a broker name kaas changes at run time (a primary topic-default name, a cleaner setting, a connection limit or a throttle). */
    static ConfigType typeOf(String dynamicName) {
        if (DynamicBrokerConfigs.THROTTLES.contains(dynamicName)) {
            return ConfigType.LONG;
        }
        if (DynamicBrokerConfigs.LISTENER_CONNECTIONS.matcher(dynamicName).matches()) {
            return ConfigType.INT;
        }
        ConfigDef.ConfigKey connections = DynamicBrokerConfigs.CONNECTIONS.configKeys().get(dynamicName);
        if (connections != null) {
            return typeOf(connections.type);
        }
        ConfigDef.ConfigKey cleaner = DynamicBrokerConfigs.CLEANER.configKeys().get(dynamicName);
        if (cleaner != null) {
            return typeOf(cleaner.type);
        }
        for (var e : TopicDefaults.SYNONYMS.entrySet()) {
            if (e.getValue().get(0).name().equals(dynamicName)) {
                return typeOf(TopicConfigs.DEF.configKeys().get(e.getKey()).type);
            }
        }
        return ConfigType.UNKNOWN;
    }

    private static ConfigType typeOf(ConfigDef.Type t) {
        return switch (t) {
            case INT -> ConfigType.INT;
            case LONG -> ConfigType.LONG;
            case DOUBLE -> ConfigType.DOUBLE;
            case LIST -> ConfigType.LIST;
            case BOOLEAN -> ConfigType.BOOLEAN;
            case PASSWORD -> ConfigType.PASSWORD;
            case CLASS -> ConfigType.CLASS;
            case SHORT -> ConfigType.SHORT;
            default -> ConfigType.STRING;
        };
    }

    private static void topicDefaults(List<Entry> out, String topicKey, List<TopicDefaults.Synonym> names, TopicDefaults defaults) {
        ConfigDef.ConfigKey def = TopicConfigs.DEF.configKeys().get(topicKey);
        for (TopicDefaults.Synonym s : names) {
            List<TopicConfigEntries.Synonym> chain = TopicConfigEntries.brokerChain(defaults, topicKey, s.name());
            // Apache shows a name's own value: from the highest layer that sets it, else its default (null for the finer names).
            String value = defaults.setting(s.name()) != null ? defaults.setting(s.name()) : TopicDefaults.brokerDefault(topicKey, s);
            ConfigType type = s.multiplier() != 1 ? ConfigType.INT : typeOf(def.type);
            // The chain is the source: a name no layer sets and with no default of its own is DEFAULT_CONFIG with value null.
            out.add(new Entry(s.name(), type, s.name(), value, "The broker default of the topic config " + topicKey + ".", chain));
        }
    }
}
