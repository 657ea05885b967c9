package dev.kaas.common.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The {@link ServerProperties} file as a configuration source of one process: each process
 * registers a subclass as a service, naming the keys it reads, because Quarkus refuses a
 * {@code kaas.*} key its configuration does not declare and the file serves both processes.
 * Ordinal 270: over {@code application.properties} (250, and 260 for
 * {@code config/application.properties} in the working directory), under the environment (300)
 * and system properties (400), so {@code ./kaas up}'s per-process flags and a manifest's
 * environment win over the file, and DescribeConfigs reports the file's keys as
 * STATIC_BROKER_CONFIG.
 */
public abstract class ServerPropertiesSource implements ConfigSource {
    public static final int ORDINAL = 270;

    private final String name;
    private final Map<String, String> properties;

    /** @param reads whether this process reads a (translated) key; the others are the other process's */
    protected ServerPropertiesSource(Predicate<String> reads) {
        Path file = ServerProperties.configured();
        if (file == null) {
            name = "server.properties (none)";
            properties = Map.of();
            return;
        }
        name = "server.properties " + file;
        try {
            properties = ServerProperties.load(file).properties().entrySet().stream().filter(e -> reads.test(e.getKey()))
                    .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));
        } catch (ServerProperties.Invalid e) {
            // The processes' main methods check the file first and exit with this line; this is for an embedded start.
            throw new IllegalArgumentException(e.getMessage());
        }
    }

    @Override
    public Set<String> getPropertyNames() {
        return properties.keySet();
    }

    @Override
    public String getValue(String propertyName) {
        return properties.get(propertyName);
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }
}
