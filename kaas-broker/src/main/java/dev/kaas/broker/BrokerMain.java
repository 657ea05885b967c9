package dev.kaas.broker;

import dev.kaas.common.config.ServerProperties;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/** The kaas-broker process: an Apache-style server.properties, if one is configured, is checked before anything starts. */
@QuarkusMain
public final class BrokerMain {
    private BrokerMain() {
    }

    public static void main(String... args) {
        if (!ServerProperties.preflight("kaas-broker", System.err)) {
            System.exit(2);
        }
        Quarkus.run(args);
    }
}
