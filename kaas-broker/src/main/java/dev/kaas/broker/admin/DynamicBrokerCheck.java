package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.data.Partitions;
import dev.kaas.common.model.Assignment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;

/**
 * Apache's broker-side check of a dynamic broker config change ({@code ConfigAdminManager
 * .validateBrokerConfigChange}): the resource's stored configuration with the operations applied,
 * laid with the other layer over this broker's static settings, must be something this broker's
 * reconfigurable parts can take. In kaas the one with a rule of its own is the log cleaner
 * (thread count within half to double of the current one), checked only when the change moves
 * the cleaner's settings. Lists (APPEND, SUBTRACT) and values' types are the controller's to check.
 */
final class DynamicBrokerCheck implements ConfigAlterations.BrokerCheck {
    private final ClusterView view;
    private final Partitions partitions;
    private final int brokerId;

    DynamicBrokerCheck(ClusterView view, Partitions partitions, int brokerId) {
        this.view = view;
        this.partitions = partitions;
        this.brokerId = brokerId;
    }

    @Override
    public String check(String resource, List<ConfigAlterations.Op> ops, boolean legacy) {
        Assignment a = view.assignment();
        Map<String, String> clusterBefore = a.brokerConfig(Assignment.CLUSTER_DEFAULT);
        Map<String, String> mineBefore = a.brokerConfig(Integer.toString(brokerId));
        Map<String, String> cluster = new HashMap<>(clusterBefore);
        Map<String, String> mine = new HashMap<>(mineBefore);
        Map<String, String> target = resource.isEmpty() ? cluster : mine;
        if (legacy) {
            target.clear();
        }
        for (ConfigAlterations.Op o : ops) {
            OpType op = OpType.forId(o.op());
            if (op == OpType.SET) {
                target.put(o.name(), o.value());
            } else if (op == OpType.DELETE) {
                target.remove(o.name());
            }
        }
        String refused = partitions.cleanerChangeError(clusterBefore, mineBefore, cluster, mine);
        // Apache's text, as its DynamicBrokerConfig wraps the cleaner's ConfigException in another.
        return refused == null ? null
                : "Invalid value org.apache.kafka.common.config.ConfigException: " + refused + " for configuration Invalid dynamic configuration";
    }
}
