package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every group API at every advertised version, with realistic requests, against the real broker. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class GroupApiVersionMatrixIT {
    /** No initial rebalance delay: every JoinGroup version starts a fresh group. */
    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of("kaas.group.initial-rebalance-delay", "0s"));

    static KaasCluster cluster;
    static RawClient client;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("gm", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        client = new RawClient(cluster.kafkaPort());
    }

    @AfterAll
    static void down() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    /** Apache 3.7's latest stable version, not the broker's own claim: ApiVersionMatrixIT pins the advertised ranges. */
    static short max(ApiKeys key) {
        return key.latestVersion(false);
    }

    static byte[] subscription() {
        return Utils.toArray(ConsumerProtocol.serializeSubscription(new ConsumerPartitionAssignor.Subscription(List.of("gm"))));
    }

    /** Joins {@code group} alone at version {@code v} (with the KIP-394 handshake from v4) and returns the response. */
    static JoinGroupResponseData join(String group, short v) throws Exception {
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription()));
        JoinGroupRequestData req = new JoinGroupRequestData().setGroupId(group).setMemberId("").setSessionTimeoutMs(10_000)
                .setProtocolType("consumer").setProtocols(protocols);
        if (v >= 1) {
            req.setRebalanceTimeoutMs(10_000);
        }
        if (v >= 8) {
            req.setReason("matrix");
        }
        var r = ((JoinGroupResponse) client.send(ApiKeys.JOIN_GROUP, v, req)).data();
        if (v >= 4) {
            assertThat(Errors.forCode(r.errorCode())).as("join v%d handshake", v).isEqualTo(Errors.MEMBER_ID_REQUIRED);
            r = ((JoinGroupResponse) client.send(ApiKeys.JOIN_GROUP, v, req.setMemberId(r.memberId()))).data();
        }
        assertThat(Errors.forCode(r.errorCode())).as("join v%d", v).isEqualTo(Errors.NONE);
        assertThat(r.generationId()).isEqualTo(1);
        assertThat(r.leader()).isEqualTo(r.memberId());
        assertThat(r.members()).hasSize(1);
        return r;
    }

    static void sync(String group, JoinGroupResponseData joined, short v) throws Exception {
        SyncGroupRequestData req = new SyncGroupRequestData().setGroupId(group).setGenerationId(joined.generationId())
                .setMemberId(joined.memberId());
        if (v >= 5) {
            req.setProtocolType("consumer").setProtocolName("range");
        }
        req.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(joined.memberId()).setAssignment(new byte[] {4, 2}));
        var r = ((SyncGroupResponse) client.send(ApiKeys.SYNC_GROUP, v, req)).data();
        assertThat(Errors.forCode(r.errorCode())).as("sync v%d", v).isEqualTo(Errors.NONE);
        assertThat(r.assignment()).containsExactly(4, 2);
    }

    @Test
    void findCoordinatorAtEveryVersion() throws Exception {
        for (short v = 0; v <= max(ApiKeys.FIND_COORDINATOR); v++) {
            var req = new FindCoordinatorRequestData();
            if (v >= 4) {
                req.setCoordinatorKeys(List.of("a", "b"));
            } else {
                req.setKey("a");
            }
            var r = ((FindCoordinatorResponse) client.send(ApiKeys.FIND_COORDINATOR, v, req)).data();
            if (v >= 4) {
                assertThat(r.coordinators()).hasSize(2).allSatisfy(c -> {
                    assertThat(c.errorCode()).isZero();
                    assertThat(c.port()).isEqualTo(cluster.kafkaPort());
                });
            } else {
                assertThat(r.errorCode()).as("v%d", v).isZero();
                assertThat(r.nodeId()).isEqualTo(1);
                assertThat(r.port()).isEqualTo(cluster.kafkaPort());
            }
        }
    }

    @Test
    void joinSyncHeartbeatAndLeaveAtEveryVersion() throws Exception {
        for (short v = 0; v <= max(ApiKeys.JOIN_GROUP); v++) {
            join("join-v" + v, v);
        }
        short syncMax = max(ApiKeys.SYNC_GROUP);
        for (short v = 0; v <= syncMax; v++) {
            String g = "sync-v" + v;
            sync(g, join(g, (short) 9), v);
        }
        String hb = "heartbeat";
        JoinGroupResponseData joined = join(hb, (short) 9);
        sync(hb, joined, syncMax);
        for (short v = 0; v <= max(ApiKeys.HEARTBEAT); v++) {
            var r = ((HeartbeatResponse) client.send(ApiKeys.HEARTBEAT, v, new HeartbeatRequestData().setGroupId(hb)
                    .setGenerationId(1).setMemberId(joined.memberId()))).data();
            assertThat(Errors.forCode(r.errorCode())).as("heartbeat v%d", v).isEqualTo(Errors.NONE);
        }
        for (short v = 0; v <= max(ApiKeys.LEAVE_GROUP); v++) {
            String g = "leave-v" + v;
            JoinGroupResponseData j = join(g, (short) 9);
            LeaveGroupRequestData req = new LeaveGroupRequestData().setGroupId(g);
            if (v >= 3) {
                req.members().add(new LeaveGroupRequestData.MemberIdentity().setMemberId(j.memberId()).setReason(v >= 5 ? "done" : null));
            } else {
                req.setMemberId(j.memberId());
            }
            var r = ((LeaveGroupResponse) client.send(ApiKeys.LEAVE_GROUP, v, req)).data();
            assertThat(Errors.forCode(r.errorCode())).as("leave v%d", v).isEqualTo(Errors.NONE);
            if (v >= 3) {
                assertThat(r.members()).singleElement().satisfies(m -> assertThat(m.errorCode()).isZero());
            }
        }
    }

    @Test
    void offsetsDescribeListDeleteAtEveryVersion() throws Exception {
        String g = "offsets";
        short commitMax = max(ApiKeys.OFFSET_COMMIT);
        for (short v = 0; v <= commitMax; v++) {
            var req = new OffsetCommitRequestData().setGroupId(g);
            if (v >= 1) {
                req.setGenerationIdOrMemberEpoch(-1).setMemberId("");
            }
            var p = new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(100 + v)
                    .setCommittedMetadata("v" + v);
            if (v >= 6) {
                p.setCommittedLeaderEpoch(0);
            }
            req.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("gm").setPartitions(List.of(p)));
            var r = ((OffsetCommitResponse) client.send(ApiKeys.OFFSET_COMMIT, v, req)).data();
            assertThat(Errors.forCode(r.topics().get(0).partitions().get(0).errorCode())).as("commit v%d", v).isEqualTo(Errors.NONE);
        }
        long last = 100 + commitMax;
        for (short v = 0; v <= max(ApiKeys.OFFSET_FETCH); v++) {
            var req = new OffsetFetchRequestData();
            if (v >= 8) {
                req.groups().add(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(g).setTopics(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("gm").setPartitionIndexes(List.of(0)))));
                var r = ((OffsetFetchResponse) client.send(ApiKeys.OFFSET_FETCH, v, req)).data();
                var p = r.groups().get(0).topics().get(0).partitions().get(0);
                assertThat(p.committedOffset()).as("fetch v%d", v).isEqualTo(last);
                assertThat(p.metadata()).isEqualTo("v" + commitMax);
            } else {
                req.setGroupId(g).setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("gm").setPartitionIndexes(List.of(0))));
                var r = ((OffsetFetchResponse) client.send(ApiKeys.OFFSET_FETCH, v, req)).data();
                assertThat(r.topics().get(0).partitions().get(0).committedOffset()).as("fetch v%d", v).isEqualTo(last);
            }
        }
        for (short v = 0; v <= max(ApiKeys.DESCRIBE_GROUPS); v++) {
            var r = ((DescribeGroupsResponse) client.send(ApiKeys.DESCRIBE_GROUPS, v, new DescribeGroupsRequestData().setGroups(List.of(g)))).data();
            assertThat(r.groups()).singleElement().satisfies(d -> {
                assertThat(d.errorCode()).isZero();
                assertThat(d.groupState()).isEqualTo("Empty");
            });
        }
        for (short v = 0; v <= max(ApiKeys.LIST_GROUPS); v++) {
            var req = new ListGroupsRequestData();
            if (v >= 4) {
                req.setStatesFilter(List.of("Empty"));
            }
            var r = ((ListGroupsResponse) client.send(ApiKeys.LIST_GROUPS, v, req)).data();
            assertThat(r.errorCode()).isZero();
            assertThat(r.groups()).as("list v%d", v).anySatisfy(l -> assertThat(l.groupId()).isEqualTo(g));
        }
        var del = new OffsetDeleteRequestData().setGroupId(g);
        var delTopic = new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName("gm");
        delTopic.partitions().add(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0));
        del.topics().add(delTopic);
        var dr = ((OffsetDeleteResponse) client.send(ApiKeys.OFFSET_DELETE, (short) 0, del)).data();
        assertThat(dr.errorCode()).isZero();
        for (short v = 0; v <= max(ApiKeys.DELETE_GROUPS); v++) {
            String name = "deletable-v" + v;
            var c = new OffsetCommitRequestData().setGroupId(name).setGenerationIdOrMemberEpoch(-1).setMemberId("");
            c.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("gm").setPartitions(List.of(
                    new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
            client.send(ApiKeys.OFFSET_COMMIT, (short) 8, c);
            var r = ((DeleteGroupsResponse) client.send(ApiKeys.DELETE_GROUPS, v, new DeleteGroupsRequestData().setGroupsNames(List.of(name)))).data();
            assertThat(r.results().find(name).errorCode()).as("delete v%d", v).isZero();
        }
    }
}
