package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.cluster.TopicDeclaration;
import dev.kaas.common.cluster.TopicVerdict;
import dev.kaas.common.model.TopicSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class TopicReconcilerTest {
    private final AtomicInteger minted = new AtomicInteger();
    private final Supplier<String> ids = () -> "id-" + minted.incrementAndGet();

    private static TopicDeclaration declared(String ref, String name, int partitions, Map<String, String> configs, String topicId) {
        return new TopicDeclaration(ref, name, 3, partitions, configs, topicId);
    }

    private TopicReconciler.Result reconcile(List<TopicSpec> catalog, TopicDeclaration... declarations) {
        return TopicReconciler.reconcile(catalog, List.of(declarations), 100, 2, ids, Map.of());
    }

    private static TopicVerdict verdict(TopicReconciler.Result r, String ref) {
        return r.verdicts().stream().filter(v -> v.declaration().ref().equals(ref)).findFirst().orElseThrow();
    }

    @Test
    void aNewValidDeclarationIsAcceptedUnderAFreshIdAndADefaultPartitionCount() {
        var r = reconcile(List.of(), declared("u1", "orders", -1, Map.of("retention.ms", "1000"), null));

        assertThat(r.catalog()).containsExactly(new TopicSpec("orders", "id-1", 2, Map.of("retention.ms", "1000")));
        assertThat(verdict(r, "u1").ready()).isTrue();
        assertThat(verdict(r, "u1").accepted().topicId()).isEqualTo("id-1");
    }

    @Test
    void invalidNewDeclarationsAreRefusedWithTheirReasonAndNothingIsAccepted() {
        var r = reconcile(List.of(),
                declared("u1", "bad/name", 1, Map.of(), null),
                declared("u2", "zero", 0, Map.of(), null),
                declared("u3", "unknown-config", 1, Map.of("no.such.key", "1"), null),
                declared("u4", "out-of-range", 1, Map.of("min.insync.replicas", "0"), null),
                declared("u5", "too-big", 101, Map.of(), null));

        assertThat(r.catalog()).isEmpty();
        assertThat(r.verdicts()).extracting(TopicVerdict::reason)
                .containsExactly("InvalidTopicName", "InvalidPartitions", "InvalidConfig", "InvalidConfig", "PolicyViolation");
        assertThat(r.verdicts()).allSatisfy(v -> {
            assertThat(v.accepted()).isNull();
            assertThat(v.message()).isNotBlank();
        });
        assertThat(minted).hasValue(0);
    }

    /** A KafkaTopic's configs are checked over the controller's log settings, new and changed alike. */
    @Test
    void declaredConfigsAreValidatedOverTheControllersLogSettings() {
        Map<String, String> defaults = Map.of("min.compaction.lag.ms", "60000");
        TopicSpec accepted = new TopicSpec("orders", "T1", 1, Map.of());

        var r = TopicReconciler.reconcile(List.of(accepted), List.of(
                declared("u1", "orders", 1, Map.of("max.compaction.lag.ms", "1000"), "T1"),
                declared("u2", "fresh", 1, Map.of("max.compaction.lag.ms", "1000"), null),
                declared("u3", "fine", 1, Map.of("max.compaction.lag.ms", "120000"), null)), 100, 2, ids, defaults);

        assertThat(verdict(r, "u1").reason()).isEqualTo("InvalidConfig");
        assertThat(verdict(r, "u1").message())
                .isEqualTo("conflict topic config setting min.compaction.lag.ms (60000) > max.compaction.lag.ms (1000)");
        assertThat(verdict(r, "u2").reason()).isEqualTo("InvalidConfig");
        assertThat(verdict(r, "u3").ready()).isTrue();
        assertThat(r.catalog()).extracting(TopicSpec::name).containsExactlyInAnyOrder("orders", "fine");
        assertThat(r.catalog()).filteredOn(t -> t.name().equals("orders")).singleElement().extracting(TopicSpec::configs)
                .isEqualTo(Map.of());
    }

    @Test
    void decreasingPartitionsIsRefusedAndTheAcceptedTopicStaysAsItWas() {
        TopicSpec accepted = new TopicSpec("orders", "T1", 4, Map.of("retention.ms", "5"));

        var r = reconcile(List.of(accepted), declared("u1", "orders", 2, Map.of("retention.ms", "9"), "T1"));

        assertThat(r.catalog()).containsExactly(accepted);
        assertThat(verdict(r, "u1").reason()).isEqualTo("PartitionsDecreased");
        assertThat(verdict(r, "u1").message()).contains("has 4", "asks for 2");
        assertThat(verdict(r, "u1").accepted()).isEqualTo(accepted);
    }

    @Test
    void growingPartitionsAndValidConfigChangesAreAcceptedUnderTheSameId() {
        var r = reconcile(List.of(new TopicSpec("orders", "T1", 2, Map.of())),
                declared("u1", "orders", 5, Map.of("cleanup.policy", "delete"), "T1"));

        assertThat(r.catalog()).containsExactly(new TopicSpec("orders", "T1", 5, Map.of("cleanup.policy", "delete")));
        assertThat(verdict(r, "u1").ready()).isTrue();
    }

    @Test
    void anInvalidConfigChangeOrARenameKeepsTheAcceptedTopic() {
        TopicSpec a = new TopicSpec("a", "T1", 1, Map.of());
        TopicSpec b = new TopicSpec("b", "T2", 1, Map.of());

        var r = reconcile(List.of(a, b), declared("u1", "a", 1, Map.of("segment.bytes", "1"), "T1"),
                declared("u2", "b-renamed", 1, Map.of(), "T2"));

        assertThat(r.catalog()).containsExactlyInAnyOrder(a, b);
        assertThat(verdict(r, "u1").reason()).isEqualTo("InvalidConfig");
        assertThat(verdict(r, "u2").reason()).isEqualTo("TopicNameChanged");
    }

    @Test
    void anAcceptedTopicWhoseDeclarationIsGoneIsDeleted() {
        var r = reconcile(List.of(new TopicSpec("a", "T1", 1, Map.of()), new TopicSpec("b", "T2", 1, Map.of())),
                declared("u1", "a", 1, Map.of(), "T1"));

        assertThat(r.catalog()).extracting(TopicSpec::topicId).containsExactly("T1");
    }

    @Test
    void ofTwoDeclarationsOfOneNameTheAcceptedOneWinsAndTheOtherIsRefused() {
        var r = reconcile(List.of(new TopicSpec("orders", "T1", 1, Map.of())),
                declared("a-first-by-ref", "orders", 1, Map.of(), null),
                declared("z-accepted", "orders", 1, Map.of(), "T1"));

        assertThat(r.catalog()).extracting(TopicSpec::topicId).containsExactly("T1");
        assertThat(verdict(r, "a-first-by-ref").reason()).isEqualTo("TopicAlreadyExists");
        assertThat(verdict(r, "z-accepted").ready()).isTrue();
    }

    @Test
    void anIdADeclarationCarriesIsKeptWhenTheCatalogLostIt() {
        var r = reconcile(List.of(), declared("u1", "orders", 1, Map.of(), "T-recorded"));

        assertThat(r.catalog()).extracting(TopicSpec::topicId).containsExactly("T-recorded");
        assertThat(minted).hasValue(0);
    }

    @Test
    void reconcilingItsOwnResultChangesNothing() {
        var first = reconcile(List.of(), declared("u1", "a", 3, Map.of(), null));
        String id = first.catalog().get(0).topicId();

        var second = reconcile(first.catalog(), declared("u1", "a", 3, Map.of(), id));

        assertThat(second.catalog()).isEqualTo(first.catalog());
        assertThat(minted).hasValue(1);
    }

    @Test
    void aDeclarationWithoutPartitionsKeepsWhatWasAcceptedWhenTheDefaultChanges() {
        var r = reconcile(List.of(new TopicSpec("orders", "T1", 7, Map.of())), declared("u1", "orders", -1, Map.of(), "T1"));

        assertThat(r.catalog()).containsExactly(new TopicSpec("orders", "T1", 7, Map.of()));
        assertThat(verdict(r, "u1").ready()).isTrue();
    }

    @Test
    void aRefusedDeclarationThatCarriesAnIdIsRefusedWithoutMintingAnother() {
        var r = reconcile(List.of(), declared("u1", "orders", 0, Map.of(), "T-recorded"));

        assertThat(r.catalog()).isEmpty();
        assertThat(verdict(r, "u1").reason()).isEqualTo("InvalidPartitions");
        assertThat(verdict(r, "u1").declaration().topicId()).isEqualTo("T-recorded");
        assertThat(minted).hasValue(0);
    }
}
