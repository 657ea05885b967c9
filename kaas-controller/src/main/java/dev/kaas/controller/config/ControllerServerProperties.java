package dev.kaas.controller.config;

import dev.kaas.common.config.ServerPropertiesSource;
import dev.kaas.common.config.TopicDefaults;
import java.util.Set;

/**
 * The server.properties keys the controller reads: {@code kaas.data-dir}, its own section, and the
 * broker's log settings under their Apache names, which topic configs are validated over.
 */
public final class ControllerServerProperties extends ServerPropertiesSource {
    private static final Set<String> LOG_SETTINGS = Set.copyOf(TopicDefaults.brokerNames());

    public ControllerServerProperties() {
        super(key -> key.equals("kaas.data-dir") || key.startsWith("kaas.controller.") || LOG_SETTINGS.contains(key));
    }
}
