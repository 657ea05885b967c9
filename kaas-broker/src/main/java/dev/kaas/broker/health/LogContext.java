package dev.kaas.broker.health;

import dev.kaas.broker.protocol.RequestContext;
import io.quarkus.logging.LoggingFilter;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import org.apache.kafka.common.requests.RequestHeader;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logmanager.ExtLogRecord;

/**
 * Puts the broker's identity and the request being handled into every log record's MDC, which the
 * JSON console format ({@code quarkus.log.console.json.enabled=true}; with {@code quarkus.log.console.async=true} the
 * filter runs on the async thread and the request fields are missing) prints as fields: {@code broker.id},
 * {@code controller.epoch} (of the assignment last applied), and, for a line a request's handler
 * writes, {@code request.api}, {@code request.version}, {@code request.correlation_id} and
 * {@code request.client_id}. Works when a line is logged, so the hot path pays nothing for it.
 */
@LoggingFilter(name = "kaas-context")
public final class LogContext implements Filter {
    private static volatile String controllerEpoch = "";
    private final String brokerId;

    public LogContext(@ConfigProperty(name = "kaas.broker.id", defaultValue = "1") int brokerId) {
        this.brokerId = Integer.toString(brokerId);
    }

    /** The controller epoch of the assignment this broker applied last. */
    static void controllerEpoch(long epoch) {
        controllerEpoch = Long.toString(epoch);
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        if (record instanceof ExtLogRecord r) {
            r.putMdc("broker.id", brokerId);
            String epoch = controllerEpoch;
            if (!epoch.isEmpty()) {
                r.putMdc("controller.epoch", epoch);
            }
            RequestContext.Throttle request = RequestContext.Throttle.handling();
            RequestHeader h = request == null ? null : request.header();
            if (h != null) {
                r.putMdc("request.api", h.apiKey().name);
                r.putMdc("request.version", Short.toString(h.apiVersion()));
                r.putMdc("request.correlation_id", Integer.toString(h.correlationId()));
                r.putMdc("request.client_id", h.clientId() == null ? "" : h.clientId());
            }
        }
        return true;
    }
}
