package dev.kaas.broker.protocol;

import java.util.ArrayList;
import java.util.List;

/** One {@code NAME://host:port} entry of Apache's {@code listeners} / {@code advertised.listeners} syntax. */
public record ListenerSpec(String name, String host, int port) {
    public static List<ListenerSpec> parseList(String value) {
        List<ListenerSpec> out = new ArrayList<>();
        for (String raw : value.split(",")) {
            String s = raw.trim();
            if (s.isEmpty()) {
                continue;
            }
            int sep = s.indexOf("://");
            int colon = s.lastIndexOf(':');
            if (sep <= 0 || colon <= sep + 2) {
                throw new IllegalArgumentException("listener must be NAME://host:port, got: " + s);
            }
            String host = s.substring(sep + 3, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            out.add(new ListenerSpec(s.substring(0, sep), host.isEmpty() ? "0.0.0.0" : host, Integer.parseInt(s.substring(colon + 1))));
        }
        return out;
    }
}
