package dev.kaas.broker.data;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterReplicaLogDirsRequest;

/**
 * AlterReplicaLogDirs (key 34), answered as Apache 3.7 answers on a broker with one log dir
 * ({@code ReplicaManager.alterReplicaLogDirs}): a directory other than the data directory is
 * LOG_DIR_NOT_FOUND; the data directory itself, for a partition this broker leads, is a move to
 * where it already is (NONE, nothing moves); a partition led elsewhere is REPLICA_NOT_AVAILABLE
 * (Apache's answer for a replica this broker does not host) and one that does not exist
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
@ApplicationScoped
public class AlterReplicaLogDirsHandler implements ApiHandler {
    private final Partitions partitions;
    private final ClusterView view;

    public AlterReplicaLogDirsHandler(Partitions partitions, ClusterView view) {
        this.partitions = partitions;
        this.view = view;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.ALTER_REPLICA_LOG_DIRS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.ALTER);
        AlterReplicaLogDirsRequestData data = ((AlterReplicaLogDirsRequest) request).data();
        AlterReplicaLogDirsResponseData resp = new AlterReplicaLogDirsResponseData().setThrottleTimeMs(0);
        for (AlterReplicaLogDirsRequestData.AlterReplicaLogDir dir : data.dirs()) {
            boolean ours = isDataDir(dir.path());
            for (AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic t : dir.topics()) {
                AlterReplicaLogDirTopicResult tr = new AlterReplicaLogDirTopicResult().setTopicName(t.name());
                for (int p : t.partitions()) {
                    Errors error;
                    if (!ours) {
                        error = Errors.LOG_DIR_NOT_FOUND;
                    } else {
                        TopicPartition tp = new TopicPartition(t.name(), p);
                        Replica r = partitions.get(tp);
                        error = r != null && !r.log().isFenced() ? Errors.NONE
                                : view.exists(tp) ? Errors.REPLICA_NOT_AVAILABLE : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                    }
                    tr.partitions().add(new AlterReplicaLogDirPartitionResult().setPartitionIndex(p).setErrorCode(error.code()));
                }
                resp.results().add(tr);
            }
        }
        return CompletableFuture.completedFuture(resp);
    }

    /** Apache compares absolute paths as given; so does this (no file-system access for a client's string). */
    private boolean isDataDir(String path) {
        if (path == null) {
            return false;
        }
        try {
            return Path.of(path).toAbsolutePath().normalize().equals(partitions.dataDir().normalize());
        } catch (RuntimeException invalidPath) {
            return false;
        }
    }
}
