package dev.kaas.broker.auth;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Apache's {@code listener.security.protocol.map}: which security protocol each listener name
 * speaks. Apache's default maps each protocol's own name to itself, so {@code SSL://:9093} is a
 * TLS listener without a map.
 */
public final class ListenerProtocols {
    public static final String APACHE_DEFAULT = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

    private final Map<String, SecurityProtocol> byListener;

    private ListenerProtocols(Map<String, SecurityProtocol> byListener) {
        this.byListener = byListener;
    }

    /** Parses Apache's {@code NAME:PROTOCOL,...} syntax; a bad entry is one clear line, as Apache's config check gives it. */
    public static ListenerProtocols parse(String value) {
        Map<String, SecurityProtocol> out = new LinkedHashMap<>();
        for (String raw : value.split(",")) {
            String entry = raw.trim();
            if (entry.isEmpty()) {
                continue;
            }
            int colon = entry.indexOf(':');
            if (colon <= 0 || colon == entry.length() - 1) {
                throw new IllegalArgumentException("listener.security.protocol.map: '" + entry + "' is not NAME:PROTOCOL");
            }
            String name = entry.substring(0, colon).trim().toUpperCase(Locale.ROOT);
            String protocol = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            try {
                out.put(name, SecurityProtocol.forName(protocol));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("listener.security.protocol.map: unknown security protocol " + protocol
                        + " for listener " + name);
            }
        }
        return new ListenerProtocols(Map.copyOf(out));
    }

    /** The listener's protocol; Apache's message for a listener the map does not name. */
    public SecurityProtocol of(String listenerName) {
        SecurityProtocol p = byListener.get(listenerName.toUpperCase(Locale.ROOT));
        if (p == null) {
            throw new IllegalArgumentException("No security protocol defined for listener " + listenerName);
        }
        return p;
    }
}
