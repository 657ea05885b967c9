package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

class ErrorMapperTest {
    @Test
    void failedAppendOrReadOnStorageIsAKafkaStorageError() {
        assertThat(ErrorMapper.forAppend(new IOException("disk full"), "t-0")).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(ErrorMapper.forAppend(new FileSystemException("t-0/segment"), "t-0")).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(ErrorMapper.forRead(new UncheckedIOException(new IOException("EIO")), "t-0")).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
    }

    @Test
    void failedCoordinatorWriteIsCoordinatorNotAvailable() {
        assertThat(ErrorMapper.forCoordinator(new IOException("rename failed"), "g")).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void fencedCoordinatorIsNotCoordinator() {
        assertThat(ErrorMapper.forCoordinator(new NotCoordinatorException("slot taken over"), "g")).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(ErrorMapper.forCoordinator(new KafkaStorageException("log dir failed"), "g")).isEqualTo(Errors.NOT_COORDINATOR);
    }

    @Test
    void futureWrappersAreLookedThrough() {
        Throwable wrapped = new CompletionException(new ExecutionException(new IOException("EIO")));
        assertThat(ErrorMapper.forAppend(wrapped, "t-0")).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(ErrorMapper.forCoordinator(wrapped, "g")).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void typedApiExceptionsKeepTheirOwnCode() {
        assertThat(ErrorMapper.forAppend(new RecordTooLargeException("big"), "t-0")).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        assertThat(ErrorMapper.forRead(new CompletionException(new NotLeaderOrFollowerException("moved")), "t-0"))
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void anythingElseIsAnUnknownServerError() {
        assertThat(ErrorMapper.forAppend(new IllegalStateException("bug"), "t-0")).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(ErrorMapper.forCoordinator(new NullPointerException(), "g")).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }
}
