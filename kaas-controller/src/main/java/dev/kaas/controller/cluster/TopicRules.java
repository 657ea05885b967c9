package dev.kaas.controller.cluster;

import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.model.TopicSpec;
import dev.kaas.proto.ConfigOp;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;

/**
 * What makes a new topic or a change to one acceptable, in one place for both ways a topic is
 * declared: CreateTopics through the Kafka API (Apache's error codes and messages) and a
 * {@code KafkaTopic} resource (the same checks, named as condition reasons).
 */
final class TopicRules {
    /** Why a declaration was refused: Apache's error for the Kafka API, a condition reason for a resource. */
    record Problem(Errors error, String reason, String message) {
    }

    private TopicRules() {
    }

    /**
     * @param duplicateInRequest the same name appears twice in one CreateTopics request
     * @param clusterPartitions  partitions the catalog holds before this topic
     * @return null when {@code name} may be created as asked
     */
    static Problem checkNew(String name, int partitions, Map<String, String> configs, boolean duplicateInRequest,
                            Collection<TopicSpec> existing, long clusterPartitions, int maxPartitions, Map<String, String> brokerDefaults) {
        try {
            Topic.validate(name);
        } catch (InvalidTopicException e) {
            return new Problem(Errors.INVALID_TOPIC_EXCEPTION, "InvalidTopicName", e.getMessage());
        }
        if (duplicateInRequest) {
            return new Problem(Errors.INVALID_REQUEST, "DuplicateTopic",
                    "Create topics request from client contains duplicate topic name " + name);
        }
        if (existing.stream().anyMatch(s -> s.name().equals(name))) {
            return new Problem(Errors.TOPIC_ALREADY_EXISTS, "TopicAlreadyExists", "Topic '" + name + "' already exists.");
        }
        if (existing.stream().anyMatch(s -> Topic.hasCollision(s.name(), name))) {
            return new Problem(Errors.INVALID_TOPIC_EXCEPTION, "TopicNameCollision",
                    "Topic '" + name + "' collides with existing topic because of '.' and '_'.");
        }
        if (partitions <= 0) {
            return new Problem(Errors.INVALID_PARTITIONS, "InvalidPartitions",
                    "Number of partitions was set to an invalid non-positive value.");
        }
        String invalidConfig = TopicConfigs.validate(configs, brokerDefaults);
        if (invalidConfig != null) {
            return new Problem(Errors.INVALID_CONFIG, "InvalidConfig", invalidConfig);
        }
        return checkLimit("Creating topic '" + name + "' with " + partitions + " partitions", partitions, clusterPartitions,
                maxPartitions);
    }

    /** An operation of an alter-configs request that cannot apply (Apache's INVALID_CONFIG before validation). */
    static final class ConfigOpException extends Exception {
        ConfigOpException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A topic's overrides after an alter-configs request, as Apache's
     * {@code ConfigurationControlManager.incrementalAlterConfigResource}: SET puts, DELETE removes,
     * APPEND and SUBTRACT change a list-typed key's comma-separated items (its default when not
     * overridden); with {@code replace} (legacy AlterConfigs) the ops are the whole new set.
     */
    static Map<String, String> applyConfigOps(Map<String, String> current, boolean replace, List<ConfigOp> ops)
            throws ConfigOpException {
        return applyConfigOps(current, replace, ops, key -> {
            org.apache.kafka.common.config.ConfigDef.ConfigKey def = TopicConfigs.DEF.configKeys().get(key);
            if (def == null || def.type != org.apache.kafka.common.config.ConfigDef.Type.LIST) {
                return null;
            }
            return def.defaultValue == null ? "" : String.join(",", ((List<?>) def.defaultValue).stream().map(String::valueOf).toList());
        });
    }

    /**
     * @param listDefault for a list-typed key, its default joined by commas (what APPEND and SUBTRACT
     *                    start from when it is not set); null for any other key
     */
    static Map<String, String> applyConfigOps(Map<String, String> current, boolean replace, List<ConfigOp> ops,
                                              java.util.function.Function<String, String> listDefault) throws ConfigOpException {
        Map<String, String> next = replace ? new java.util.TreeMap<>() : new java.util.TreeMap<>(current);
        for (ConfigOp op : ops) {
            String key = op.getName();
            switch (op.getOp()) {
                case 0 -> next.put(key, op.getValue());
                case 1 -> next.remove(key);
                case 2, 3 -> {
                    String defaultList = listDefault.apply(key);
                    if (defaultList == null) {
                        throw new ConfigOpException("Can't " + (op.getOp() == 2 ? "APPEND" : "SUBTRACT") + " to key " + key
                                + " because its type is not LIST.");
                    }
                    String base = next.containsKey(key) ? next.get(key) : defaultList;
                    List<String> items = new ArrayList<>();
                    for (String item : base.split(",")) {
                        if (!item.isEmpty()) {
                            items.add(item);
                        }
                    }
                    for (String item : op.getValue().split(",")) {
                        if (op.getOp() == 2) {
                            if (!items.contains(item)) {
                                items.add(item);
                            }
                        } else {
                            items.remove(item);
                        }
                    }
                    next.put(key, String.join(",", items));
                }
                default -> throw new ConfigOpException("Unknown operations type " + op.getOp());
            }
        }
        return next;
    }

    /** The cluster-wide cap: what an Apache operator gets from a CreateTopicPolicy that caps the cluster. */
    static Problem checkLimit(String action, int added, long clusterPartitions, int maxPartitions) {
        if (clusterPartitions + added <= maxPartitions) {
            return null;
        }
        return new Problem(Errors.POLICY_VIOLATION, "PolicyViolation", action + " would bring the cluster to "
                + (clusterPartitions + added) + " partitions, over its limit of " + maxPartitions
                + " (kaas.controller.max-partitions).");
    }
}
