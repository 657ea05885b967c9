package dev.kaas.broker.admin;

import java.util.List;

/** Config values as Apache prints them to clients (lists comma-joined, null as null). */
final class ConfigValues {
    private ConfigValues() {
    }

    static String format(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof List<?> list) {
            return String.join(",", list.stream().map(String::valueOf).toList());
        }
        return String.valueOf(value);
    }
}
