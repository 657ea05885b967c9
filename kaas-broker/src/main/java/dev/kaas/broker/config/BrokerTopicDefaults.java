package dev.kaas.broker.config;

import dev.kaas.common.config.TopicDefaults;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.Config;

/**
 * This broker's topic defaults, read once at start-up under Apache's broker names from every
 * configuration source (the server.properties file, system properties, the environment:
 * {@code LOG_RETENTION_HOURS}). A bad value fails start-up naming the key.
 */
@ApplicationScoped
public class BrokerTopicDefaults {
    @Produces
    @Singleton
    TopicDefaults topicDefaults(Config config) {
        return TopicDefaults.from(name -> config.getOptionalValue(name, String.class));
    }
}
