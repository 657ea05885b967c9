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

    /** The entity as Apache's ClientQuotaEntity prints it in messages. */
    public static String describe(Map<String, String> entity) {
        return "ClientQuotaEntity(entries=" + entity + ")";
    }
}
