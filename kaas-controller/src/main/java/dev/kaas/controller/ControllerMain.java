package dev.kaas.controller;

import dev.kaas.common.config.ServerProperties;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/** The kaas-controller process: an Apache-style server.properties, if one is configured, is checked before anything starts. */
@QuarkusMain
public final class ControllerMain {
    private ControllerMain() {
    }

    public static void main(String... args) {
        // The log settings too: topic configs are validated over them (ControllerCore.Settings.topicDefaults).
        if (!ServerProperties.preflight("kaas-controller", System.err)) {
            System.exit(2);
        }
        Quarkus.run(args);
    }
}
