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
 * A Kafka user declared as a Kubernetes resource, shaped like Strimzi's {@code KafkaUser}
 * (spec: {@code authentication}, {@code authorization}, {@code quotas}; status: {@code username},
 * {@code secret}). The CRD in {@code k8s/} is generated from this class at build time; the rules
 * are in {@code src/docs/kubernetes.md}.
 */
@Group("kaas.dev")
@Version("v1")
@Kind("KafkaUser")
@Plural("kafkausers")
@ShortNames("ku")
@AdditionalPrinterColumn(name = "Authentication", jsonPath = ".spec.authentication.type", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Authorization", jsonPath = ".spec.authorization.type", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Username", jsonPath = ".status.username", type = AdditionalPrinterColumn.Type.STRING, priority = 1)
public class KafkaUser extends CustomResource<KafkaUserSpec, KafkaUserStatus> implements Namespaced {
}
