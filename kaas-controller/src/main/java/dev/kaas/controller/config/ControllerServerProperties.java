package dev.kaas.controller.config;

import dev.kaas.common.config.ServerPropertiesSource;

/** The server.properties keys the controller reads: {@code kaas.data-dir} and its own section. */
public final class ControllerServerProperties extends ServerPropertiesSource {
    public ControllerServerProperties() {
        super(key -> key.equals("kaas.data-dir") || key.startsWith("kaas.controller."));
    }
}
