package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.TestBrokerConfig;
import dev.kaas.common.model.Assignment;
import dev.kaas.common.model.BrokerInfo;
import dev.kaas.common.model.PartitionAssignment;
import dev.kaas.common.model.TopicAssignment;
import dev.kaas.common.model.TopicSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.junit.jupiter.api.Test;

class ListPartitionReassignmentsHandlerTest {
    static final dev.kaas.broker.protocol.RequestContext CTX = new dev.kaas.broker.protocol.RequestContext(
            new org.apache.kafka.common.requests.RequestHeader(org.apache.kafka.common.protocol.ApiKeys.LIST_PARTITION_REASSIGNMENTS,
                    (short) 0, "test", 1), "PLAINTEXT", "/127.0.0.1");

    /**
     * Partition 0 is moving from broker 1 to 2, partition 1 is being let go by broker 1 for 3 (the
     * handoff under way), 2 has arrived, 3 was never moved, 4 waits for broker 2 with no writer.
     */
    private static ClusterView view() {
        ClusterView view = new ClusterView(TestBrokerConfig.defaults());
        TopicSpec t = new TopicSpec("t", "id-t", 5, Map.of());
        view.applied(new Assignment(1, 1, "c", List.of(new BrokerInfo(1, List.of()), new BrokerInfo(2, List.of()), new BrokerInfo(3, List.of())),
                List.of(new TopicAssignment(t, List.of(new PartitionAssignment(0, 1, 0, 2),
                        new PartitionAssignment(1, PartitionAssignment.NO_LEADER, 0, 3, 1), new PartitionAssignment(2, 2, 1, 2),
                        new PartitionAssignment(3, 1, 0), new PartitionAssignment(4, PartitionAssignment.NO_LEADER, 0, 2)))),
                List.of(), List.of()));
        return view;
    }

    private static ListPartitionReassignmentsResponseData list(ListPartitionReassignmentsRequestData data) throws Exception {
        var request = new ListPartitionReassignmentsRequest.Builder(data).build((short) 0);
        return (ListPartitionReassignmentsResponseData) new ListPartitionReassignmentsHandler(view(), () -> CompletableFuture.completedFuture(1L)).handle(CTX, request)
                .toCompletableFuture().get(5, TimeUnit.SECONDS);
    }

    @Test
    void aMoveInProgressIsShownAsApacheShowsOneAddingItsTargetAndRemovingItsWriterSoTheToolCanCancelIt() throws Exception {
        var all = list(new ListPartitionReassignmentsRequestData().setTopics(null));

        assertThat(all.topics()).singleElement().satisfies(t -> assertThat(t.partitions()).containsExactly(
                new OngoingPartitionReassignment().setPartitionIndex(0).setReplicas(List.of(2, 1)).setAddingReplicas(List.of(2))
                        .setRemovingReplicas(List.of(1)),
                new OngoingPartitionReassignment().setPartitionIndex(1).setReplicas(List.of(3, 1)).setAddingReplicas(List.of(3))
                        .setRemovingReplicas(List.of(1)),
                new OngoingPartitionReassignment().setPartitionIndex(4).setReplicas(List.of(2)).setAddingReplicas(List.of(2))
                        .setRemovingReplicas(List.of())));
    }

    @Test
    void askedForPartitionsOnlyTheMovingOnesOfThemAndNoUnknownTopics() throws Exception {
        var some = new ListPartitionReassignmentsRequestData().setTopics(List.of(
                new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("t").setPartitionIndexes(List.of(1, 2, 3, 9)),
                new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("other").setPartitionIndexes(List.of(0))));

        var r = list(some);

        assertThat(r.topics()).singleElement().satisfies(t -> assertThat(t.partitions())
                .extracting(OngoingPartitionReassignment::partitionIndex).containsExactly(1));
    }

    @Test
    void theAnswerWaitsUntilThisBrokerHasAppliedWhatTheControllerPublished() throws Exception {
        ClusterView view = view();
        var handler = new ListPartitionReassignmentsHandler(view, () -> CompletableFuture.completedFuture(2L));
        var answer = handler.handle(CTX, new ListPartitionReassignmentsRequest.Builder(
                new ListPartitionReassignmentsRequestData().setTopics(null)).build((short) 0)).toCompletableFuture();

        assertThat(answer).as("version 2, which the controller published, is not applied here yet").isNotDone();
        TopicSpec t = new TopicSpec("t", "id-t", 1, Map.of());
        view.applied(new Assignment(2, 1, "c", List.of(new BrokerInfo(1, List.of()), new BrokerInfo(2, List.of())),
                List.of(new TopicAssignment(t, List.of(new PartitionAssignment(0, 2, 1)))), List.of(), List.of()));
        var resp = (ListPartitionReassignmentsResponseData) answer.get(5, TimeUnit.SECONDS);
        assertThat(resp.errorCode()).isZero();
        assertThat(resp.topics()).as("the moves of version 1 are finished in version 2").isEmpty();
    }

    @Test
    void anAssignmentNotAppliedInTimeIsRequestTimedOutAndAnUnreachableControllerNotController() throws Exception {
        var request = new ListPartitionReassignmentsRequest.Builder(
                new ListPartitionReassignmentsRequestData().setTopics(null).setTimeoutMs(1)).build((short) 0);
        var late = (ListPartitionReassignmentsResponseData) new ListPartitionReassignmentsHandler(view(),
                () -> CompletableFuture.completedFuture(9L)).handle(CTX, request).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(late.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(late.topics()).isEmpty();

        var unreachable = new ListPartitionReassignmentsHandler(view(),
                () -> CompletableFuture.failedFuture(new NotControllerException("controller unavailable"))).handle(CTX, request);
        assertThatThrownBy(() -> unreachable.toCompletableFuture().get(5, TimeUnit.SECONDS)).cause().isInstanceOf(NotControllerException.class);
    }
}
