package dev.kaas.broker.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.protocol.Errors;
import org.jboss.logging.Logger;

/**
 * The one place where a failure becomes the error code a client sees, as Apache maps it. A typed
 * {@link ApiException} keeps its own code. A storage failure ({@link IOException}) depends on
 * what failed: an append or a read is {@code KAFKA_STORAGE_ERROR} (Apache's log layer turns every
 * {@code IOException} into a {@link KafkaStorageException}); a coordinator's file write is
 * {@code COORDINATOR_NOT_AVAILABLE} (a fenced write is a {@code NotCoordinatorException} already).
 * All three are retriable: the Java consumer treats {@code UNKNOWN_SERVER_ERROR} on
 * {@code commitSync} as fatal, so a disk hiccup must never become that.
 * Anything else is a bug: {@code UNKNOWN_SERVER_ERROR}, logged with its stack trace.
 */
public final class ErrorMapper {
    private static final Logger LOG = Logger.getLogger(ErrorMapper.class);

    private ErrorMapper() {
    }

    /** A failed Produce append (validation, write or fsync) of {@code partition}. */
    public static Errors forAppend(Throwable failure, Object partition) {
        return map(failure, Errors.KAFKA_STORAGE_ERROR, "append", partition);
    }

    /** A failed Fetch or ListOffsets read of {@code partition}. */
    public static Errors forRead(Throwable failure, Object partition) {
        return map(failure, Errors.KAFKA_STORAGE_ERROR, "read", partition);
    }

    /** A failed group-coordinator call of {@code groupId}, including its offsets-file writes. */
    public static Errors forCoordinator(Throwable failure, String groupId) {
        Throwable cause = unwrap(failure);
        if (cause instanceof KafkaStorageException) {
            // Apache's coordinator answers NOT_COORDINATOR when its log's storage fails.
            return Errors.NOT_COORDINATOR;
        }
        return map(cause, Errors.COORDINATOR_NOT_AVAILABLE, "group coordinator call", groupId);
    }

    /** The failure inside the wrappers that futures add. */
    public static Throwable unwrap(Throwable t) {
        Throwable cause = t;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    private static Errors map(Throwable failure, Errors storageError, String what, Object subject) {
        Throwable cause = unwrap(failure);
        if (cause instanceof ApiException) {
            return Errors.forException(cause);
        }
        if (cause instanceof IOException || cause instanceof UncheckedIOException) {
            LOG.warnf("%s failed on storage, answering %s: subject=%s error=%s", what, storageError, subject, cause.toString());
            LOG.debugf(cause, "%s storage failure subject=%s", what, subject);
            return storageError;
        }
        LOG.errorf(cause, "%s failed unexpectedly subject=%s", what, subject);
        return Errors.UNKNOWN_SERVER_ERROR;
    }
}
