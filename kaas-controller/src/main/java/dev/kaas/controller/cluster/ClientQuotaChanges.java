package dev.kaas.controller.cluster;

import dev.kaas.common.model.ClientQuota;
import dev.kaas.proto.AlterClientQuotasCall;
import dev.kaas.proto.QuotaAlteration;
import dev.kaas.proto.QuotaEntityPart;
import dev.kaas.proto.QuotaOp;
import dev.kaas.proto.QuotaResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.internals.QuotaConfigs;
import org.apache.kafka.common.protocol.Errors;

/**
 * AlterClientQuotas with Apache 3.7's rules and messages (ClientQuotaControlManager): entity types
 * {@code user}, {@code client-id} (together or alone) and {@code ip} (alone); the keys each may
 * have (kafka-clients' QuotaConfigs), values above zero, integral where the key is; an entity
 * named twice, or a key named twice for one entity, "Ignoring duplicate entity". Each entity's
 * changes apply together or not at all; a removal of a key that is not set does nothing. One
 * result per distinct entity, as Apache answers from a map keyed by entity. Two differences: an
 * {@code ip} entity must be an address literal (Apache also resolves host names, which would
 * block the controller loop on DNS), and a value that is not finite is refused (it would not
 * survive the JSON of the assignment). Pure: the caller publishes {@link Outcome#quotas}.
 */
final class ClientQuotaChanges {
    record Outcome(List<ClientQuota> quotas, List<QuotaResult> results, boolean changed) {
    }

    private ClientQuotaChanges() {
    }

    static Outcome apply(List<ClientQuota> current, AlterClientQuotasCall call) {
        Map<Map<String, String>, Map<String, Double>> next = new LinkedHashMap<>();
        current.forEach(q -> next.put(q.entity(), new TreeMap<>(q.values())));
        Map<Map<String, String>, QuotaResult> results = new LinkedHashMap<>();
        boolean changed = false;
        for (QuotaAlteration alteration : call.getAlterationsList()) {
            // Apache's request turns the parts into a map: a type named twice keeps its last name.
            Map<String, String> entity = new TreeMap<>();
            alteration.getEntityList().forEach(p -> entity.put(p.getType(), p.getDefaultEntity() ? null : p.getName()));
            Map<String, Double> ops = new HashMap<>();
            boolean duplicateKey = false;
            for (QuotaOp op : alteration.getOpsList()) {
                if (ops.containsKey(op.getKey())) {
                    duplicateKey = true;
                } else {
                    ops.put(op.getKey(), op.getRemove() ? null : op.getValue());
                }
            }
            if (duplicateKey || results.containsKey(entity)) {
                results.put(entity, result(entity, Errors.INVALID_REQUEST, "Ignoring duplicate entity " + ClientQuota.describe(entity)));
                continue;
            }
            Map<String, Double> values = next.getOrDefault(entity, Map.of());
            Map<String, Double> updated = new TreeMap<>(values);
            String problem = problem(entity, ops, updated);
            if (problem != null) {
                results.put(entity, result(entity, Errors.INVALID_REQUEST, problem));
                continue;
            }
            results.put(entity, result(entity, Errors.NONE, ""));
            if (!updated.equals(values) && !call.getValidateOnly()) {
                next.put(entity, updated);
                changed = true;
            }
        }
        List<ClientQuota> quotas = new ArrayList<>();
        next.forEach((entity, values) -> {
            if (!values.isEmpty()) {
                quotas.add(new ClientQuota(entity, values));
            }
        });
        return new Outcome(quotas, List.copyOf(results.values()), changed);
    }

    /** Apache's validateEntity, configKeysForEntityType and validateQuotaKeyValue; applies the ops to {@code values} when valid. */
    static String problem(Map<String, String> entity, Map<String, Double> ops, Map<String, Double> values) {
        if (entity.isEmpty()) {
            return "Invalid empty client quota entity";
        }
        for (Map.Entry<String, String> part : entity.entrySet()) {
            String type = part.getKey();
            if (!type.equals(ClientQuota.USER) && !type.equals(ClientQuota.CLIENT_ID) && !type.equals(ClientQuota.IP)) {
                return "Unhandled client quota entity type: " + type;
            }
            if (part.getValue() != null && part.getValue().isEmpty()) {
                return "Empty " + type + " not supported";
            }
        }
        Map<String, ConfigDef.ConfigKey> keys;
        if (entity.containsKey(ClientQuota.IP)) {
            if (entity.size() > 1) {
                // Apache's message, its missing space included.
                return "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId";
            }
            String ip = entity.get(ClientQuota.IP);
            if (ip != null && !isAddressLiteral(ip)) {
                return ip + " is not a valid IP or resolvable host.";
            }
            keys = QuotaConfigs.ipConfigs().configKeys();
        } else {
            keys = QuotaConfigs.userAndClientQuotaConfigs().configKeys();
        }
        for (Map.Entry<String, Double> op : ops.entrySet()) {
            String key = op.getKey();
            Double value = op.getValue();
            if (value == null) {
                values.remove(key);
                continue;
            }
            ConfigDef.ConfigKey configKey = keys.get(key);
            if (configKey == null) {
                return "Invalid configuration key " + key;
            }
            if (value <= 0.0) {
                return "Quota " + key + " must be greater than 0";
            }
            if (!Double.isFinite(value)) {
                return "Quota " + key + " must be a finite number";
            }
            String bad = switch (configKey.type()) {
                case DOUBLE -> null;
                case SHORT -> value > Short.MAX_VALUE ? "Proposed value for " + key + " is too large for a SHORT." : fractional(value, key);
                case INT -> value > Integer.MAX_VALUE ? "Proposed value for " + key + " is too large for an INT." : fractional(value, key);
                case LONG -> value > Long.MAX_VALUE ? "Proposed value for " + key + " is too large for a LONG." : fractional(value, key);
                default -> "Unexpected config type " + configKey.type() + " should be Long or Double";
            };
            if (bad != null) {
                return bad;
            }
            values.put(key, value);
        }
        return null;
    }

    private static String fractional(double value, String key) {
        return Math.abs(value % 1.0) > 1e-6 ? key + " cannot be a fractional value." : null;
    }

    /** An IPv4 or IPv6 literal, decided without a name lookup. */
    static boolean isAddressLiteral(String s) {
        if (s.length() > 64 || s.isEmpty()) {
            return false;
        }
        if (s.indexOf(':') >= 0) {
            if (!s.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
                return false;
            }
        } else if (!s.matches("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})")
                || java.util.Arrays.stream(s.split("\\.")).anyMatch(o -> Integer.parseInt(o) > 255)) {
            return false;
        }
        try {
            // Only literals reach here, which getByName parses without a lookup.
            java.net.InetAddress.getByName(s);
            return true;
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    private static QuotaResult result(Map<String, String> entity, Errors error, String message) {
        QuotaResult.Builder r = QuotaResult.newBuilder().setErrorCode(error.code()).setErrorMessage(message);
        entity.forEach((type, name) -> r.addEntity(QuotaEntityPart.newBuilder().setType(type)
                .setName(name == null ? "" : name).setDefaultEntity(name == null)));
        return r.build();
    }
}
