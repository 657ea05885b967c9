package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * kaas tells a custom broker property (kept, as Apache keeps it) from an Apache setting it cannot
 * change at run time (refused) by Apache 3.7.2's list of broker config names, kept in kaas-common
 * ({@code DynamicBrokerConfigs.APACHE_NAMES}); this checks that list against Apache's own, here
 * where Apache's broker is on the classpath.
 */
class ApacheBrokerConfigNamesIT {
    static final Path LIST = Path.of(System.getProperty("kaas.root", ".."),
            "kaas-common/src/main/resources/dev/kaas/common/config/apache-broker-config-names.txt");

    @Test
    void kaasKnowsExactlyApachesBrokerConfigNames() throws Exception {
        Set<String> apache = new TreeSet<>(scala.jdk.javaapi.CollectionConverters.asJava(kafka.server.KafkaConfig.configNames()));

        Set<String> kept = Files.readAllLines(LIST).stream().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .collect(Collectors.toCollection(TreeSet::new));

        assertThat(kept).isEqualTo(apache);
    }
}
