package dev.kaas.controller.health;

import dev.kaas.controller.cluster.ControllerRuntime;
import io.quarkus.logging.LoggingFilter;
import java.util.Optional;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logmanager.ExtLogRecord;

/**
 * Puts the controller's identity into every log record's MDC, which the JSON console format
 * ({@code quarkus.log.console.json.enabled=true}) prints as fields: {@code controller.id} and, while
 * it leads, {@code controller.epoch}.
 */
@LoggingFilter(name = "kaas-context")
public final class LogContext implements Filter {
    private final String controllerId;

    public LogContext(@ConfigProperty(name = "kaas.controller.id") Optional<String> controllerId) {
        this.controllerId = controllerId.orElseGet(ControllerRuntime::defaultHolder);
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        if (record instanceof ExtLogRecord r) {
            r.putMdc("controller.id", controllerId);
            long epoch = ControllerRuntime.epochForLogs();
            if (epoch >= 0) {
                r.putMdc("controller.epoch", Long.toString(epoch));
            }
        }
        return true;
    }
}
