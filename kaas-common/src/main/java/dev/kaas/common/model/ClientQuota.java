package dev.kaas.common.model;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The quotas set for one client quota entity, as Apache's controller keeps them
 * (ClientQuotaRecord, replayed): AlterClientQuotas and {@code kafka-configs.sh --entity-type
 * users/clients/ips}.
 *
 * @param entity by entity type ({@code user}, {@code client-id}, {@code ip}), the name, or
 *               {@code null} for the default entity of that type
 * @param values by quota key ({@code producer_byte_rate}, {@code consumer_byte_rate},
 *               {@code request_percentage}, {@code controller_mutation_rate},
 *               {@code connection_creation_rate}); never empty in a published assignment
 */
public record ClientQuota(Map<String, String> entity, Map<String, Double> values) {
    public static final String USER = "user";
    public static final String CLIENT_ID = "client-id";
    public static final String IP = "ip";

    public ClientQuota {
        // Sorted (TreeMap keeps null names, which Map.copyOf would refuse), so one entity is always the same bytes.
        entity = Collections.unmodifiableMap(new TreeMap<>(entity));
        values = Collections.unmodifiableMap(new TreeMap<>(values));
    }

    /** The sensor a client's usage goes to (user and client-id tags, "" for a tag not used) and the quota that applies to it (null: none). */
    public record Resolved(String user, String clientId, Double limit) {
    }

    /**
     * Apache's DefaultQuotaCallback over the quotas of one kind ({@code limits}, by entity): which
     * sensor (user, client-id) a client's usage is counted in (quotaMetricTags, eight levels), and
     * the quota of that sensor (quotaLimit, which looks only at the levels its tags name: no quota
     * for tags without a user or a client id). Brokers use it for byte rates, the controller for
     * {@code controller_mutation_rate}.
     */
    public static Resolved resolve(Map<Map<String, String>, Double> limits, String user, String clientId) {
        String[] tags;
        if (limits.containsKey(both(user, clientId)) || limits.containsKey(both(user, null))) {
            tags = new String[] {user, clientId};
        } else if (limits.containsKey(userEntity(user))) {
            tags = new String[] {user, ""};
        } else if (limits.containsKey(both(null, clientId)) || limits.containsKey(both(null, null))) {
            tags = new String[] {user, clientId};
        } else if (limits.containsKey(userEntity(null))) {
            tags = new String[] {user, ""};
        } else {
            tags = new String[] {"", clientId};
        }
        String u = tags[0];
        String c = tags[1];
        Double limit;
        if (!u.isEmpty() && !c.isEmpty()) {
            limit = first(limits, both(u, c), both(u, null), both(null, c), both(null, null));
        } else if (!u.isEmpty()) {
            limit = first(limits, userEntity(u), userEntity(null));
        } else if (!c.isEmpty()) {
            limit = first(limits, client(c), client(null));
        } else {
            limit = null;
        }
        return new Resolved(u, c, limit);
    }

    /** The quotas of one key by entity, ip entities left out (they carry connection_creation_rate only). */
    public static Map<Map<String, String>, Double> limits(java.util.List<ClientQuota> quotas, String key) {
        Map<Map<String, String>, Double> limits = new java.util.HashMap<>();
        for (ClientQuota q : quotas) {
            Double v = q.values().get(key);
            if (v != null && !q.entity().containsKey(IP)) {
                limits.put(q.entity(), v);
            }
        }
        return limits;
    }

    @SafeVarargs
    private static Double first(Map<Map<String, String>, Double> limits, Map<String, String>... entities) {
        for (Map<String, String> e : entities) {
            Double v = limits.get(e);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private static Map<String, String> userEntity(String name) {
        Map<String, String> m = new TreeMap<>();
        m.put(USER, name);
        return m;
    }

    private static Map<String, String> client(String name) {
        Map<String, String> m = new TreeMap<>();
        m.put(CLIENT_ID, name);
        return m;
    }

    private static Map<String, String> both(String user, String clientId) {
        Map<String, String> m = new TreeMap<>();
        m.put(USER, user);
        m.put(CLIENT_ID, clientId);
        return m;
    }

    /** The entity as Apache's ClientQuotaEntity prints it in messages. */
    public static String describe(Map<String, String> entity) {
        return "ClientQuotaEntity(entries=" + entity + ")";
    }
}
