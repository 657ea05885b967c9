package dev.kaas.controller.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.util.HashMap;

/**
 * fabric8's Kubernetes API server double in CRUD mode (watches, resourceVersion conflicts,
 * status subresource) on loopback, with the generated KafkaTopic and KafkaUser CRDs applied as an operator would.
 */
final class KubeTestServer implements AutoCloseable {
    static final String CRD = "/META-INF/fabric8/kafkatopics.kaas.dev-v1.yml";
    static final String USER_CRD = "/META-INF/fabric8/kafkausers.kaas.dev-v1.yml";
    final KubernetesMockServer server;

    KubeTestServer() throws Exception {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        try (KubernetesClient admin = client(); InputStream crd = KubeTestServer.class.getResourceAsStream(CRD);
             InputStream users = KubeTestServer.class.getResourceAsStream(USER_CRD)) {
            admin.apiextensions().v1().customResourceDefinitions().load(crd).create();
            admin.apiextensions().v1().customResourceDefinitions().load(users).create();
        }
    }

    /** A new client, as another process would have: its own connections, its own informers. */
    KubernetesClient client() {
        return server.createClient();
    }

    @Override
    public void close() {
        server.destroy();
    }
}
