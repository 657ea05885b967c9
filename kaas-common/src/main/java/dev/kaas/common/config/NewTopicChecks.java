package dev.kaas.common.config;

import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;

/**
 * The checks of a topic to create that need no catalog, made before a request reaches the
 * controller (which checks names, partition limits and configs against the catalog): the Kafka
 * API's CreateTopics on a broker and the controller's REST API make the same ones, with Apache's
 * errors and messages.
 */
public final class NewTopicChecks {
    private NewTopicChecks() {
    }

    /** A refusal: Apache's error and message. */
    public record Refusal(Errors error, String message) {
    }

    /**
     * @param partitions  -1 for the cluster default
     * @param replication -1 for the default; any value of 1 or more is accepted (one copy, on the volume)
     * @return null when the controller may look at it
     */
    public static Refusal check(String name, int partitions, int replication) {
        if (Topic.isInternal(name)) {
            // Apache creates these itself (and a user's CreateTopics then meets TOPIC_ALREADY_EXISTS);
            // kaas has no such topics, so the names stay reserved (src/docs/compatibility.md).
            return new Refusal(Errors.INVALID_TOPIC_EXCEPTION,
                    "Topic name " + name + " is reserved: kaas keeps group offsets and transaction state in files, not in internal topics.");
        }
        if (replication == 0 || replication < -1) {
            return new Refusal(Errors.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.");
        }
        if (partitions == 0 || partitions < -1) {
            return new Refusal(Errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.");
        }
        return null;
    }
}
