package dev.kaas.broker.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.broker.protocol.RequestContext;
import java.util.logging.Level;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestHeader;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;

class LogContextTest {
    @Test
    void aLineAHandlerWritesNamesTheBrokerTheEpochAndTheRequest() {
        LogContext filter = new LogContext(7);
        LogContext.controllerEpoch(3);
        RequestContext.Throttle request = new RequestContext.Throttle(100, new RequestHeader(ApiKeys.PRODUCE, (short) 9, "app-1", 42));

        ExtLogRecord during = new ExtLogRecord(Level.WARNING, "appending failed", ExtLogRecord.FormatStyle.NO_FORMAT, "test");
        request.handling(true);
        try {
            assertThat(filter.isLoggable(during)).isTrue();
        } finally {
            request.handling(false);
        }
        ExtLogRecord after = new ExtLogRecord(Level.INFO, "partition opened", ExtLogRecord.FormatStyle.NO_FORMAT, "test");
        filter.isLoggable(after);

        assertThat(during.getMdcCopy()).containsEntry("broker.id", "7").containsEntry("controller.epoch", "3")
                .containsEntry("request.api", "Produce").containsEntry("request.version", "9")
                .containsEntry("request.correlation_id", "42").containsEntry("request.client_id", "app-1");
        assertThat(after.getMdcCopy()).containsEntry("broker.id", "7").doesNotContainKey("request.api");
    }
}
