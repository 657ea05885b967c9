package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.TopicDeclaration;
import dev.kaas.common.cluster.TopicVerdict;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.model.TopicSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns the declarations of a declarative store (Kubernetes {@code KafkaTopic} resources) into the
 * catalog, the way Strimzi's topic operator reconciles resources against Kafka: pure, so the same
 * declarations and catalog always give the same result (ids aside), and tested without a store.
 *
 * <p>Rules:
 * <ul>
 *   <li>A declaration the catalog accepted before (its topic id is in the catalog) keeps its topic
 *       id forever. A change is accepted whole or not at all: more partitions (within the cluster
 *       cap) and valid configs are; fewer partitions, an invalid config or a changed name leave
 *       the accepted topic as it was and make the declaration not ready, with the reason.</li>
 *   <li>A new declaration is checked as CreateTopics checks a topic ({@link TopicRules}); accepted,
 *       it gets a fresh topic id (or the one it already carries, if a crash lost the rest).
 *       New declarations are taken in a stable order (ref), so of two declaring one name, the
 *       same one wins every time.</li>
 *   <li>An accepted topic with no declaration left is deleted: the declaration is the source of
 *       truth.</li>
 * </ul>
 */
final class TopicReconciler {
    record Result(List<TopicSpec> catalog, List<TopicVerdict> verdicts) {
    }

    private TopicReconciler() {
    }

    /**
     * @param defaultPartitions what a declaration without partitions gets (the controller's num-partitions)
     * @param brokerDefaults    the controller's log settings under topic keys, which declared configs are checked over
     */
    static Result reconcile(List<TopicSpec> catalog, List<TopicDeclaration> declarations, int maxPartitions,
                            int defaultPartitions, Supplier<String> newTopicId, Map<String, String> brokerDefaults) {
        Map<String, TopicSpec> acceptedById = new HashMap<>();
        catalog.forEach(t -> acceptedById.put(t.topicId(), t));
        // No partitions declared: what was accepted stays (a changed default must not grow or
        // shrink existing topics); a new topic gets the default.
        declarations = declarations.stream().map(d -> d.partitions() != -1 ? d : new TopicDeclaration(d.ref(), d.name(),
                d.generation(), d.topicId() != null && acceptedById.containsKey(d.topicId())
                        ? acceptedById.get(d.topicId()).partitions() : defaultPartitions, d.configs(), d.topicId())).toList();
        List<TopicSpec> next = new ArrayList<>();
        List<TopicVerdict> verdicts = new ArrayList<>();
        Set<String> idsTaken = new HashSet<>();
        List<TopicDeclaration> fresh = new ArrayList<>();
        Map<String, TopicDeclaration> declarationById = new HashMap<>();
        List<TopicDeclaration> sorted = declarations.stream().sorted(Comparator.comparing(TopicDeclaration::ref)).toList();
        for (TopicDeclaration d : sorted) {
            TopicSpec accepted = d.topicId() == null ? null : acceptedById.get(d.topicId());
            if (accepted == null || !idsTaken.add(d.topicId())) {
                fresh.add(d);
                continue;
            }
            declarationById.put(d.topicId(), d);
            next.add(accepted);
        }
        long clusterPartitions = next.stream().mapToLong(TopicSpec::partitions).sum();
        // Changes to accepted topics, against the accepted state.
        for (int i = 0; i < next.size(); i++) {
            TopicSpec accepted = next.get(i);
            TopicDeclaration d = declarationById.get(accepted.topicId());
            TopicRules.Problem problem = checkChange(accepted, d, clusterPartitions, maxPartitions, brokerDefaults);
            if (problem != null) {
                verdicts.add(new TopicVerdict(d, accepted, problem.reason(), problem.message()));
                continue;
            }
            TopicSpec changed = new TopicSpec(accepted.name(), accepted.topicId(), d.partitions(), d.configs());
            clusterPartitions += changed.partitions() - accepted.partitions();
            next.set(i, changed);
            verdicts.add(TopicVerdict.ready(d, changed));
        }
        for (TopicDeclaration d : fresh) {
            TopicRules.Problem problem = TopicRules.checkNew(d.name(), d.partitions(), d.configs(), false, next,
                    clusterPartitions, maxPartitions, brokerDefaults);
            if (problem != null) {
                // The verdict keeps the id the declaration carries (the binding records it again), so
                // it is not lost while the declaration is refused.
                verdicts.add(new TopicVerdict(d, null, problem.reason(), problem.message()));
                continue;
            }
            // An id the declaration carries but the catalog lost (a crash between recording the
            // verdict and storing the catalog) is kept: the id is never rotated once shown.
            String id = d.topicId() != null && idsTaken.add(d.topicId()) ? d.topicId() : newTopicId.get();
            idsTaken.add(id);
            TopicSpec created = new TopicSpec(d.name(), id, d.partitions(), d.configs());
            clusterPartitions += created.partitions();
            next.add(created);
            verdicts.add(TopicVerdict.ready(d, created));
        }
        return new Result(List.copyOf(next), List.copyOf(verdicts));
    }

    private static TopicRules.Problem checkChange(TopicSpec accepted, TopicDeclaration d, long clusterPartitions, int maxPartitions,
                                                  Map<String, String> brokerDefaults) {
        if (!accepted.name().equals(d.name())) {
            return new TopicRules.Problem(null, "TopicNameChanged", "The topic name cannot change: this resource is topic '"
                    + accepted.name() + "' (id " + accepted.topicId() + "); declare '" + d.name() + "' in a new resource.");
        }
        if (d.partitions() < accepted.partitions()) {
            return new TopicRules.Problem(null, "PartitionsDecreased", "The number of partitions cannot decrease: topic '"
                    + accepted.name() + "' has " + accepted.partitions() + ", the resource asks for " + d.partitions() + ".");
        }
        if (!d.configs().equals(accepted.configs())) {
            String invalid = TopicConfigs.validate(d.configs(), brokerDefaults);
            if (invalid != null) {
                return new TopicRules.Problem(null, "InvalidConfig", invalid);
            }
        }
        if (d.partitions() > accepted.partitions()) {
            return TopicRules.checkLimit("Adding " + (d.partitions() - accepted.partitions()) + " partitions to topic '"
                    + accepted.name() + "'", d.partitions() - accepted.partitions(), clusterPartitions, maxPartitions);
        }
        return null;
    }
}
