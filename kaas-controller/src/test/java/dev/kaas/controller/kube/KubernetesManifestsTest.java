package dev.kaas.controller.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every manifest in {@code k8s/} renders with {@code kubectl kustomize}, parses into fabric8's
 * model with no field the model does not know (a typo in a manifest is a field Kubernetes would
 * drop or refuse), and keeps the promises the design makes: the CRD is the generated one, brokers
 * get no Kubernetes API access, the controller runs two replicas that are Ready only when leading.
 */
class KubernetesManifestsTest {
    static final Path K8S = Path.of("..", "k8s").toAbsolutePath().normalize();
    static final String CRD = "kafkatopics.kaas.dev-v1.yml";
    static final String USER_CRD = "kafkausers.kaas.dev-v1.yml";

    static List<HasMetadata> render(String dir) throws Exception {
        Process probe;
        try {
            probe = new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("kubectl is not installed (it renders k8s/ with kustomize): " + e.getMessage());
            return List.of();
        }
        Assumptions.assumeTrue(probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0, "kubectl does not run here");
        Path out = Files.createTempFile("kustomize", ".yaml");
        try {
            Process p = new ProcessBuilder("kubectl", "kustomize", K8S.resolve(dir).toString())
                    .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("kubectl kustomize " + dir + " did not finish within 60 s");
            }
            assertThat(p.exitValue()).as("kubectl kustomize %s", dir).isZero();
            String yaml = Files.readString(out);
            KubernetesSerialization serialization = new KubernetesSerialization();
            List<HasMetadata> objects = new ArrayList<>();
            for (String doc : yaml.split("(?m)^---\\s*$")) {
                if (!doc.isBlank()) {
                    HasMetadata o = serialization.unmarshal(doc, HasMetadata.class);
                    assertNoUnknownFields(o, o.getKind() + "/" + o.getMetadata().getName(), new IdentityHashMap<>());
                    objects.add(o);
                }
            }
            return objects;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** fabric8 keeps fields its model does not know in additionalProperties: there must be none. */
    static void assertNoUnknownFields(Object o, String path, IdentityHashMap<Object, Boolean> seen) throws Exception {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                assertNoUnknownFields(e, path + "[" + i++ + "]", seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            for (var e : m.entrySet()) {
                assertNoUnknownFields(e.getValue(), path + "." + e.getKey(), seen);
            }
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method m : o.getClass().getMethods()) {
            if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value = m.invoke(o);
            if (m.getName().equals("getAdditionalProperties") && value instanceof Map<?, ?> extra) {
                assertThat(extra).as("fields unknown to the Kubernetes model at %s", path).isEmpty();
                continue;
            }
            assertNoUnknownFields(value, path + "." + m.getName().substring(3), seen);
        }
    }

    static <T> Stream<T> ofKind(List<HasMetadata> objects, Class<T> kind) {
        return objects.stream().filter(kind::isInstance).map(kind::cast);
    }

    @ParameterizedTest
    @ValueSource(strings = {".", "overlays/example"})
    void everyManifestRendersAndParsesWithNoUnknownField(String dir) throws Exception {
        List<HasMetadata> objects = render(dir);

        assertThat(objects).extracting(HasMetadata::getKind).contains("CustomResourceDefinition", "ServiceAccount", "Role",
                "RoleBinding", "Deployment", "StatefulSet", "Service", "PersistentVolumeClaim", "PodDisruptionBudget", "ConfigMap");
        assertThat(objects).filteredOn(o -> !o.getKind().equals("CustomResourceDefinition") && !o.getKind().equals("Namespace"))
                .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).as(o.getKind()).isEqualTo("kaas"));
    }

    @ParameterizedTest
    @ValueSource(strings = {CRD, USER_CRD})
    void theCrdsInK8sAreTheOnesGeneratedFromTheModel(String crd) throws Exception {
        Path generated = Path.of("target/classes/META-INF/fabric8").resolve(crd);
        Path committed = K8S.resolve("base/crd").resolve(crd);

        assertThat(generated).as("the build generates the CRD (crd-generator-maven-plugin)").exists();
        assertThat(committed).as("k8s/base/crd/ holds it").exists();
        if (!Files.readString(committed).equals(Files.readString(generated))) {
            fail("k8s/base/crd/" + crd + " drifted from the model (KafkaTopic*.java, KafkaUser*.java); refresh it with\n  cp kaas-controller/"
                    + generated + " k8s/base/crd/");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {".", "overlays/example"})
    void brokersGetNoKubernetesApiAccess(String dir) throws Exception {
        List<HasMetadata> objects = render(dir);

        StatefulSet brokers = ofKind(objects, StatefulSet.class).filter(s -> s.getMetadata().getName().equals("kaas-broker"))
                .findFirst().orElseThrow();
        PodSpec pod = brokers.getSpec().getTemplate().getSpec();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getServiceAccountName()).isEqualTo("kaas-broker");
        assertThat(ofKind(objects, ServiceAccount.class).filter(a -> a.getMetadata().getName().equals("kaas-broker")))
                .singleElement().satisfies(a -> assertThat(a.getAutomountServiceAccountToken()).isFalse());
        List<Subject> subjects = new ArrayList<>();
        ofKind(objects, RoleBinding.class).forEach(b -> subjects.addAll(b.getSubjects()));
        ofKind(objects, ClusterRoleBinding.class).forEach(b -> subjects.addAll(b.getSubjects()));
        assertThat(subjects).extracting(Subject::getName).doesNotContain("kaas-broker", "default");
        assertThat(objects).extracting(HasMetadata::getKind).doesNotContain("ClusterRole", "ClusterRoleBinding");
    }

    @ParameterizedTest
    @ValueSource(strings = {".", "overlays/example"})
    void bothProcessesReadOneServerPropertiesAndKeepTheVolume(String dir) throws Exception {
        List<HasMetadata> objects = render(dir);

        Deployment controller = ofKind(objects, Deployment.class).findFirst().orElseThrow();
        StatefulSet brokers = ofKind(objects, StatefulSet.class).findFirst().orElseThrow();
        for (PodSpec pod : List.of(controller.getSpec().getTemplate().getSpec(), brokers.getSpec().getTemplate().getSpec())) {
            Container main = pod.getContainers().get(0);
            assertThat(main.getEnv()).as("both processes read the one server.properties")
                    .anyMatch(e -> e.getName().equals("KAAS_CONFIG_FILE") && "/etc/kaas/server.properties".equals(e.getValue()))
                    .as("the volume wins over a log.dirs in the file")
                    .anyMatch(e -> e.getName().equals("KAAS_DATA_DIR") && "/var/lib/kaas".equals(e.getValue()))
                    .as("an overlay's JVM options stay JVM options")
                    .anyMatch(e -> e.getName().equals("JAVA_OPTS") && e.getValue().startsWith("-XX:"));
            assertThat(main.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals("/etc/kaas")
                    && pod.getVolumes().stream().anyMatch(v -> v.getName().equals(m.getName()) && v.getConfigMap() != null
                    && v.getConfigMap().getName().equals("kaas-server-properties")));
        }
        // The shipped file's examples (commented out) are settings kaas reads, valid as written.
        io.fabric8.kubernetes.api.model.ConfigMap serverProperties = ofKind(objects, io.fabric8.kubernetes.api.model.ConfigMap.class)
                .filter(m -> m.getMetadata().getName().equals("kaas-server-properties")).findFirst().orElseThrow();
        Map<String, String> examples = new java.util.HashMap<>();
        serverProperties.getData().get("server.properties").lines().filter(l -> l.matches("#[a-z.]+=\\S+"))
                .forEach(l -> examples.put(l.substring(1, l.indexOf('=')), l.substring(l.indexOf('=') + 1)));
        assertThat(examples).containsKeys("num.partitions", "log.retention.hours");
        dev.kaas.common.config.ServerProperties.Translation t = dev.kaas.common.config.ServerProperties.translate(examples);
        assertThat(t.notRead()).isEmpty();
        assertThat(t.properties()).containsEntry("kaas.controller.num-partitions", "1").containsEntry("log.retention.hours", "168");
    }

    @Test
    void theWorkloadsAreShapedAsTheDesignSays() throws Exception {
        List<HasMetadata> objects = render(".");

        Deployment controller = ofKind(objects, Deployment.class).findFirst().orElseThrow();
        assertThat(controller.getSpec().getReplicas()).isEqualTo(2);
        Container c = controller.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).as("Ready = holds the lease").isEqualTo("/q/health/ready");
        assertThat(controller.getSpec().getStrategy().getType())
                .as("a rolling update would wait forever for a standby to become Ready").isEqualTo("Recreate");
        assertThat(ofKind(objects, io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class))
                .as("a budget over the controllers (one Ready) would block draining the holder's node")
                .noneMatch(b -> "kaas-controller".equals(b.getSpec().getSelector().getMatchLabels().get("app.kubernetes.io/name")));
        StatefulSet brokers = ofKind(objects, StatefulSet.class).findFirst().orElseThrow();
        assertThat(brokers.getSpec().getReplicas()).isEqualTo(3);
        assertThat(brokers.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
        assertThat(brokers.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                .as("longer than the 30 s bound of a controlled shutdown").isGreaterThan(30);
        Container b = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(b.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/q/health/live");
        assertThat(b.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
        for (PodSpec pod : List.of(controller.getSpec().getTemplate().getSpec(), brokers.getSpec().getTemplate().getSpec())) {
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(pod.getContainers().get(0).getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            assertThat(pod.getVolumes()).as("the shared claim").anyMatch(v -> v.getPersistentVolumeClaim() != null
                    && v.getPersistentVolumeClaim().getClaimName().equals("kaas-data"));
            assertThat(pod.getVolumes()).as("a writable /tmp").anyMatch(v -> v.getEmptyDir() != null);
        }
        assertThat(ofKind(objects, PersistentVolumeClaim.class)).singleElement()
                .satisfies(pvc -> assertThat(pvc.getSpec().getAccessModes()).containsExactly("ReadWriteMany"));
        assertThat(Files.readString(K8S.resolve("README.md"))).contains("kubectl apply -k k8s/", "ReadWriteMany");
    }
}
