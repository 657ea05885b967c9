package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wire side of leader changes on a real 2-broker cluster: leader epochs grow with every
 * takeover, OffsetForLeaderEpoch answers from the epoch history at every version, stale and
 * future epochs get FENCED / UNKNOWN_LEADER_EPOCH, and a non-leader points the client at the
 * leader (KIP-951) in Produce v10 and Fetch v16.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClusterProtocolIT {
    @TempDir
    Path tmp;

    @Test
    void leaderEpochsAcrossATakeoverOnTheWire() throws Exception {
        try (KaasMultiCluster cluster = KaasMultiCluster.start(tmp.resolve("data"), 2, 1, Map.of(), Map.of());
             Admin admin = Admin.create(cluster.clientProps());
             KafkaProducer<String, String> producer = new KafkaProducer<>(cluster.clientProps(), new StringSerializer(), new StringSerializer())) {
            admin.createTopics(List.of(new NewTopic("epochs", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            int first = ClusterIT.awaitLeaders(admin, "epochs", l -> l.get(0) != -1).get(0);
            int other = first == 1 ? 2 : 1;
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>("epochs", 0, null, "a" + i)).get(30, TimeUnit.SECONDS);
            }
            int firstEpoch = epochOf(cluster, other, "epochs");

            cluster.killBroker(first);
            ClusterIT.awaitLeaders(admin, "epochs", l -> l.get(0) == other);
            for (int i = 0; i < 2; i++) {
                producer.send(new ProducerRecord<>("epochs", 0, null, "b" + i)).get(30, TimeUnit.SECONDS);
            }
            int secondEpoch = epochOf(cluster, other, "epochs");
            assertThat(secondEpoch).as("a takeover bumps the leader epoch").isGreaterThan(firstEpoch);
            cluster.startBroker(first);

            try (RawClient leader = new RawClient(cluster.kafkaPort(other))) {
                for (short v = 0; v <= ApiKeys.OFFSET_FOR_LEADER_EPOCH.latestVersion(); v++) {
                    // The first leader's epoch ended where the second began: offset 3.
                    var p = offsetForEpoch(leader, v, firstEpoch, v >= 2 ? secondEpoch : -1);
                    assertThat(Errors.forCode(p.errorCode())).as("v%d", v).isEqualTo(Errors.NONE);
                    assertThat(p.endOffset()).as("v%d end of epoch %d", v, firstEpoch).isEqualTo(3);
                    if (v >= 1) {
                        assertThat(p.leaderEpoch()).isEqualTo(firstEpoch);
                    }
                    var latest = offsetForEpoch(leader, v, secondEpoch, v >= 2 ? secondEpoch : -1);
                    assertThat(latest.endOffset()).as("v%d end of the current epoch = log end", v).isEqualTo(5);
                    if (v >= 2) {
                        assertThat(Errors.forCode(offsetForEpoch(leader, v, firstEpoch, firstEpoch).errorCode()))
                                .as("v%d stale current_leader_epoch", v).isEqualTo(Errors.FENCED_LEADER_EPOCH);
                        assertThat(Errors.forCode(offsetForEpoch(leader, v, firstEpoch, secondEpoch + 1).errorCode()))
                                .as("v%d future current_leader_epoch", v).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
                    }
                }
                // Fetch and ListOffsets check current_leader_epoch too.
                var fetch = fetch(leader, (short) 16, Uuid.fromString(topicId(admin)), firstEpoch);
                assertThat(Errors.forCode(fetch.data().responses().get(0).partitions().get(0).errorCode()))
                        .isEqualTo(Errors.FENCED_LEADER_EPOCH);
                var lo = new ListOffsetsRequestData().setReplicaId(-1);
                lo.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("epochs").setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1)
                                .setCurrentLeaderEpoch(secondEpoch + 1))));
                var lor = (ListOffsetsResponse) leader.send(ApiKeys.LIST_OFFSETS, (short) 8, lo);
                assertThat(Errors.forCode(lor.data().topics().get(0).partitions().get(0).errorCode()))
                        .isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
            }

            // The broker that is not the leader sends the client to the one that is.
            cluster.awaitBrokerReady(first);
            try (RawClient follower = new RawClient(cluster.kafkaPort(first))) {
                var produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
                produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("epochs").setPartitionData(List.of(
                        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                                MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("x".getBytes()))))));
                var pr = (ProduceResponse) follower.send(ApiKeys.PRODUCE, (short) 10, produce);
                var part = pr.data().responses().find("epochs").partitionResponses().get(0);
                if (Errors.forCode(part.errorCode()) == Errors.NONE) {
                    throw new AssertionError("broker " + first + " accepted a produce for a partition led by " + other
                            + " (did the balancer move it back? then this test must pick the non-leader again)");
                }
                assertThat(Errors.forCode(part.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
                assertThat(part.currentLeader().leaderId()).isEqualTo(other);
                assertThat(part.currentLeader().leaderEpoch()).isEqualTo(secondEpoch);
                var endpoint = pr.data().nodeEndpoints().find(other);
                assertThat(endpoint).isNotNull();
                assertThat(endpoint.port()).isEqualTo(cluster.kafkaPort(other));

                var fr = fetch(follower, (short) 16, Uuid.fromString(topicId(admin)), -1);
                var fp = fr.data().responses().get(0).partitions().get(0);
                assertThat(Errors.forCode(fp.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
                assertThat(fp.currentLeader().leaderId()).isEqualTo(other);
                assertThat(fr.data().nodeEndpoints().find(other).port()).isEqualTo(cluster.kafkaPort(other));

                var dc = (DescribeClusterResponse) follower.send(ApiKeys.DESCRIBE_CLUSTER, (short) 1, new DescribeClusterRequestData());
                assertThat(dc.data().brokers()).hasSize(2);
                assertThat(dc.data().controllerId()).isEqualTo(1);
            }
        }
    }

    private static String topicId(Admin admin) throws Exception {
        return admin.describeTopics(List.of("epochs")).allTopicNames().get(30, TimeUnit.SECONDS).get("epochs").topicId().toString();
    }

    private static int epochOf(KaasMultiCluster cluster, int anyBroker, String topic) throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort(anyBroker))) {
            var md = new org.apache.kafka.common.message.MetadataRequestData().setAllowAutoTopicCreation(false);
            md.topics().add(new org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic().setName(topic));
            return ((org.apache.kafka.common.requests.MetadataResponse) c.send(ApiKeys.METADATA, (short) 12, md)).data()
                    .topics().find(topic).partitions().get(0).leaderEpoch();
        }
    }

    private static OffsetForLeaderEpochResponseData.EpochEndOffset offsetForEpoch(RawClient c, short v, int epoch, int current)
            throws Exception {
        var req = new OffsetForLeaderEpochRequestData().setReplicaId(-1);
        var t = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("epochs");
        t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                .setCurrentLeaderEpoch(current).setLeaderEpoch(epoch));
        req.topics().add(t);
        var r = (OffsetsForLeaderEpochResponse) c.send(ApiKeys.OFFSET_FOR_LEADER_EPOCH, v, req);
        return r.data().topics().find("epochs").partitions().get(0);
    }

    private static FetchResponse fetch(RawClient c, short v, Uuid topicId, int currentEpoch) throws Exception {
        var req = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20);
        req.topics().add(new FetchRequestData.FetchTopic().setTopicId(topicId).setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setCurrentLeaderEpoch(currentEpoch)
                        .setPartitionMaxBytes(1 << 20))));
        return (FetchResponse) c.send(ApiKeys.FETCH, v, req);
    }
}
