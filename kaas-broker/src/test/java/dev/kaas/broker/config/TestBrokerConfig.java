package dev.kaas.broker.config;

import io.smallrye.config.WithDefault;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;

/** A {@link BrokerConfig} with every key at its declared default unless overridden by method name ("broker.fetchMaxBytes"), for tests without Quarkus. */
public final class TestBrokerConfig {
    private TestBrokerConfig() {
    }

    public static BrokerConfig of(Map<String, Object> overrides) {
        return proxy(BrokerConfig.class, "", overrides);
    }

    public static BrokerConfig defaults() {
        return of(Map.of());
    }

    private static <T> T proxy(Class<T> type, String prefix, Map<String, Object> overrides) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) -> {
            if (m.getDeclaringClass() == Object.class) {
                return m.getName().equals("toString") ? type.getSimpleName() : m.invoke(overrides, args);
            }
            String key = prefix + m.getName();
            if (overrides.containsKey(key)) {
                return overrides.get(key);
            }
            if (m.getReturnType() == java.util.Optional.class) {
                return java.util.Optional.empty();
            }
            if (m.getReturnType().isInterface()) {
                return proxy(m.getReturnType(), key + ".", overrides);
            }
            return parse(m, m.getAnnotation(WithDefault.class).value());
        }));
    }

    private static Object parse(Method m, String value) {
        Class<?> t = m.getReturnType();
        if (t == int.class) {
            return Integer.parseInt(value);
        } else if (t == long.class) {
            return Long.parseLong(value);
        } else if (t == boolean.class) {
            return Boolean.parseBoolean(value);
        } else if (t == double.class) {
            return Double.parseDouble(value);
        } else if (t == Duration.class) {
            return value.endsWith("d") ? Duration.ofDays(Long.parseLong(value.substring(0, value.length() - 1)))
                    : Duration.parse("PT" + value.toUpperCase());
        }
        return value;
    }
}
