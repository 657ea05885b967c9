package dev.kaas.broker.protocol;

import io.quarkus.arc.All;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The one table of served APIs: dispatch reads it, ApiVersions advertises exactly it, and the
 * compatibility page in src/docs/ is checked against it by a test.
 */
@ApplicationScoped
public class ApiRegistry {
    private final Map<ApiKeys, ApiHandler> handlers = new EnumMap<>(ApiKeys.class);

    public ApiRegistry(@All List<ApiHandler> all) {
        for (ApiHandler h : all) {
            if (handlers.put(h.key(), h) != null) {
                throw new IllegalStateException("two handlers for " + h.key());
            }
        }
    }

    /** For tests without CDI. */
    public static ApiRegistry of(List<ApiHandler> all) {
        return new ApiRegistry(all);
    }

    public ApiHandler handler(ApiKeys key) {
        return handlers.get(key);
    }

    public boolean supports(ApiKeys key, short version) {
        ApiHandler h = handlers.get(key);
        return h != null && version >= h.minVersion() && version <= h.maxVersion();
    }

    public Collection<ApiHandler> handlers() {
        return handlers.values();
    }

    public ApiVersionCollection apiVersions() {
        ApiVersionCollection out = new ApiVersionCollection();
        for (ApiHandler h : handlers.values()) {
            out.add(new ApiVersion().setApiKey(h.key().id).setMinVersion(h.minVersion()).setMaxVersion(h.maxVersion()));
        }
        return out;
    }
}
