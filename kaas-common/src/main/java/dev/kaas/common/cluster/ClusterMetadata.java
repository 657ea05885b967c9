package dev.kaas.common.cluster;

/** The bound metadata/lease port: one of these per controller process, chosen by deployment mode. */
public interface ClusterMetadata {
    ControllerLease lease();

    TopicCatalog topics();

    ProducerIdStore producerIds();

    /** A stable cluster ID, created on first use (22-char Kafka Uuid string, as {@code kafka-storage format}). */
    String clusterId() throws java.io.IOException;
}
