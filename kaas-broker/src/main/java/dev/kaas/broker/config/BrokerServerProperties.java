package dev.kaas.broker.config;

import dev.kaas.common.config.ServerPropertiesSource;

/** The server.properties keys the broker reads: its own {@code kaas.*} sections, and the topic defaults under their Apache names. */
public final class BrokerServerProperties extends ServerPropertiesSource {
    public BrokerServerProperties() {
        super(key -> !key.startsWith("kaas.") || key.equals("kaas.data-dir") || key.startsWith("kaas.broker.")
                || key.startsWith("kaas.group.") || key.startsWith("kaas.transaction."));
    }
}
