package dev.kaas.controller.kube;

import dev.kaas.common.cluster.ClusterMetadata;
import dev.kaas.common.fs.Disk;
import dev.kaas.controller.config.ControllerConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Opens the Kubernetes binding with the client {@code quarkus-kubernetes-client} configures (in a
 * pod: its service account and namespace). The only way Kubernetes types reach the rest of the
 * controller is as a {@link ClusterMetadata}; the client is created only when this binding is
 * chosen, so standalone mode never looks for a cluster.
 */
@ApplicationScoped
public class KubernetesBinding {
    private final Instance<KubernetesClient> client;
    private final ControllerConfig config;

    public KubernetesBinding(Instance<KubernetesClient> client, ControllerConfig config) {
        this.client = client;
        this.config = config;
    }

    public ClusterMetadata open(Path dataDir) throws IOException {
        KubernetesClient c = client.get();
        ControllerConfig.Kubernetes k = config.controller().kubernetes();
        String namespace = k.namespace().orElseGet(() -> c.getNamespace() == null ? "default" : c.getNamespace());
        return new KubernetesMetadata(c, namespace, k.leaseName(), dataDir, Disk.SYSTEM, k.callTimeout().toMillis());
    }
}
