package dev.kaas.broker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Every {@code kaas.*} key the broker reads, with its default. */
@ConfigMapping(prefix = "kaas")
public interface BrokerConfig {
    /** The shared volume: partition logs and {@code __cluster/} files. */
    @WithDefault("kaas-data")
    String dataDir();

    /**
     * An Apache-style server.properties this process reads under Apache's broker names
     * ({@code ./kaas up --config}; also {@code KAAS_CONFIG_FILE}). Read by the process's main
     * method and its ServerPropertiesSource, declared here so the key is known.
     */
    java.util.Optional<String> configFile();

    /**
     * The file holding the key brokers prove on the controller link (a mounted Kubernetes
     * Secret). Without it, {@code <data-dir>/__cluster/link.key}, which the first controller
     * makes. Every controller and broker of a cluster must name the same key. See security.md.
     */
    java.util.Optional<String> linkKeyFile();

    Broker broker();

    Group group();

    Transaction transaction();

    Metrics metrics();

    Tracing tracing();

    /** Request tracing (src/docs/operations.md#tracing): off unless both keys are set. */
    interface Tracing {
        /**
         * The share of Kafka requests traced, from 0 (none, the default) to 1 (every one), decided
         * when a request's frame arrives; an untraced request costs a random draw.
         */
        @WithDefault("0")
        double sampleRatio();

        /**
         * Where spans go by OTLP over HTTP (protobuf), the signal's full URL, e.g.
         * {@code http://otel-collector:4318/v1/traces}. Unset: no tracing, whatever the ratio.
         */
        java.util.Optional<String> otlpEndpoint();
    }

    /** What the broker's metrics keep (src/docs/operations.md#metrics). */
    interface Metrics {
        /**
         * The Log gauges ({@code kafka_log_log_size}, {@code …logstartoffset}, {@code …logendoffset}),
         * one series per partition: off for a broker with more partitions than the scraper should hold.
         */
        @WithDefault("true")
        boolean partitionMetrics();

        /**
         * The most series one metric holds; past it, the rest are folded into one series labelled
         * {@code otel_metric_overflow="true"}, so a scrape's size stays bounded. The request
         * histograms need no limit: their series are Apache's request names, a fixed set.
         */
        @WithDefault("10000")
        int maxSeries();

        /**
         * How often the broker sends the controller what it leads and coordinates (log offsets and
         * sizes, groups and their committed offsets), from which the controller's consumer-lag
         * series are computed: lag is at most this old.
         */
        @WithDefault("10s")
        java.time.Duration statsInterval();

        /**
         * Where to push the same metrics by OTLP over HTTP (protobuf), the signal's full URL, e.g.
         * {@code http://otel-collector:4318/v1/metrics}. Unset: no export.
         */
        java.util.Optional<String> otlpEndpoint();

        /** How often the OTLP export pushes (cumulative values, as the scrape reads them). */
        @WithDefault("60s")
        java.time.Duration otlpInterval();
    }

    /** The transaction coordinator's settings, Apache's keys and defaults. */
    interface Transaction {
        /** Apache {@code transaction.max.timeout.ms}: InitProducerId with a longer {@code transaction.timeout.ms} gets INVALID_TRANSACTION_TIMEOUT. */
        @WithDefault("15m")
        Duration maxTimeout();

        /** Apache {@code transactional.id.expiration.ms}: a transactional id idle this long (no transaction open) is forgotten. */
        @WithDefault("7d")
        Duration idExpiration();

        /** Apache {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}: how often open transactions are checked against their timeout. */
        @WithDefault("10s")
        Duration abortTimedOutInterval();

        /** Apache {@code transaction.remove.expired.transaction.cleanup.interval.ms}. */
        @WithDefault("1h")
        Duration removeExpiredInterval();

        /**
         * Apache {@code transaction.partition.verification.enable} (KIP-890 part 1): a producer's
         * first transactional write to a partition is checked with its transaction coordinator.
         * Off only to reproduce the hanging transactions it prevents.
         */
        @WithDefault("true")
        boolean partitionVerificationEnable();
    }

    /** The group coordinator's settings, Apache's keys and defaults. */
    interface Group {
        /** Apache {@code group.min.session.timeout.ms}. */
        @WithDefault("6s")
        Duration minSessionTimeout();

        /** Apache {@code group.max.session.timeout.ms}. */
        @WithDefault("30m")
        Duration maxSessionTimeout();

        /** Apache {@code group.initial.rebalance.delay.ms}. */
        @WithDefault("3s")
        Duration initialRebalanceDelay();

        /** Apache {@code group.max.size}. */
        @WithDefault("2147483647")
        int maxSize();

        /** Apache {@code offsets.retention.minutes}. */
        @WithDefault("7d")
        Duration offsetsRetention();

        /** Apache {@code offsets.retention.check.interval.ms}. */
        @WithDefault("10m")
        Duration offsetsRetentionCheckInterval();

        /** Apache {@code offset.metadata.max.bytes}. */
        @WithDefault("4096")
        int offsetMetadataMaxBytes();
    }

    interface Broker {
        /** This broker's node id (Apache {@code node.id}). */
        @WithDefault("1")
        int id();

        /** Where to bind, Apache syntax: {@code NAME://host:port,…}. */
        @WithDefault("PLAINTEXT://127.0.0.1:9092")
        String listeners();

        /** Apache {@code listener.security.protocol.map}: each listener name's security protocol. */
        @WithDefault(dev.kaas.broker.auth.ListenerProtocols.APACHE_DEFAULT)
        String listenerSecurityProtocolMap();

        /** How often the TLS listeners' keystore and truststore files are checked for a change (kaas's; Apache reloads them on a dynamic config update). */
        @WithDefault("10s")
        Duration sslReloadInterval();

