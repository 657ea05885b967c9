package dev.kaas.broker;

import dev.kaas.broker.config.BrokerConfig;
import java.nio.file.Path;
import java.time.Duration;

/** Broker configuration with the defaults of application.properties, for tests that wire components by hand. */
public record TestBrokerConfig(Path dataDirectory, int brokerId) implements BrokerConfig {
    @Override
    public String dataDir() {
        return dataDirectory.toString();
    }

    @Override
    public Broker broker() {
        return new Broker() {
            public int id() {
                return brokerId;
            }

            public String listeners() {
                return "PLAINTEXT://127.0.0.1:0";
            }

            public String advertisedListeners() {
                return "PLAINTEXT://127.0.0.1:0";
            }

            public int socketRequestMaxBytes() {
                return 100 * 1024 * 1024;
            }

            public boolean autoCreateTopicsEnable() {
                return true;
            }

            public int storageThreads() {
                return 2;
            }

            public int flushThreads() {
                return 1;
            }

            public int maxInFlightPerConnection() {
                return 5;
            }

            public Duration reportInterval() {
                return Duration.ofSeconds(1);
            }
        };
    }

    @Override
    public Group group() {
        return new Group() {
            public Duration minSessionTimeout() {
                return Duration.ofSeconds(6);
            }

            public Duration maxSessionTimeout() {
                return Duration.ofMinutes(30);
            }

            public Duration initialRebalanceDelay() {
                return Duration.ofSeconds(3);
            }

            public int maxSize() {
                return Integer.MAX_VALUE;
            }

            public Duration offsetsRetention() {
                return Duration.ofDays(7);
            }

            public Duration offsetsRetentionCheckInterval() {
                return Duration.ofMinutes(10);
            }

            public int offsetMetadataMaxBytes() {
                return 4096;
            }
        };
    }
}
