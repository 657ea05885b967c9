package dev.kaas.broker.protocol;

import dev.kaas.broker.config.DynamicConfigLayers;
import dev.kaas.common.config.DynamicBrokerConfigs;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;

/**
 * The connection limits in force: each of Apache's names from this broker's dynamic config,
 * else the cluster's dynamic default, else the static setting (server.properties or the kaas
 * key), as Apache's DynamicBrokerConfig layers them. A dynamic value that does not pass (the
 * controller checked it; another version's rules, or an override host that no longer resolves)
 * is left out and the layer below it used, as Apache leaves out an invalid dynamic value. Pure.
 *
 * @param maxPerIp      {@code max.connections.per.ip}
 * @param overrides     {@code max.connections.per.ip.overrides}, as written
 * @param maxTotal      {@code max.connections}
 * @param creationRate  {@code max.connection.creation.rate}
 * @param listenerMax   {@code listener.name.<l>.max.connections} by listener name as configured
 * @param listenerRate  {@code listener.name.<l>.max.connection.creation.rate} by listener name as configured
 */
record ConnectionSettings(int maxPerIp, String overrides, int maxTotal, int creationRate, Map<String, Integer> listenerMax,
                          Map<String, Integer> listenerRate) {

    ConnectionSettings {
        listenerMax = Map.copyOf(listenerMax);
        listenerRate = Map.copyOf(listenerRate);
    }

    /** These (static) settings under the dynamic layers, for the broker's {@code listeners}. */
    ConnectionSettings withDynamic(DynamicConfigLayers layers, List<String> listeners) {
        int perIp = layered(layers, "max.connections.per.ip", maxPerIp);
        String over = overrides;
        for (String v : values(layers, "max.connections.per.ip.overrides")) {
            try {
                DynamicBrokerConfigs.connectionValue("max.connections.per.ip.overrides", v);
                over = v;
                break;
            } catch (ConfigException invalid) {
                // The layer below, as Apache.
            }
        }
        Map<String, Integer> max = new HashMap<>(listenerMax);
        Map<String, Integer> rate = new HashMap<>(listenerRate);
        for (String l : listeners) {
            String prefix = "listener.name." + l.toLowerCase(Locale.ROOT) + ".";
            Integer m = layered(layers, prefix + "max.connections", null);
            if (m != null) {
                max.put(l, m);
            }
            Integer r = layered(layers, prefix + "max.connection.creation.rate", null);
            if (r != null) {
                rate.put(l, r);
            }
        }
        return new ConnectionSettings(perIp, over, layered(layers, "max.connections", maxTotal),
                layered(layers, "max.connection.creation.rate", creationRate), max, rate);
    }

    /**
     * The limits to count connections against, the overrides' hosts resolved now.
     *
     * @throws IllegalArgumentException with Apache's message when they cannot be (see {@link ConnectionLimits#parseOverrides})
     */
    ConnectionLimits.Limits limits() {
        return new ConnectionLimits.Limits(maxPerIp, ConnectionLimits.parseOverrides(overrides, maxPerIp), maxTotal, listenerMax);
    }

    private static Integer layered(DynamicConfigLayers layers, String name, Integer below) {
        for (String v : values(layers, name)) {
            try {
                return (Integer) DynamicBrokerConfigs.connectionValue(name, v);
            } catch (ConfigException invalid) {
                // The layer below, as Apache.
            }
        }
        return below;
    }

    /** The dynamic values of {@code name}, this broker's first. */
    private static List<String> values(DynamicConfigLayers layers, String name) {
        java.util.ArrayList<String> out = new java.util.ArrayList<>(2);
        if (layers.broker().get(name) != null) {
            out.add(layers.broker().get(name));
        }
        if (layers.clusterDefault().get(name) != null) {
            out.add(layers.clusterDefault().get(name));
        }
        return out;
    }
}
