package dev.kaas.controller.kube;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A Kafka topic declared as a Kubernetes resource, shaped like Strimzi's {@code KafkaTopic}
 * (spec: {@code topicName}, {@code partitions}, {@code replicas}, {@code config}). The CRD in
 * {@code k8s/} is generated from this class at build time. The spec is what the user wants; the
 * status is what the controller accepted (see {@code src/docs/kubernetes.md}).
 */
@Group("kaas.dev")
@Version("v1")
@Kind("KafkaTopic")
@Plural("kafkatopics")
@ShortNames("kt")
@AdditionalPrinterColumn(name = "Topic", jsonPath = ".status.topicName", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Partitions", jsonPath = ".status.partitions", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Topic ID", jsonPath = ".status.topicId", type = AdditionalPrinterColumn.Type.STRING, priority = 1)
public class KafkaTopic extends CustomResource<KafkaTopicSpec, KafkaTopicStatus> implements Namespaced {
    /** The Kafka topic name this resource declares: {@code spec.topicName}, else the resource's name. */
    public String topicName() {
        KafkaTopicSpec spec = getSpec();
        return spec != null && spec.getTopicName() != null && !spec.getTopicName().isEmpty()
                ? spec.getTopicName() : getMetadata().getName();
    }
}