        /** What clients are told, per listener name, Apache syntax. Defaults to {@code listeners} with localhost for a wildcard host. */
        @WithDefault("PLAINTEXT://localhost:9092")
        String advertisedListeners();

        /** Largest request frame accepted before allocation (Apache {@code socket.request.max.bytes}). */
        @WithDefault("104857600")
        int socketRequestMaxBytes();

        /**
         * Broker-wide budget for request bytes being received or handled (Apache
         * {@code queued.max.request.bytes}); when it is used up, connections stop reading until
         * requests finish. Apache's default is -1 (unbounded); kaas bounds it by default at two
         * maximum-size requests, so slow or hostile senders cannot grow the heap. Must be at
         * least {@code socket-request-max-bytes}, or -1 for unbounded.
         */
        @WithDefault("209715200")
        long queuedMaxRequestBytes();

        /** Apache {@code connections.max.idle.ms}: a connection neither read nor written for this long is closed; 0 never. */
        @WithDefault("10m")
        Duration connectionsMaxIdle();

        /** Apache {@code max.connections.per.ip}: connections above it from one address are closed when accepted. */
        @WithDefault("2147483647")
        int maxConnectionsPerIp();

        /** Apache {@code max.connections.per.ip.overrides}: {@code host:count,…}, limits of named hosts or addresses instead of the one above. */
        java.util.Optional<String> maxConnectionsPerIpOverrides();

        /** Apache {@code max.connections}: connections above it, from anywhere, are closed when accepted. */
        @WithDefault("2147483647")
        int maxConnections();

        /**
         * Apache {@code max.connection.creation.rate}: connections accepted per second over every
         * listener; past it new connections wait before they are served (per listener:
         * {@code listener.name.<listener>.max.connection.creation.rate}).
         */
        @WithDefault("2147483647")
        int maxConnectionCreationRate();

        /** Apache {@code fetch.max.bytes}: a Fetch response holds at most this many record bytes (the first batch whole, KIP-74). */
        @WithDefault("57671680")
        int fetchMaxBytes();

        /**
         * Apache {@code authorizer.class.name}: {@code org.apache.kafka.metadata.authorizer.StandardAuthorizer}
         * (or ZooKeeper mode's {@code kafka.security.authorizer.AclAuthorizer}) turns ACLs on; unset, everyone may do everything.
         */
        java.util.Optional<String> authorizerClassName();

        /** Apache {@code super.users}: {@code User:admin;User:ops}, principals every ACL check allows. */
        java.util.Optional<String> superUsers();

        /** Apache {@code allow.everyone.if.no.acl.found}: whether a resource without any ACL is open to all. */
        @WithDefault("false")
        boolean allowEveryoneIfNoAclFound();

        /** Apache {@code quota.window.num}: samples a client quota's rate is measured over. */
        @WithDefault("11")
        int quotaWindowNum();

        /** Apache {@code quota.window.size.seconds}: the length of each sample. */
        @WithDefault("1")
        int quotaWindowSizeSeconds();

        /** Apache {@code auto.create.topics.enable}. */
        @WithDefault("true")
        boolean autoCreateTopicsEnable();

        /**
         * Threads that run the partitions' writers: validation, appends, and the group-commit
         * fsync that acknowledges them (a writer holds a thread only while it has work). Fewer
         * than the partitions written at once lets one partition's fsync on a slow volume hold
         * up another's appends.
         */
        @WithDefault("16")
        int writerThreads();

        /** Worker threads for reads, scans and the group coordinator's files; never the event loop. */
        @WithDefault("8")
        int storageThreads();

        /** Threads that run the fsyncs no writer runs: page-cache logs ({@code flush.messages} > 1) and {@code flush.ms}. */
        @WithDefault("8")
        int flushThreads();

        /** Apache {@code log.retention.check.interval.ms}: how often every open partition checks its retention limits. */
        @WithDefault("5m")
        Duration logRetentionCheckInterval();

        /** Apache {@code log.cleaner.enable}: compaction of {@code cleanup.policy=compact} topics. */
        @WithDefault("true")
        boolean logCleanerEnable();

        /** Apache {@code log.cleaner.threads}: compaction passes run at once. */
        @WithDefault("1")
        int logCleanerThreads();

        /** Apache {@code log.cleaner.backoff.ms}: how long a cleaner thread sleeps when no log needs cleaning. */
        @WithDefault("15s")
        Duration logCleanerBackoff();

        /** Apache {@code log.cleaner.dedupe.buffer.size}: memory for the key maps of all cleaner threads (allocated at the first pass). */
        @WithDefault("134217728")
        long logCleanerDedupeBufferSize();

        /** Apache {@code log.cleaner.io.buffer.size}: read and write buffers of all cleaner threads. */
        @WithDefault("524288")
        int logCleanerIoBufferSize();

        /** Apache {@code log.cleaner.io.buffer.load.factor}: a key map counts as full at this share of its slots. */
        @WithDefault("0.9")
        double logCleanerIoBufferLoadFactor();

        /** Apache {@code log.cleaner.io.max.bytes.per.second}: each cleaner thread's read plus write rate. */
        @WithDefault("1.7976931348623157E308")
        double logCleanerIoMaxBytesPerSecond();

        /** Requests read from one connection before reading pauses until responses go out. */
        @WithDefault("16")
        int maxInFlightPerConnection();

        /** How often the broker reports to the controller. */
        @WithDefault("1s")
        Duration reportInterval();

        /**
         * Every controller's gRPC address, {@code host:port,host:port}: the broker tries them in
         * turn until the one holding the lease accepts its registration (standbys refuse it).
         * Unset: the single controller of {@code quarkus.grpc.clients.controller.host/port}.
         */
        java.util.Optional<String> controllers();
    }
}
