package dev.kaas.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One real kaas cluster per test class: {@code @RegisterExtension static KaasClusterExtension kaas = …}.
 * Started before the class's own {@code @BeforeAll} methods, stopped after its {@code @AfterAll}.
 */
final class KaasClusterExtension implements BeforeAllCallback, AfterAllCallback {
    private final Map<String, String> brokerProps;
    private final Map<String, String> controllerProps;
    private KaasCluster cluster;
    private Path dir;

    KaasClusterExtension() {
        this(Map.of());
    }

    KaasClusterExtension(Map<String, String> brokerProps) {
        this(brokerProps, Map.of());
    }

    KaasClusterExtension(Map<String, String> brokerProps, Map<String, String> controllerProps) {
        this.brokerProps = brokerProps;
        this.controllerProps = controllerProps;
    }

    KaasCluster cluster() {
        return cluster;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dir = Files.createTempDirectory("kaas-it-" + context.getRequiredTestClass().getSimpleName());
        cluster = brokerProps.isEmpty() && controllerProps.isEmpty() ? KaasCluster.startForClients(dir.resolve("data"))
                : KaasCluster.start(dir.resolve("data"), brokerProps, controllerProps);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
