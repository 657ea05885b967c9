package dev.kaas.broker.config;

import java.util.Map;

/**
 * CDI event fired on the assignment thread with every applied assignment: the dynamic broker
 * configs in it, the cluster's defaults and this broker's own (each as stored, unchecked
 * strings). What a package outside {@code assignment} changes at run time (the connection
 * limits) follows them without the applier calling it.
 */
public record DynamicConfigLayers(Map<String, String> clusterDefault, Map<String, String> broker) {
    public DynamicConfigLayers {
        clusterDefault = Map.copyOf(clusterDefault);
        broker = Map.copyOf(broker);
    }

    /** The value in force for {@code name}: this broker's own, else the cluster's default, else null. */
    public String value(String name) {
        String mine = broker.get(name);
        return mine != null ? mine : clusterDefault.get(name);
    }
}
