package dev.kaas.broker.data;

import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;

/**
 * DescribeLogDirs (key 35), as Apache 3.7's {@code ReplicaManager.describeLogDirs} for a broker
 * with one log dir: the shared volume's data directory, with the partitions this broker leads
 * (all of them when the request names no topics, else those named that are here), each with
 * its segments' size and an offset lag of 0 (there is no future replica), and from v4 the
 * volume's total and usable bytes. Every broker reports the same directory, its own partitions.
 */
@ApplicationScoped
public class DescribeLogDirsHandler implements ApiHandler {
    private final Partitions partitions;

    public DescribeLogDirsHandler(Partitions partitions) {
        this.partitions = partitions;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_LOG_DIRS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        ctx.authorizeCluster(AclOperation.DESCRIBE);
        DescribeLogDirsRequestData data = ((DescribeLogDirsRequest) request).data();
        // The file store is asked on the storage pool: a statfs on a slow volume must not hold the event loop.
        return CompletableFuture.supplyAsync(() -> describe(data, ctx.apiVersion()), partitions.storage());
    }

    private ApiMessage describe(DescribeLogDirsRequestData data, short version) {
        Set<TopicPartition> wanted = null;
        if (data.topics() != null) {
            wanted = new java.util.HashSet<>();
            for (DescribeLogDirsRequestData.DescribableLogDirTopic t : data.topics()) {
                for (int p : t.partitions()) {
                    wanted.add(new TopicPartition(t.topic(), p));
                }
            }
        }
        Map<String, List<DescribeLogDirsPartition>> byTopic = new TreeMap<>();
        for (Map.Entry<TopicPartition, Replica> e : partitions.view().entrySet()) {
            TopicPartition tp = e.getKey();
            if ((wanted != null && !wanted.contains(tp)) || e.getValue().log().isFenced()) {
                continue;
            }
            byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(new DescribeLogDirsPartition()
                    .setPartitionIndex(tp.partition()).setPartitionSize(e.getValue().log().sizeInBytes())
                    .setOffsetLag(0).setIsFutureKey(false));
        }
        DescribeLogDirsResult dir = new DescribeLogDirsResult().setErrorCode(Errors.NONE.code())
                .setLogDir(partitions.dataDir().toString());
        byTopic.forEach((topic, ps) -> {
            ps.sort(java.util.Comparator.comparingInt(DescribeLogDirsPartition::partitionIndex));
            dir.topics().add(new DescribeLogDirsTopic().setName(topic).setPartitions(ps));
        });
        if (version >= 4) {
            try {
                FileStore store = Files.getFileStore(partitions.dataDir());
                dir.setTotalBytes(store.getTotalSpace()).setUsableBytes(store.getUsableSpace());
            } catch (IOException e) {
                // Apache reports -1 (UNKNOWN_VOLUME_BYTES) when it cannot tell.
                dir.setTotalBytes(-1).setUsableBytes(-1);
            }
        }
        return new DescribeLogDirsResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code()).setResults(List.of(dir));
    }
}
