package dev.kaas.controller.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Every {@code kaas.*} key the controller reads, with its default. */
@ConfigMapping(prefix = "kaas")
public interface ControllerConfig {
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

    Controller controller();

    interface Controller {
        /** Lease holder identity; defaults to host name and process id. */
        Optional<String> id();

        /**
         * Where the lease, catalog, assignment and producer-id blocks are kept: {@code standalone}
         * (files under {@code <data-dir>/__cluster/}) or {@code kubernetes} (a Lease, KafkaTopic
         * resources and a ConfigMap in the namespace of {@code quarkus.kubernetes-client}; the
         * assignment and cluster id stay on the volume). See src/docs/kubernetes.md.
         */
        @WithDefault("standalone")
        MetadataBinding metadata();

        /** The Kubernetes binding's settings; read only with {@code metadata=kubernetes}. */
        Kubernetes kubernetes();

        /**
         * How often the leading controller looks for partition directories on the volume whose
         * topic is no longer in the catalog (left by a delete no broker could carry out) and
         * removes them, renamed aside first. The first look is one interval after it takes the lease.
         */
        @WithDefault("5m")
        Duration orphanSweepInterval();

        /**
         * The most partitions the cluster may hold, all topics together. CreateTopics (and
         * auto-creation) past it is refused with POLICY_VIOLATION. Each partition is a directory on
         * the shared volume and an entry in every assignment sent to every broker.
         */
        @WithDefault("20000")
        int maxPartitions();

        /**
         * How long a lease lasts without renewal; a successor waits this long after a crash. It is
         * renewed every third of it, and a controller that could not renew for two thirds of it
         * stops writing, before any successor can take it.
         */
        @WithDefault("5s")
        Duration leaseDuration();

        /** A broker that sends no report for this long is treated as gone (Apache {@code broker.session.timeout.ms}). */
        @WithDefault("9s")
        Duration brokerSessionTimeout();

        /**
         * After taking the lease, how long to wait for brokers to reconnect before publishing an
         * assignment that would move their partitions away. Brokers keep serving meanwhile.
         */
        @WithDefault("3s")
        Duration startupGrace();

        /** Partitions for CreateTopics with -1 and for auto-created topics (Apache {@code num.partitions}). */
        @WithDefault("1")
        int numPartitions();

        /**
         * Handoffs (planned moves of a partition or coordinator slot away from a live broker, as
         * when a broker joins) in flight at once. Each one makes its partition unavailable, with
         * retriable errors, from the old owner's close to the new owner's open.
         */
        @WithDefault("32")
        int maxMovesInFlight();

        /** Apache {@code controller.quota.window.num}: samples of a client's {@code controller_mutation_rate} (its burst, with the next). */
        @WithDefault("11")
        int quotaWindowNum();

        /** Apache {@code controller.quota.window.size.seconds}: the length of each sample. */
        @WithDefault("1")
        int quotaWindowSizeSeconds();
    }

    /** The REST admin API ({@code /api/v1}, src/docs/rest-api.md). */
    Rest rest();

    interface Rest {
        /**
         * Who may call the API: lines {@code token <role> <token>} (a bearer token) and
         * {@code basic <role> <user> <password>}, role {@code admin} or {@code read-only}; re-read
         * when the file changes (a rotated Kubernetes Secret). Without it the API is open only
         * when the HTTP port is bound to loopback in standalone mode, and refuses every call (401)
         * otherwise.
         */
        Optional<String> credentialsFile();
    }

    /** The controller's metrics, under the same keys as the broker's. */
    Metrics metrics();

    interface Metrics {
        /**
         * The most series one metric of {@code /q/metrics} holds (consumer lag is one series per
         * group and partition); past it, the rest are folded into one series labelled
         * {@code otel_metric_overflow="true"}.
         */
        @WithDefault("10000")
        int maxSeries();

        /** Where to push the same metrics by OTLP over HTTP, the signal's full URL ({@code …/v1/metrics}). Unset: no export. */
        Optional<String> otlpEndpoint();

        @WithDefault("60s")
        Duration otlpInterval();
    }

    interface Kubernetes {
        /** The {@code coordination.k8s.io/v1} Lease the controllers contend for; its leaseTransitions is the controller epoch. */
        @WithDefault("kaas-controller")
        String leaseName();

        /**
         * The namespace of the Lease, the KafkaTopic resources and the producer-id ConfigMap;
         * defaults to the client's (the pod's own namespace in a cluster).
         */
        Optional<String> namespace();

        /**
         * The longest one Kubernetes API call may take before the controller gives up on it (lease
         * calls: at most a third of the lease). The controller loop waits for these calls, and it
         * must keep renewing on time.
         */
        @WithDefault("2s")
        Duration callTimeout();

        /** A full reconcile of every KafkaTopic and KafkaUser this often, besides the one each watch event triggers. */
        @WithDefault("30s")
        Duration resync();
    }

    enum MetadataBinding {
        STANDALONE, KUBERNETES
    }
}
