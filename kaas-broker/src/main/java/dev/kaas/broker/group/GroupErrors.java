package dev.kaas.broker.group;

import java.util.concurrent.CompletionException;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/** Maps a failed coordinator call to the error its response carries. */
final class GroupErrors {
    private static final Logger LOG = Logger.getLogger(GroupErrors.class);

    private GroupErrors() {
    }

    static Errors of(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        Errors e = Errors.forException(cause);
        if (e == Errors.UNKNOWN_SERVER_ERROR) {
            LOG.errorf(cause, "group coordinator call failed");
        }
        return e;
    }
}
