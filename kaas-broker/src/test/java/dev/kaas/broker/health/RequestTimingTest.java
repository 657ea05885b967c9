package dev.kaas.broker.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.metrics.BrokerMetrics;
import dev.kaas.broker.protocol.RequestTiming;
import org.junit.jupiter.api.Test;

/** The pipeline's timing array goes to the metrics as it is: both must order Apache's parts alike. */
class RequestTimingTest {
    @Test
    void thePipelineAndTheMetricsOrderThePartsAlike() {
        assertThat(new RequestTiming().nanos).hasSize(BrokerMetrics.PARTS);
        assertThat(new int[] {RequestTiming.TOTAL, RequestTiming.QUEUE, RequestTiming.LOCAL, RequestTiming.REMOTE, RequestTiming.RESPONSE_QUEUE,
            RequestTiming.SEND}).containsExactly(BrokerMetrics.TOTAL, BrokerMetrics.QUEUE, BrokerMetrics.LOCAL, BrokerMetrics.REMOTE,
                BrokerMetrics.RESPONSE_QUEUE, BrokerMetrics.SEND);
    }
}
