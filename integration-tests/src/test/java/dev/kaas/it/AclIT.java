package dev.kaas.it;

import static org.apache.kafka.common.acl.AclOperation.ALL;
import static org.apache.kafka.common.acl.AclOperation.ALTER;
import static org.apache.kafka.common.acl.AclOperation.ALTER_CONFIGS;
import static org.apache.kafka.common.acl.AclOperation.CLUSTER_ACTION;
import static org.apache.kafka.common.acl.AclOperation.CREATE;
import static org.apache.kafka.common.acl.AclOperation.DELETE;
import static org.apache.kafka.common.acl.AclOperation.DESCRIBE;
import static org.apache.kafka.common.acl.AclOperation.DESCRIBE_CONFIGS;
import static org.apache.kafka.common.acl.AclOperation.IDEMPOTENT_WRITE;
import static org.apache.kafka.common.acl.AclOperation.READ;
import static org.apache.kafka.common.acl.AclOperation.WRITE;
import static org.apache.kafka.common.protocol.Errors.CLUSTER_AUTHORIZATION_FAILED;
import static org.apache.kafka.common.protocol.Errors.GROUP_AUTHORIZATION_FAILED;
import static org.apache.kafka.common.protocol.Errors.INVALID_REQUEST;
import static org.apache.kafka.common.protocol.Errors.LEADER_NOT_AVAILABLE;
import static org.apache.kafka.common.protocol.Errors.MEMBER_ID_REQUIRED;
import static org.apache.kafka.common.protocol.Errors.NONE;
import static org.apache.kafka.common.protocol.Errors.TOPIC_AUTHORIZATION_FAILED;
import static org.apache.kafka.common.protocol.Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
import static org.apache.kafka.common.protocol.Errors.UNKNOWN_TOPIC_OR_PARTITION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.AlterReplicaLogDirsResponse;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ACLs as Apache 3.7's StandardAuthorizer applies them on a KRaft broker
 * ({@code authorizer.class.name}, {@code super.users}, {@code allow.everyone.if.no.acl.found=false}):
 * for every served API, a principal without the ACL it needs gets Apache's error code where
 * Apache puts it, and with the ACL succeeds. The APIs are one table ({@link #table()}), not a test
 * each. Also Apache's {@code kafka-acls.sh}, super users, DENY precedence and the implied
 * operations, and how soon an ACL created through one broker applies on the other.
 *
 * <p>One cluster of two brokers and one controller for the class. Its brokers' one listener is
 * named PLAINTEXT but speaks SASL_PLAINTEXT with PLAIN ({@code listener.security.protocol.map}),
 * as KaasMultiCluster gives every broker a PLAINTEXT listener: users {@code admin} (the super
 * user), {@code alice} (whose rights the tests change) and {@code bob}. Every test starts and
 * ends with no ACL at all ({@link #noAclsLeft()}).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AclIT {
    static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " user_admin=\"admin-secret\" user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    static final String ALICE = "User:alice";
    /** A topic with records every read-only row uses; rows that change a topic make their own. */
    static final String SHARED = "acl-shared";
    /** The topic the transaction rows add to their transactions. */
    static final String TXN_TOPIC = "acl-txn";
    /** How long a created or deleted ACL may take to show on every broker before a row gives up. */
    static final Duration ACL_WAIT = Duration.ofSeconds(5);
    static final int[] BROKERS = {1, 2};

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tmp;
    static KaasMultiCluster cluster;
    static Admin admin;
    static Uuid sharedId;
    /** The super user's authenticated connection to each broker. */
    static final Map<Integer, RawClient> adminWire = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        Map<String, String> props = new HashMap<>();
        props.put("kaas.broker.listener-security-protocol-map", "PLAINTEXT:SASL_PLAINTEXT");
        props.put("sasl.enabled.mechanisms", "PLAIN");
        props.put("listener.name.plaintext.plain.sasl.jaas.config", JAAS);
        props.put("kaas.broker.authorizer-class-name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        props.put("kaas.broker.super-users", "User:admin");
        props.put("kaas.broker.allow-everyone-if-no-acl-found", "false");
        // No handoffs: the balancer would otherwise move coordinator slots and partitions onto the second
        // broker while rows run, and a row would meet a retriable NOT_COORDINATOR or NOT_LEADER instead of its answer.
        cluster = KaasMultiCluster.start(tmp.resolve("data"), 2, 1, props, Map.of("kaas.controller.max-moves-in-flight", "0"));
        admin = Admin.create(client("admin"));
        admin.createTopics(List.of(new NewTopic(SHARED, 1, (short) 1), new NewTopic(TXN_TOPIC, 1, (short) 1)))
                .all().get(30, TimeUnit.SECONDS);
        awaitTopic(SHARED);
        awaitTopic(TXN_TOPIC);
        produceAsAdmin(SHARED, 3);
        sharedId = admin.describeTopics(List.of(SHARED)).allTopicNames().get(30, TimeUnit.SECONDS).get(SHARED).topicId();
    }

    @AfterAll
    static void stop() throws Exception {
        for (RawClient c : adminWire.values()) {
            c.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void noAclsLeft() throws Exception {
        admin.deleteAcls(List.of(AclBindingFilter.ANY)).all().get(30, TimeUnit.SECONDS);
        awaitAclsOnEveryBroker(Set.of());
    }

    // ---------------------------------------------------------------------------------------------
    // 1. The matrix: one row per API and check.
    // ---------------------------------------------------------------------------------------------

    /**
     * For each row: alice, with only the row's {@code given} ACLs, gets the row's denial; the super
     * user grants the row's ACLs (waiting until every broker lists them); alice then gets the
     * row's success. The row's set-up (topics, offsets, a group member, an open transaction) is
     * done by the super user first.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void aPrincipalWithoutTheAclIsRefusedAsApacheRefusesAndWithItSucceeds(Row<?> row) throws Exception {
        check(row);
    }

    private static <T> void check(Row<T> row) throws Exception {
        try (Case c = new Case(row.key())) {
            for (Step s : row.setup()) {
                s.run(c);
            }
            grant(c, row.given(), List.of());
            T denied = row.probe().run(c);
            assertThat(denied).as("%s as alice with %s (broker logs: %s)", row.api(), row.given(), cluster.logDir())
                    .matches(row.denied().test(), row.denied().text());

            grant(c, row.grants(), row.given());
            T granted = row.probe().run(c);
            List<Acl> all = new ArrayList<>(row.given());
            all.addAll(row.grants());
            assertThat(granted).as("%s as alice with %s (broker logs: %s)", row.api(), all, cluster.logDir())
                    .matches(row.granted().test(), row.granted().text());
        }
    }

    /** Where the row's check answers and what it answers; "absent" rows are Apache's silent filters. */
    static Stream<Row<?>> table() {
        return Stream.of(
                // Data plane
                codes("Produce", AclIT::produce).grants(shared(WRITE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("Produce (transactional batch)", AclIT::produceTransactional).setup(AclIT::txnWithPartition)
                        .grants(txn(WRITE), txnTopic(WRITE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("Fetch", AclIT::fetch).grants(shared(READ))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("ListOffsets", AclIT::listOffsets).grants(shared(DESCRIBE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("Metadata (a named topic)", AclIT::metadataOfShared).grants(shared(DESCRIBE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("Metadata (all topics)", AclIT::metadataOfAll).grants(shared(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("Metadata (auto-creation needs CREATE)", AclIT::metadataAutoCreating).given(topic(DESCRIBE))
                        .grants(topic(CREATE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(oneOf(NONE, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE)),
                codes("OffsetForLeaderEpoch", AclIT::offsetForLeaderEpoch).grants(shared(DESCRIBE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetForLeaderEpoch (CLUSTER_ACTION)", AclIT::offsetForLeaderEpoch).grants(cluster(CLUSTER_ACTION))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DeleteRecords", AclIT::deleteRecords).setup(AclIT::ownTopicWithRecords).grants(topic(DELETE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeProducers (DESCRIBE is not enough)", AclIT::describeProducers).given(shared(DESCRIBE))
                        .grants(shared(READ))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),

                // Groups
                codes("FindCoordinator (group)", c -> findCoordinator(c, c.group(), (byte) 0)).grants(group(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("FindCoordinator (transaction)", c -> findCoordinator(c, c.txn(), (byte) 1)).grants(txn(DESCRIBE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetCommit (group)", AclIT::offsetCommit).grants(group(READ), shared(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetCommit (topic)", AclIT::offsetCommit).given(group(READ)).grants(shared(READ))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetFetch (group)", AclIT::offsetFetchGroupError).grants(group(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetFetch (topic)", c -> offsetFetchPartitions(c, true)).given(group(DESCRIBE)).grants(shared(DESCRIBE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetFetch (all partitions)", c -> offsetFetchPartitions(c, false)).setup(AclIT::committedOffset)
                        .given(group(DESCRIBE)).grants(shared(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("JoinGroup", AclIT::joinGroup).grants(group(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(oneOf(MEMBER_ID_REQUIRED, NONE)),
                codes("SyncGroup", AclIT::syncGroup).setup(AclIT::stableMember).grants(group(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("Heartbeat", AclIT::heartbeat).setup(AclIT::stableMember).grants(group(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("LeaveGroup", AclIT::leaveGroup).setup(AclIT::stableMember).grants(group(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeGroups", AclIT::describeGroups).grants(group(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("ListGroups (group DESCRIBE)", AclIT::listGroups).setup(AclIT::committedOffset).grants(group(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("ListGroups (cluster DESCRIBE)", AclIT::listGroups).setup(AclIT::committedOffset).grants(cluster(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("DeleteGroups", AclIT::deleteGroups).setup(AclIT::committedOffset).grants(group(DELETE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetDelete (group)", AclIT::offsetDeleteTopLevel).setup(AclIT::committedOffset).grants(group(DELETE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetDelete (topic)", AclIT::offsetDeletePartitions).setup(AclIT::committedOffset).given(group(DELETE))
                        .grants(shared(READ))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),

                // Transactions
                codes("InitProducerId (transactional)", AclIT::initProducerIdTransactional).grants(txn(WRITE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("InitProducerId (idempotent, IDEMPOTENT_WRITE)", AclIT::initProducerIdIdempotent).grants(cluster(IDEMPOTENT_WRITE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("InitProducerId (idempotent, WRITE on a topic prefix)", AclIT::initProducerIdIdempotent)
                        .grants(new Acl(ResourceType.TOPIC, "acl-{key}-", PatternType.PREFIXED, WRITE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AddPartitionsToTxn (transactional id)", AclIT::addPartitionsToTxn).setup(AclIT::openTxn)
                        .grants(txn(WRITE), txnTopic(WRITE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AddPartitionsToTxn (topic)", AclIT::addPartitionsToTxn).setup(AclIT::openTxn).given(txn(WRITE))
                        .grants(txnTopic(WRITE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AddOffsetsToTxn (transactional id)", AclIT::addOffsetsToTxn).setup(AclIT::openTxn)
                        .grants(txn(WRITE), group(READ))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AddOffsetsToTxn (group)", AclIT::addOffsetsToTxn).setup(AclIT::openTxn).given(txn(WRITE))
                        .grants(group(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("TxnOffsetCommit (transactional id)", AclIT::txnOffsetCommit).setup(AclIT::txnWithOffsets)
                        .grants(txn(WRITE), group(READ), shared(READ))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("TxnOffsetCommit (group)", AclIT::txnOffsetCommit).setup(AclIT::txnWithOffsets).given(txn(WRITE))
                        .grants(group(READ), shared(READ))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("TxnOffsetCommit (topic)", AclIT::txnOffsetCommit).setup(AclIT::txnWithOffsets).given(txn(WRITE), group(READ))
                        .grants(shared(READ))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("EndTxn", AclIT::endTxn).setup(AclIT::txnWithPartition).grants(txn(WRITE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("WriteTxnMarkers", AclIT::writeTxnMarkers).grants(cluster(CLUSTER_ACTION))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeTransactions", AclIT::describeTransactionsError).setup(AclIT::txnWithPartition).grants(txn(DESCRIBE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeTransactions (topics)", AclIT::describeTransactionsTopics).setup(AclIT::txnWithPartition)
                        .given(txn(DESCRIBE)).grants(txnTopic(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("ListTransactions", AclIT::listTransactions).setup(AclIT::openTxn).grants(txn(DESCRIBE))
                        .denied(absent()).granted(listed()),

                // Topics and configs
                codes("CreateTopics (topic CREATE; configs need DESCRIBE_CONFIGS)", AclIT::createTopics).grants(topic(CREATE))
                        .denied(exactly(TOPIC_AUTHORIZATION_FAILED, NONE)).granted(exactly(NONE, TOPIC_AUTHORIZATION_FAILED)),
                codes("CreateTopics (cluster CREATE)", AclIT::createTopics).grants(cluster(CREATE), topic(DESCRIBE_CONFIGS))
                        .denied(exactly(TOPIC_AUTHORIZATION_FAILED, NONE)).granted(exactly(NONE, NONE)),
                // A name twice, one copy invalid: neither copy is created, whoever asks (it once slipped past CREATE).
                codes("CreateTopics (a name twice)", AclIT::createTopicsTwice).grants(topic(CREATE))
                        .denied(every(INVALID_REQUEST)).granted(every(INVALID_REQUEST)),
                codes("DeleteTopics (topic DELETE)", AclIT::deleteTopics).setup(AclIT::ownTopic).grants(topic(DELETE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DeleteTopics (cluster DELETE)", AclIT::deleteTopics).setup(AclIT::ownTopic).grants(cluster(DELETE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DeleteTopics (by id)", AclIT::deleteTopicsById).setup(AclIT::ownTopic).grants(topic(DELETE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                // A name alice may delete with another topic's id: refused whoever asks, and the other topic stays.
                codes("DeleteTopics (a name and another topic's id)", AclIT::deleteTopicsByNameAndSharedId).setup(AclIT::ownTopic)
                        .grants(topic(DELETE)).denied(every(INVALID_REQUEST)).granted(every(INVALID_REQUEST)),
                codes("CreatePartitions", AclIT::createPartitions).setup(AclIT::ownTopic).grants(topic(ALTER))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeConfigs (topic)", AclIT::describeConfigsOfShared).grants(shared(DESCRIBE_CONFIGS))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeConfigs (broker)", AclIT::describeConfigsOfBroker).grants(cluster(DESCRIBE_CONFIGS))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AlterConfigs (topic)", AclIT::alterConfigs).setup(AclIT::ownTopic).grants(topic(ALTER_CONFIGS))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("IncrementalAlterConfigs (topic)", AclIT::incrementalAlterConfigsOfTopic).setup(AclIT::ownTopic)
                        .grants(topic(ALTER_CONFIGS))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("IncrementalAlterConfigs (broker logger)", AclIT::incrementalAlterConfigsOfLogger).grants(cluster(ALTER_CONFIGS))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),

                // Cluster administration
                codes("DescribeAcls", AclIT::describeAcls).grants(cluster(DESCRIBE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("CreateAcls", AclIT::createAcls).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DeleteAcls", AclIT::deleteAcls).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AlterReplicaLogDirs", AclIT::alterReplicaLogDirs).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeLogDirs", AclIT::describeLogDirs).grants(cluster(DESCRIBE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("ElectLeaders", AclIT::electLeaders).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(firstNoneAndNoAuthorizationError()),
                codes("AlterPartitionReassignments", AclIT::alterPartitionReassignments).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("ListPartitionReassignments", AclIT::listPartitionReassignments).grants(cluster(DESCRIBE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeClientQuotas", AclIT::describeClientQuotas).grants(cluster(DESCRIBE_CONFIGS))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AlterClientQuotas", AclIT::alterClientQuotas).grants(cluster(ALTER_CONFIGS))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("DescribeUserScramCredentials", AclIT::describeUserScramCredentials).grants(cluster(DESCRIBE))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("AlterUserScramCredentials", AclIT::alterUserScramCredentials).grants(cluster(ALTER))
                        .denied(every(CLUSTER_AUTHORIZATION_FAILED)).granted(every(NONE)),
                // Older versions, where the answer has another shape: FindCoordinator before batching (v0-3), OffsetFetch
                // before several groups (v0-7: v0 puts the group's error on each partition, v1 has nowhere to put it and
                // answers nothing, v2-7 at the top level), DescribeLogDirs before its top-level error (v0-2: no log dir).
                codes("FindCoordinator v0 (group)", c -> findCoordinatorSingle(c, c.group(), (byte) 0, (short) 0)).grants(group(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("FindCoordinator v3 (group)", c -> findCoordinatorSingle(c, c.group(), (byte) 0, (short) 3)).grants(group(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("FindCoordinator v3 (transaction)", c -> findCoordinatorSingle(c, c.txn(), (byte) 1, (short) 3)).grants(txn(DESCRIBE))
                        .denied(every(TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).granted(every(NONE)),
                // Granted, Apache 3.7 on KRaft answers v0 UNSUPPORTED_VERSION (v0 read ZooKeeper); kaas reads its offsets.
                codes("OffsetFetch v0 (group)", c -> offsetFetchSingle(c, (short) 0, true)).grants(group(DESCRIBE), shared(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(noAuthorizationError()),
                codes("OffsetFetch v1 (group)", c -> offsetFetchSingle(c, (short) 1, true)).grants(group(DESCRIBE), shared(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("OffsetFetch v7 (group)", c -> offsetFetchSingle(c, (short) 7, true)).grants(group(DESCRIBE), shared(DESCRIBE))
                        .denied(every(GROUP_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetFetch v7 (topic)", c -> offsetFetchSingle(c, (short) 7, true)).given(group(DESCRIBE)).grants(shared(DESCRIBE))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(every(NONE)),
                codes("OffsetFetch v7 (all partitions)", c -> offsetFetchSingle(c, (short) 7, false)).setup(AclIT::committedOffset)
                        .given(group(DESCRIBE)).grants(shared(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("DescribeLogDirs v2", c -> describeLogDirsBefore3(c, (short) 2)).grants(cluster(DESCRIBE))
                        .denied(absent()).granted(listed()),
                codes("DescribeLogDirs v0", c -> describeLogDirsBefore3(c, (short) 0)).grants(cluster(DESCRIBE))
                        .denied(absent()).granted(listed()),
                // A follower's fetch (a replica id) needs CLUSTER_ACTION, not READ: without it every partition is refused.
                // Granted, Apache answers NOT_LEADER_OR_FOLLOWER to a replica id not among the partition's replicas;
                // kaas has no replicas and serves the records: either way, no authorization error.
                codes("Fetch (a follower's, v16)", c -> followerFetch(c, max(ApiKeys.FETCH))).given(shared(READ))
                        .grants(cluster(CLUSTER_ACTION))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(noAuthorizationError()),
                codes("Fetch (a follower's, v12)", c -> followerFetch(c, (short) 12)).given(shared(READ))
                        .grants(cluster(CLUSTER_ACTION))
                        .denied(every(TOPIC_AUTHORIZATION_FAILED)).granted(noAuthorizationError()),

                // No gate: everyone is answered; DESCRIBE on the cluster only shows in the authorized operations.
                new Row<>("DescribeCluster (authorized operations)", List.of(), List.of(), List.of(cluster(DESCRIBE)),
                        AclIT::describeClusterAuthorizedOperations, equalTo(0), equalTo(1 << DESCRIBE.code())));
    }

    // ---------------------------------------------------------------------------------------------
    // 2. kafka-acls.sh
    // ---------------------------------------------------------------------------------------------

    /**
     * Apache's kafka-acls.sh as an operator runs it, with the super user's SASL settings in a
     * --command-config file: a prefixed and a wildcard topic ACL added, listed, applied to
     * alice's and bob's clients, removed, and no longer applied.
     */
    /**
     * CreateAcls, DescribeAcls and DeleteAcls at every version, as the super user: v0 carries
     * literal patterns only (its requests have no pattern type field), v1+ prefixed ones too.
     */
    @Test
    void theAclApisAtEveryVersion() throws Exception {
        RawClient wire = adminAt(1);
        for (short v = 0; v <= max(ApiKeys.CREATE_ACLS); v++) {
            short version = v;
            PatternType pattern = v == 0 ? PatternType.LITERAL : PatternType.PREFIXED;
            AclBinding acl = binding(ResourceType.TOPIC, "versioned-" + v, pattern, ALICE, READ, AclPermissionType.ALLOW);
            var created = (CreateAclsResponse) wire.send(ApiKeys.CREATE_ACLS, v,
                    new CreateAclsRequestData().setCreations(List.of(CreateAclsRequest.aclCreation(acl))));
            assertThat(created.data().results()).singleElement()
                    .satisfies(r -> assertThat(Errors.forCode(r.errorCode())).as("CreateAcls v%d", (int) version).isEqualTo(Errors.NONE));
            var filter = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, "versioned-" + v, pattern),
                    AccessControlEntryFilter.ANY);
            var described = (DescribeAclsResponse) wire.send(ApiKeys.DESCRIBE_ACLS, v, new DescribeAclsRequest.Builder(filter).build(v).data());
            assertThat(Errors.forCode(described.data().errorCode())).as("DescribeAcls v%d", (int) version).isEqualTo(Errors.NONE);
            assertThat(DescribeAclsResponse.aclBindings(described.data().resources()))
                    .as("DescribeAcls v%d", (int) version).containsExactly(acl);
            var deleted = (DeleteAclsResponse) wire.send(ApiKeys.DELETE_ACLS, v,
                    new DeleteAclsRequestData().setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(filter))));
            assertThat(deleted.data().filterResults()).singleElement().satisfies(r -> {
                assertThat(Errors.forCode(r.errorCode())).as("DeleteAcls v%d", (int) version).isEqualTo(Errors.NONE);
                assertThat(r.matchingAcls()).singleElement().satisfies(m -> assertThat(DeleteAclsResponse.aclBinding(m)).isEqualTo(acl));
            });
        }
        assertThat(admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void kafkaAclsAddsListsAndRemovesPrefixedAndWildcardAcls() throws Exception {
        Path config = tmp.resolve("admin.properties");
        Files.writeString(config, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                + "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\";\n");
        String topic = "tool-data";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        awaitTopic(topic);

        var prefixed = aclTool(config, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
                "--topic", "tool-", "--resource-pattern-type", "prefixed");
        assertThat(prefixed.exitCode()).as(prefixed.stderr()).isZero();
        var wildcard = aclTool(config, "--add", "--allow-principal", "User:bob", "--operation", "Write", "--topic", "*");
        assertThat(wildcard.exitCode()).as(wildcard.stderr()).isZero();
        var listed = aclTool(config, "--list");
        assertThat(listed.exitCode()).as(listed.stderr()).isZero();
        assertThat(listed.stdout())
                .contains("ResourcePattern(resourceType=TOPIC, name=tool-, patternType=PREFIXED)")
                .contains("(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)")
                .contains("(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)")
                .contains("ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)")
                .contains("(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW)");
        awaitAclsOnEveryBroker(Set.of(
                binding(ResourceType.TOPIC, "tool-", PatternType.PREFIXED, "User:alice", READ, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "tool-", PatternType.PREFIXED, "User:alice", DESCRIBE, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:bob", WRITE, AclPermissionType.ALLOW)));

        // bob writes anywhere (and, by WRITE on a topic, may be an idempotent producer); alice reads "tool-*" only.
        try (KafkaProducer<String, String> bob = new KafkaProducer<>(client("bob"), new StringSerializer(), new StringSerializer())) {
            bob.send(new ProducerRecord<>(topic, 0, "k", "from bob")).get(30, TimeUnit.SECONDS);
        }
        assertThat(consumeAsAlice(topic, 1)).containsExactly("from bob");
        try (Case c = new Case("tool")) {
            assertThat(produce(c.aliceAtLeader(topic), topic, null, records())).as("alice has no WRITE").containsExactly(TOPIC_AUTHORIZATION_FAILED);
        }

        var removedPrefixed = aclTool(config, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
                "--operation", "Describe", "--topic", "tool-", "--resource-pattern-type", "prefixed");
        assertThat(removedPrefixed.exitCode()).as(removedPrefixed.stderr()).isZero();
        var removedWildcard = aclTool(config, "--remove", "--force", "--topic", "*");
        assertThat(removedWildcard.exitCode()).as(removedWildcard.stderr()).isZero();
        awaitAclsOnEveryBroker(Set.of());
        try (Case c = new Case("tool")) {
            assertThat(fetch(c.aliceAtLeader(topic), topicId(topic), topic)).as("alice's READ removed").containsExactly(TOPIC_AUTHORIZATION_FAILED);
        }
    }

    static ShellTools.Result aclTool(Path config, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.bootstrap(), "--command-config", config.toString()));
        all.addAll(List.of(args));
        return ShellTools.run("kafka.admin.AclCommand", null, all.toArray(String[]::new));
    }

    // ---------------------------------------------------------------------------------------------
    // 3. Super users, DENY precedence, implied operations
    // ---------------------------------------------------------------------------------------------

    @Test
    void aSuperUserNeedsNoAclWhileOthersAreRefusedWithoutOne() throws Exception {
        String topic = "super-data";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        awaitTopic(topic);
        Properties producer = client("admin");
        producer.put("enable.idempotence", "true");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producer, new StringSerializer(), new StringSerializer())) {
            p.send(new ProducerRecord<>(topic, 0, "k", "from admin")).get(30, TimeUnit.SECONDS);
        }
        Properties consumer = client("admin");
        consumer.put("group.id", "super-group");
        consumer.put("auto.offset.reset", "earliest");
        consumer.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> k = new KafkaConsumer<>(consumer, new StringDeserializer(), new StringDeserializer())) {
            k.subscribe(List.of(topic));
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.isEmpty() && System.nanoTime() < deadline) {
                k.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
            }
            assertThat(seen).containsExactly("from admin");
            k.commitSync(Duration.ofSeconds(30));
        }
        assertThat(admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.BROKER, "1"))).all().get(30, TimeUnit.SECONDS))
                .isNotEmpty();
        assertThat(admin.listConsumerGroupOffsets("super-group").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
                .containsKey(new TopicPartition(topic, 0));

        try (RawClient bob = login("bob", 1)) {
            assertThat(metadata(bob, topic, false)).as("bob, with no ACL").containsExactly(TOPIC_AUTHORIZATION_FAILED);
        }
    }

    /** ALLOW ALL on every topic; DENY READ on "secret-" topics and DENY WRITE on "open-" ones: each DENY takes just its operation. */
    @Test
    void aDenyOverridesAnAllowForItsOperationOnly() throws Exception {
        admin.createTopics(List.of(new NewTopic("secret-x", 1, (short) 1), new NewTopic("open-x", 1, (short) 1)))
                .all().get(30, TimeUnit.SECONDS);
        awaitTopic("secret-x");
        awaitTopic("open-x");
        produceAsAdmin("secret-x", 1);
        produceAsAdmin("open-x", 1);
        Set<AclBinding> acls = Set.of(
                binding(ResourceType.TOPIC, "*", PatternType.LITERAL, ALICE, ALL, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "secret-", PatternType.PREFIXED, ALICE, READ, AclPermissionType.DENY),
                binding(ResourceType.TOPIC, "open-", PatternType.PREFIXED, ALICE, WRITE, AclPermissionType.DENY));
        admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        awaitAclsOnEveryBroker(acls);

        try (Case c = new Case("deny")) {
            RawClient atSecret = c.aliceAtLeader("secret-x");
            assertThat(fetch(atSecret, topicId("secret-x"), "secret-x")).as("DENY READ wins over ALLOW ALL")
                    .containsExactly(TOPIC_AUTHORIZATION_FAILED);
            assertThat(produce(atSecret, "secret-x", null, records())).as("DENY READ leaves WRITE").containsExactly(NONE);
            assertThat(metadata(c.alice(1), "secret-x", false)).as("DENY READ leaves DESCRIBE").containsExactly(NONE);

            RawClient atOpen = c.aliceAtLeader("open-x");
            assertThat(fetch(atOpen, topicId("open-x"), "open-x")).as("DENY WRITE leaves READ").containsExactly(NONE);
            assertThat(produce(atOpen, "open-x", null, records())).as("DENY WRITE wins over ALLOW ALL")
                    .containsExactly(TOPIC_AUTHORIZATION_FAILED);
        }
        // A real consumer: reads "open-x", and is told it may not read "secret-x".
        assertThat(consumeAsAlice("open-x", 1)).hasSize(1);
        Properties props = client("alice");
        props.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<String, String> k = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            k.assign(List.of(new TopicPartition("secret-x", 0)));
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (System.nanoTime() < deadline) {
                    k.poll(Duration.ofMillis(200));
                }
            }).isInstanceOf(TopicAuthorizationException.class);
        }
    }

    /** StandardAuthorizer's implications: READ (or WRITE, DELETE, ALTER) implies DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; not the reverse. */
    @Test
    void readImpliesDescribeAndAlterConfigsImpliesDescribeConfigs() throws Exception {
        admin.createTopics(List.of(new NewTopic("implied-r", 1, (short) 1), new NewTopic("implied-ac", 1, (short) 1),
                new NewTopic("implied-d", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        for (String t : List.of("implied-r", "implied-ac", "implied-d")) {
            awaitTopic(t);
        }
        Set<AclBinding> acls = Set.of(
                binding(ResourceType.TOPIC, "implied-r", PatternType.LITERAL, ALICE, READ, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "implied-ac", PatternType.LITERAL, ALICE, ALTER_CONFIGS, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "implied-d", PatternType.LITERAL, ALICE, DESCRIBE, AclPermissionType.ALLOW));
        admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        awaitAclsOnEveryBroker(acls);

        try (Case c = new Case("implied")) {
            assertThat(metadata(c.alice(1), "implied-r", false)).as("READ implies DESCRIBE: Metadata").containsExactly(NONE);
            assertThat(listOffsets(c.aliceAtLeader("implied-r"), "implied-r")).as("READ implies DESCRIBE: ListOffsets").containsExactly(NONE);
            assertThat(describeConfigs(c.alice(1), ConfigResource.Type.TOPIC, "implied-ac")).as("ALTER_CONFIGS implies DESCRIBE_CONFIGS")
                    .containsExactly(NONE);
            assertThat(metadata(c.alice(1), "implied-ac", false)).as("ALTER_CONFIGS does not imply DESCRIBE")
                    .containsExactly(TOPIC_AUTHORIZATION_FAILED);
            assertThat(fetch(c.aliceAtLeader("implied-d"), topicId("implied-d"), "implied-d")).as("DESCRIBE does not imply READ")
                    .containsExactly(TOPIC_AUTHORIZATION_FAILED);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // 4. An ACL applies on every broker within a second
    // ---------------------------------------------------------------------------------------------

    /**
     * Created through broker 1, alice's DESCRIBE applies on both brokers within a second; deleted
     * through broker 2, it stops applying on both within a second. Measured from the request.
     */
    @Test
    void anAclChangedThroughOneBrokerAppliesOnEveryBrokerWithinASecond() throws Exception {
        String topic = "acl-spread";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        awaitTopic(topic);
        AclBinding describe = binding(ResourceType.TOPIC, topic, PatternType.LITERAL, ALICE, DESCRIBE, AclPermissionType.ALLOW);
        try (Case c = new Case("spread")) {
            for (int b : BROKERS) {
                assertThat(metadata(c.alice(b), topic, false)).as("broker %d before", b).containsExactly(TOPIC_AUTHORIZATION_FAILED);
            }

            long created = System.nanoTime();
            var r = (CreateAclsResponse) adminAt(1).send(ApiKeys.CREATE_ACLS, max(ApiKeys.CREATE_ACLS),
                    new CreateAclsRequestData().setCreations(List.of(CreateAclsRequest.aclCreation(describe))));
            assertThat(r.data().results()).extracting(x -> Errors.forCode(x.errorCode())).containsExactly(NONE);
            Map<Integer, Long> appliedMs = msUntilEveryBrokerAnswers(c, topic, NONE, created);
            assertThat(appliedMs).as("ms from CreateAcls at broker 1 until alice is authorized").allSatisfy((b, ms) ->
                    assertThat(ms).as("broker %d", b).isLessThanOrEqualTo(1_000));

            long deleted = System.nanoTime();
            var d = (DeleteAclsResponse) adminAt(2).send(ApiKeys.DELETE_ACLS, max(ApiKeys.DELETE_ACLS),
                    new DeleteAclsRequestData().setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(describe.toFilter()))));
            assertThat(d.data().filterResults()).singleElement().satisfies(f -> {
                assertThat(Errors.forCode(f.errorCode())).isEqualTo(NONE);
                assertThat(f.matchingAcls()).hasSize(1);
            });
            Map<Integer, Long> revokedMs = msUntilEveryBrokerAnswers(c, topic, TOPIC_AUTHORIZATION_FAILED, deleted);
            assertThat(revokedMs).as("ms from DeleteAcls at broker 2 until alice is refused").allSatisfy((b, ms) ->
                    assertThat(ms).as("broker %d", b).isLessThanOrEqualTo(1_000));
        }
    }

    /** Polls alice's Metadata for {@code topic} on every broker every 50 ms until each answers {@code expected} (at most 5 s). */
    static Map<Integer, Long> msUntilEveryBrokerAnswers(Case c, String topic, Errors expected, long since) throws Exception {
        Map<Integer, Long> seen = new LinkedHashMap<>();
        long deadline = since + ACL_WAIT.toNanos();
        while (seen.size() < BROKERS.length && System.nanoTime() < deadline) {
            for (int b : BROKERS) {
                if (!seen.containsKey(b) && metadata(c.alice(b), topic, false).equals(List.of(expected))) {
                    seen.put(b, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
                }
            }
            Thread.sleep(50);
        }
        assertThat(seen.keySet()).as("brokers answering %s within %s (logs: %s)", expected, ACL_WAIT, cluster.logDir())
                .containsExactlyInAnyOrder(1, 2);
        return seen;
    }

    // ---------------------------------------------------------------------------------------------
    // The table's parts
    // ---------------------------------------------------------------------------------------------

    /** One row: an API (and which of its checks), the set-up, the ACLs alice starts with, those that grant it, and both answers. */
    record Row<T>(String api, List<Step> setup, List<Acl> given, List<Acl> grants, Probe<T> probe, Expect<T> denied, Expect<T> granted) {
        String key() {
            return api.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
        }

        Row<T> setup(Step... steps) {
            return new Row<>(api, List.of(steps), given, grants, probe, denied, granted);
        }

        Row<T> given(Acl... acls) {
            return new Row<>(api, setup, List.of(acls), grants, probe, denied, granted);
        }

        Row<T> grants(Acl... acls) {
            return new Row<>(api, setup, given, List.of(acls), probe, denied, granted);
        }

        Row<T> denied(Expect<T> e) {
            return new Row<>(api, setup, given, grants, probe, e, granted);
        }

        Row<T> granted(Expect<T> e) {
            return new Row<>(api, setup, given, grants, probe, denied, e);
        }

        @Override
        public String toString() {
            return api + (given.isEmpty() ? "" : ", given " + given) + ": " + denied + "; with " + grants + ": " + granted;
        }
    }

    static Row<List<Errors>> codes(String api, Probe<List<Errors>> probe) {
        return new Row<>(api, List.of(), List.of(), List.of(), probe, null, null);
    }

    @FunctionalInterface
    interface Probe<T> {
        /** Alice's request; the error codes where the row's check answers, in the response's order. */
        T run(Case c) throws Exception;
    }

    @FunctionalInterface
    interface Step {
        void run(Case c) throws Exception;
    }

    /** An ALLOW for alice from any host; {@code {key}} in the name is the row's key. */
    record Acl(ResourceType type, String name, PatternType pattern, AclOperation operation) {
        AclBinding binding(Case c) {
            return AclIT.binding(type, c.resolve(name), pattern, ALICE, operation, AclPermissionType.ALLOW);
        }

        @Override
        public String toString() {
            return operation + " " + type + " " + name + (pattern == PatternType.PREFIXED ? "*" : "");
        }
    }

    static Acl topic(AclOperation op) {
        return new Acl(ResourceType.TOPIC, "acl-{key}", PatternType.LITERAL, op);
    }

    static Acl shared(AclOperation op) {
        return new Acl(ResourceType.TOPIC, SHARED, PatternType.LITERAL, op);
    }

    static Acl txnTopic(AclOperation op) {
        return new Acl(ResourceType.TOPIC, TXN_TOPIC, PatternType.LITERAL, op);
    }

    static Acl group(AclOperation op) {
        return new Acl(ResourceType.GROUP, "group-{key}", PatternType.LITERAL, op);
    }

    static Acl txn(AclOperation op) {
        return new Acl(ResourceType.TRANSACTIONAL_ID, "txn-{key}", PatternType.LITERAL, op);
    }

    static Acl cluster(AclOperation op) {
        return new Acl(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, op);
    }

    record Expect<T>(String text, Predicate<T> test) {
        @Override
        public String toString() {
            return text;
        }
    }

    static Expect<List<Errors>> every(Errors e) {
        return new Expect<>(e + " (" + e.code() + ") everywhere", l -> !l.isEmpty() && l.stream().allMatch(x -> x == e));
    }

    static Expect<List<Errors>> exactly(Errors... es) {
        return new Expect<>(Arrays.toString(es), l -> l.equals(List.of(es)));
    }

    static Expect<List<Errors>> oneOf(Errors... es) {
        return new Expect<>("each one of " + Arrays.toString(es), l -> !l.isEmpty() && List.of(es).containsAll(l));
    }

    /** Silently left out of the answer, as Apache filters what the principal may not describe. */
    static Expect<List<Errors>> absent() {
        return new Expect<>("left out", List::isEmpty);
    }

    static Expect<List<Errors>> listed() {
        return new Expect<>("listed", l -> l.equals(List.of(NONE)));
    }

    static final Set<Errors> AUTHORIZATION_ERRORS = Set.of(TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED,
            CLUSTER_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED);

    /** An answer (whatever its codes) with no authorization error in it. */
    static Expect<List<Errors>> noAuthorizationError() {
        return new Expect<>("no authorization error", l -> !l.isEmpty() && l.stream().noneMatch(AUTHORIZATION_ERRORS::contains));
    }

    /** The top-level NONE, and no authorization error below it (whatever else each entry answers). */
    static Expect<List<Errors>> firstNoneAndNoAuthorizationError() {
        return new Expect<>("NONE, then no authorization error", l -> !l.isEmpty() && l.get(0) == NONE
                && l.stream().noneMatch(AUTHORIZATION_ERRORS::contains));
    }

    static Expect<Integer> equalTo(int value) {
        return new Expect<>(Integer.toString(value), v -> v == value);
    }

    /** One row's names and what its set-up made: a topic, group and transactional id of its own. */
    static final class Case implements AutoCloseable {
        final String key;
        private final Map<Integer, RawClient> alice = new HashMap<>();
        long producerId = -1;
        short epoch = -1;
        String memberId = "";
        int generation = -1;

        Case(String key) {
            this.key = key;
        }

        String topic() {
            return "acl-" + key;
        }

        String group() {
            return "group-" + key;
        }

        String txn() {
            return "txn-" + key;
        }

        String resolve(String name) {
            return name.replace("{key}", key);
        }

        RawClient alice(int broker) throws IOException {
            RawClient c = alice.get(broker);
            if (c == null) {
                c = login("alice", broker);
                alice.put(broker, c);
            }
            return c;
        }

        RawClient aliceAtLeader(String topic) throws Exception {
            return alice(leader(topic));
        }

        RawClient aliceAtGroupCoordinator() throws Exception {
            return alice(coordinator(group(), (byte) 0));
        }

        RawClient aliceAtTxnCoordinator() throws Exception {
            return alice(coordinator(txn(), (byte) 1));
        }

        @Override
        public void close() throws IOException {
            for (RawClient c : alice.values()) {
                c.close();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Set-up steps, as the super user
    // ---------------------------------------------------------------------------------------------

    static void ownTopic(Case c) throws Exception {
        admin.createTopics(List.of(new NewTopic(c.topic(), 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        awaitTopic(c.topic());
    }

    static void ownTopicWithRecords(Case c) throws Exception {
        ownTopic(c);
        produceAsAdmin(c.topic(), 2);
    }

    /** The row's group, empty, with an offset committed on the shared topic. */
    static void committedOffset(Case c) throws Exception {
        var req = new OffsetCommitRequestData().setGroupId(c.group()).setGenerationIdOrMemberEpoch(-1).setMemberId("");
        req.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(SHARED).setPartitions(List.of(
                new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
        var r = (OffsetCommitResponse) adminAt(coordinator(c.group(), (byte) 0)).send(ApiKeys.OFFSET_COMMIT, max(ApiKeys.OFFSET_COMMIT), req);
        assertThat(codes(r.data().topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode()))))
                .as("set-up commit").containsExactly(NONE);
    }

    /** The row's group, stable with one member (the super user's), whose id and generation alice then uses. */
    static void stableMember(Case c) throws Exception {
        RawClient wire = adminAt(coordinator(c.group(), (byte) 0));
        var protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription()));
        var req = new JoinGroupRequestData().setGroupId(c.group()).setMemberId("").setSessionTimeoutMs(30_000)
                .setRebalanceTimeoutMs(30_000).setProtocolType("consumer").setProtocols(protocols);
        var first = ((JoinGroupResponse) wire.send(ApiKeys.JOIN_GROUP, max(ApiKeys.JOIN_GROUP), req)).data();
        assertThat(Errors.forCode(first.errorCode())).as("set-up join").isEqualTo(MEMBER_ID_REQUIRED);
        var joined = ((JoinGroupResponse) wire.send(ApiKeys.JOIN_GROUP, max(ApiKeys.JOIN_GROUP), req.setMemberId(first.memberId()))).data();
        assertThat(Errors.forCode(joined.errorCode())).as("set-up join").isEqualTo(NONE);
        var sync = new SyncGroupRequestData().setGroupId(c.group()).setGenerationId(joined.generationId()).setMemberId(joined.memberId())
                .setProtocolType("consumer").setProtocolName("range");
        sync.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(joined.memberId()).setAssignment(new byte[0]));
        var synced = ((SyncGroupResponse) wire.send(ApiKeys.SYNC_GROUP, max(ApiKeys.SYNC_GROUP), sync)).data();
        assertThat(Errors.forCode(synced.errorCode())).as("set-up sync").isEqualTo(NONE);
        c.memberId = joined.memberId();
        c.generation = joined.generationId();
    }

    static byte[] subscription() {
        return Utils.toArray(ConsumerProtocol.serializeSubscription(new ConsumerPartitionAssignor.Subscription(List.of(SHARED))));
    }

    /** The row's transactional id, initialized by the super user: its producer id and epoch. */
    static void openTxn(Case c) throws Exception {
        RawClient wire = adminAt(coordinator(c.txn(), (byte) 1));
        InitProducerIdResponse[] init = new InitProducerIdResponse[1];
        // A coordinator loading its slot answers retriably at first.
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).pollInSameThread().until(() -> {
            init[0] = (InitProducerIdResponse) wire.send(ApiKeys.INIT_PRODUCER_ID, max(ApiKeys.INIT_PRODUCER_ID),
                    new InitProducerIdRequestData().setTransactionalId(c.txn()).setTransactionTimeoutMs(60_000)
                            .setProducerId(-1).setProducerEpoch((short) -1));
            return init[0].error() == NONE || !(init[0].error().exception() instanceof org.apache.kafka.common.errors.RetriableException);
        });
        assertThat(init[0].error()).as("set-up InitProducerId").isEqualTo(NONE);
        c.producerId = init[0].data().producerId();
        c.epoch = init[0].data().producerEpoch();
    }

    /** An open transaction with the transaction topic's partition in it. */
    static void txnWithPartition(Case c) throws Exception {
        openTxn(c);
        assertThat(addPartitionsToTxn(adminAt(coordinator(c.txn(), (byte) 1)), c)).as("set-up AddPartitionsToTxn").containsExactly(NONE);
    }

    /** An open transaction with the row's group's offsets in it. */
    static void txnWithOffsets(Case c) throws Exception {
        openTxn(c);
        var r = (AddOffsetsToTxnResponse) adminAt(coordinator(c.txn(), (byte) 1)).send(ApiKeys.ADD_OFFSETS_TO_TXN,
                max(ApiKeys.ADD_OFFSETS_TO_TXN), addOffsetsToTxnRequest(c));
        assertThat(Errors.forCode(r.data().errorCode())).as("set-up AddOffsetsToTxn").isEqualTo(NONE);
    }

    // ---------------------------------------------------------------------------------------------
    // Alice's requests: each returns the codes where its check answers
    // ---------------------------------------------------------------------------------------------

    static List<Errors> produce(Case c) throws Exception {
        return produce(c.aliceAtLeader(SHARED), SHARED, null, records());
    }

    static List<Errors> produceTransactional(Case c) throws Exception {
        MemoryRecords batch = MemoryRecords.withTransactionalRecords(CompressionType.NONE, c.producerId, c.epoch, 0,
                new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)));
        return produce(c.aliceAtLeader(TXN_TOPIC), TXN_TOPIC, c.txn(), batch);
    }

    static MemoryRecords records() {
        return MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord("k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8)));
    }

    static List<Errors> produce(RawClient wire, String topic, String transactionalId, MemoryRecords records) throws IOException {
        var req = new ProduceRequestData().setTransactionalId(transactionalId).setAcks((short) -1).setTimeoutMs(30_000);
        req.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
        var r = (ProduceResponse) wire.send(ApiKeys.PRODUCE, max(ApiKeys.PRODUCE), req);
        return codes(r.data().responses().stream().flatMap(t -> t.partitionResponses().stream().map(p -> p.errorCode())));
    }

    static List<Errors> fetch(Case c) throws Exception {
        return fetch(c.aliceAtLeader(SHARED), sharedId, SHARED);
    }

    static List<Errors> fetch(RawClient wire, Uuid topicId, String topic) throws IOException {
        var req = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setSessionEpoch(-1);
        var t = new FetchRequestData.FetchTopic().setTopicId(topicId).setTopic(topic);
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
        req.topics().add(t);
        var r = (FetchResponse) wire.send(ApiKeys.FETCH, max(ApiKeys.FETCH), req);
        assertThat(Errors.forCode(r.data().errorCode())).as("fetch top level").isEqualTo(NONE);
        return codes(r.data().responses().stream().flatMap(x -> x.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> listOffsets(Case c) throws Exception {
        return listOffsets(c.aliceAtLeader(SHARED), SHARED);
    }

    static List<Errors> listOffsets(RawClient wire, String topic) throws IOException {
        var req = new ListOffsetsRequestData().setReplicaId(-1);
        req.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName(topic).setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1))));
        var r = (ListOffsetsResponse) wire.send(ApiKeys.LIST_OFFSETS, max(ApiKeys.LIST_OFFSETS), req);
        return codes(r.data().topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> metadataOfShared(Case c) throws Exception {
        return metadata(c.alice(1), SHARED, false);
    }

    static List<Errors> metadataAutoCreating(Case c) throws Exception {
        return metadata(c.alice(1), c.topic(), true);
    }

    /** The named topic's code (none when the answer leaves it out). */
    static List<Errors> metadata(RawClient wire, String topic, boolean autoCreate) throws IOException {
        var req = new MetadataRequestData().setAllowAutoTopicCreation(autoCreate);
        req.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(topic));
        var r = (MetadataResponse) wire.send(ApiKeys.METADATA, max(ApiKeys.METADATA), req);
        var t = r.data().topics().find(topic);
        return t == null ? List.of() : List.of(Errors.forCode(t.errorCode()));
    }

    static List<Errors> metadataOfAll(Case c) throws Exception {
        var r = (MetadataResponse) c.alice(1).send(ApiKeys.METADATA, max(ApiKeys.METADATA),
                new MetadataRequestData().setTopics(null).setAllowAutoTopicCreation(false));
        var t = r.data().topics().find(SHARED);
        return t == null ? List.of() : List.of(Errors.forCode(t.errorCode()));
    }

    static List<Errors> offsetForLeaderEpoch(Case c) throws Exception {
        var req = new OffsetForLeaderEpochRequestData().setReplicaId(-1);
        var t = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(SHARED);
        t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setCurrentLeaderEpoch(-1)
                .setLeaderEpoch(-1));
        req.topics().add(t);
        var r = (OffsetsForLeaderEpochResponse) c.aliceAtLeader(SHARED).send(ApiKeys.OFFSET_FOR_LEADER_EPOCH,
                max(ApiKeys.OFFSET_FOR_LEADER_EPOCH), req);
        return codes(r.data().topics().stream().flatMap(x -> x.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> deleteRecords(Case c) throws Exception {
        var req = new DeleteRecordsRequestData().setTimeoutMs(30_000);
        req.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName(c.topic()).setPartitions(List.of(
                new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(1))));
        var r = (DeleteRecordsResponse) c.aliceAtLeader(c.topic()).send(ApiKeys.DELETE_RECORDS, max(ApiKeys.DELETE_RECORDS), req);
        return codes(r.data().topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> describeProducers(Case c) throws Exception {
        var req = new DescribeProducersRequestData();
        req.topics().add(new DescribeProducersRequestData.TopicRequest().setName(SHARED).setPartitionIndexes(List.of(0)));
        var r = (DescribeProducersResponse) c.aliceAtLeader(SHARED).send(ApiKeys.DESCRIBE_PRODUCERS, max(ApiKeys.DESCRIBE_PRODUCERS), req);
        return codes(r.data().topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> findCoordinator(Case c, String key, byte keyType) throws Exception {
        var r = (FindCoordinatorResponse) c.alice(1).send(ApiKeys.FIND_COORDINATOR, max(ApiKeys.FIND_COORDINATOR),
                new FindCoordinatorRequestData().setKeyType(keyType).setCoordinatorKeys(List.of(key)));
        return codes(r.data().coordinators().stream().map(x -> x.errorCode()));
    }

    static List<Errors> offsetCommit(Case c) throws Exception {
        var req = new OffsetCommitRequestData().setGroupId(c.group()).setGenerationIdOrMemberEpoch(-1).setMemberId("");
        req.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(SHARED).setPartitions(List.of(
                new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
        var r = (OffsetCommitResponse) c.aliceAtGroupCoordinator().send(ApiKeys.OFFSET_COMMIT, max(ApiKeys.OFFSET_COMMIT), req);
        return codes(r.data().topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup offsetFetch(Case c, boolean namedTopics)
            throws Exception {
        var group = new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(c.group()).setTopics(namedTopics
                ? List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(SHARED).setPartitionIndexes(List.of(0)))
                : null);
        var r = (OffsetFetchResponse) c.aliceAtGroupCoordinator().send(ApiKeys.OFFSET_FETCH, max(ApiKeys.OFFSET_FETCH),
                new OffsetFetchRequestData().setGroups(List.of(group)));
        return r.data().groups().get(0);
    }

    static List<Errors> offsetFetchGroupError(Case c) throws Exception {
        return List.of(Errors.forCode(offsetFetch(c, true).errorCode()));
    }

    /** The shared topic's partitions in the answer (none when left out); a group error instead, if any. */
    static List<Errors> offsetFetchPartitions(Case c, boolean namedTopics) throws Exception {
        var g = offsetFetch(c, namedTopics);
        if (g.errorCode() != 0) {
            return List.of(Errors.forCode(g.errorCode()));
        }
        return codes(g.topics().stream().filter(t -> t.name().equals(SHARED)).flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> joinGroup(Case c) throws Exception {
        var protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription()));
        var r = (JoinGroupResponse) c.aliceAtGroupCoordinator().send(ApiKeys.JOIN_GROUP, max(ApiKeys.JOIN_GROUP), new JoinGroupRequestData()
                .setGroupId(c.group()).setMemberId("").setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(30_000)
                .setProtocolType("consumer").setProtocols(protocols));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> syncGroup(Case c) throws Exception {
        var r = (SyncGroupResponse) c.aliceAtGroupCoordinator().send(ApiKeys.SYNC_GROUP, max(ApiKeys.SYNC_GROUP), new SyncGroupRequestData()
                .setGroupId(c.group()).setGenerationId(c.generation).setMemberId(c.memberId).setProtocolType("consumer")
                .setProtocolName("range"));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> heartbeat(Case c) throws Exception {
        var r = (HeartbeatResponse) c.aliceAtGroupCoordinator().send(ApiKeys.HEARTBEAT, max(ApiKeys.HEARTBEAT), new HeartbeatRequestData()
                .setGroupId(c.group()).setGenerationId(c.generation).setMemberId(c.memberId));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> leaveGroup(Case c) throws Exception {
        var req = new LeaveGroupRequestData().setGroupId(c.group());
        req.members().add(new LeaveGroupRequestData.MemberIdentity().setMemberId(c.memberId).setReason("acl"));
        var r = (LeaveGroupResponse) c.aliceAtGroupCoordinator().send(ApiKeys.LEAVE_GROUP, max(ApiKeys.LEAVE_GROUP), req);
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> describeGroups(Case c) throws Exception {
        var r = (DescribeGroupsResponse) c.aliceAtGroupCoordinator().send(ApiKeys.DESCRIBE_GROUPS, max(ApiKeys.DESCRIBE_GROUPS),
                new DescribeGroupsRequestData().setGroups(List.of(c.group())).setIncludeAuthorizedOperations(true));
        return codes(r.data().groups().stream().map(g -> g.errorCode()));
    }

    /** The row's group as listed (NONE) or left out (nothing); a top-level error instead, if any. */
    static List<Errors> listGroups(Case c) throws Exception {
        var r = (ListGroupsResponse) c.aliceAtGroupCoordinator().send(ApiKeys.LIST_GROUPS, max(ApiKeys.LIST_GROUPS), new ListGroupsRequestData());
        if (r.data().errorCode() != 0) {
            return List.of(Errors.forCode(r.data().errorCode()));
        }
        return r.data().groups().stream().anyMatch(g -> g.groupId().equals(c.group())) ? List.of(NONE) : List.of();
    }

    static List<Errors> deleteGroups(Case c) throws Exception {
        var r = (DeleteGroupsResponse) c.aliceAtGroupCoordinator().send(ApiKeys.DELETE_GROUPS, max(ApiKeys.DELETE_GROUPS),
                new DeleteGroupsRequestData().setGroupsNames(List.of(c.group())));
        return codes(r.data().results().stream().map(x -> x.errorCode()));
    }

    static org.apache.kafka.common.message.OffsetDeleteResponseData offsetDelete(Case c) throws Exception {
        var req = new OffsetDeleteRequestData().setGroupId(c.group());
        var t = new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(SHARED);
        t.partitions().add(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0));
        req.topics().add(t);
        return ((OffsetDeleteResponse) c.aliceAtGroupCoordinator().send(ApiKeys.OFFSET_DELETE, max(ApiKeys.OFFSET_DELETE), req)).data();
    }

    static List<Errors> offsetDeleteTopLevel(Case c) throws Exception {
        return List.of(Errors.forCode(offsetDelete(c).errorCode()));
    }

    static List<Errors> offsetDeletePartitions(Case c) throws Exception {
        var r = offsetDelete(c);
        if (r.errorCode() != 0) {
            return List.of(Errors.forCode(r.errorCode()));
        }
        return codes(r.topics().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> initProducerIdTransactional(Case c) throws Exception {
        var r = (InitProducerIdResponse) c.aliceAtTxnCoordinator().send(ApiKeys.INIT_PRODUCER_ID, max(ApiKeys.INIT_PRODUCER_ID),
                new InitProducerIdRequestData().setTransactionalId(c.txn()).setTransactionTimeoutMs(60_000).setProducerId(-1)
                        .setProducerEpoch((short) -1));
        return List.of(r.error());
    }

    static List<Errors> initProducerIdIdempotent(Case c) throws Exception {
        var r = (InitProducerIdResponse) c.alice(1).send(ApiKeys.INIT_PRODUCER_ID, max(ApiKeys.INIT_PRODUCER_ID),
                new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1)
                        .setProducerEpoch((short) -1));
        return List.of(r.error());
    }

    static List<Errors> addPartitionsToTxn(Case c) throws Exception {
        return addPartitionsToTxn(c.aliceAtTxnCoordinator(), c);
    }

    /** AddPartitionsToTxn v3 (the client's form) of the transaction topic's partition to the row's transaction. */
    static List<Errors> addPartitionsToTxn(RawClient wire, Case c) throws IOException {
        var topics = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TXN_TOPIC).setPartitions(List.of(0)));
        var r = (AddPartitionsToTxnResponse) wire.send(ApiKeys.ADD_PARTITIONS_TO_TXN, (short) 3, new AddPartitionsToTxnRequestData()
                .setV3AndBelowTransactionalId(c.txn()).setV3AndBelowProducerId(c.producerId).setV3AndBelowProducerEpoch(c.epoch)
                .setV3AndBelowTopics(topics));
        return new ArrayList<>(r.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID).values());
    }

    static AddOffsetsToTxnRequestData addOffsetsToTxnRequest(Case c) {
        return new AddOffsetsToTxnRequestData().setTransactionalId(c.txn()).setProducerId(c.producerId).setProducerEpoch(c.epoch)
                .setGroupId(c.group());
    }

    static List<Errors> addOffsetsToTxn(Case c) throws Exception {
        var r = (AddOffsetsToTxnResponse) c.aliceAtTxnCoordinator().send(ApiKeys.ADD_OFFSETS_TO_TXN, max(ApiKeys.ADD_OFFSETS_TO_TXN),
                addOffsetsToTxnRequest(c));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> txnOffsetCommit(Case c) throws Exception {
        var req = new TxnOffsetCommitRequestData().setTransactionalId(c.txn()).setGroupId(c.group()).setProducerId(c.producerId)
                .setProducerEpoch(c.epoch).setGenerationId(-1).setMemberId("");
        req.topics().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(SHARED).setPartitions(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
        var r = (TxnOffsetCommitResponse) c.aliceAtGroupCoordinator().send(ApiKeys.TXN_OFFSET_COMMIT, max(ApiKeys.TXN_OFFSET_COMMIT), req);
        return new ArrayList<>(r.errors().values());
    }

    static List<Errors> endTxn(Case c) throws Exception {
        var r = (EndTxnResponse) c.aliceAtTxnCoordinator().send(ApiKeys.END_TXN, max(ApiKeys.END_TXN), new EndTxnRequestData()
                .setTransactionalId(c.txn()).setProducerId(c.producerId).setProducerEpoch(c.epoch).setCommitted(false));
        return List.of(r.error());
    }

    /** An abort marker for a producer no one runs, as a transaction coordinator (a broker) would send it. */
    static List<Errors> writeTxnMarkers(Case c) throws Exception {
        var req = new WriteTxnMarkersRequestData();
        req.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(999_999).setProducerEpoch((short) 0)
                .setTransactionResult(false).setCoordinatorEpoch(0).setTopics(List.of(
                        new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(TXN_TOPIC).setPartitionIndexes(List.of(0)))));
        var r = (WriteTxnMarkersResponse) c.aliceAtLeader(TXN_TOPIC).send(ApiKeys.WRITE_TXN_MARKERS, max(ApiKeys.WRITE_TXN_MARKERS), req);
        return r.errorsByProducerId().values().stream().flatMap(m -> m.values().stream()).toList();
    }

    static org.apache.kafka.common.message.DescribeTransactionsResponseData.TransactionState describeTransaction(Case c) throws Exception {
        var r = (DescribeTransactionsResponse) c.aliceAtTxnCoordinator().send(ApiKeys.DESCRIBE_TRANSACTIONS,
                max(ApiKeys.DESCRIBE_TRANSACTIONS), new DescribeTransactionsRequestData().setTransactionalIds(List.of(c.txn())));
        return r.data().transactionStates().get(0);
    }

    static List<Errors> describeTransactionsError(Case c) throws Exception {
        return List.of(Errors.forCode(describeTransaction(c).errorCode()));
    }

    /** The transaction topic as listed in the transaction (NONE) or left out (nothing); the transaction's error instead, if any. */
    static List<Errors> describeTransactionsTopics(Case c) throws Exception {
        var state = describeTransaction(c);
        if (state.errorCode() != 0) {
            return List.of(Errors.forCode(state.errorCode()));
        }
        return state.topics().stream().anyMatch(t -> t.topic().equals(TXN_TOPIC)) ? List.of(NONE) : List.of();
    }

    static List<Errors> listTransactions(Case c) throws Exception {
        var r = (ListTransactionsResponse) c.aliceAtTxnCoordinator().send(ApiKeys.LIST_TRANSACTIONS, max(ApiKeys.LIST_TRANSACTIONS),
                new ListTransactionsRequestData());
        if (r.data().errorCode() != 0) {
            return List.of(Errors.forCode(r.data().errorCode()));
        }
        return r.data().transactionStates().stream().anyMatch(t -> t.transactionalId().equals(c.txn())) ? List.of(NONE) : List.of();
    }

    /** The topic's error code, then its topicConfigErrorCode (v5+: 29 when the configs may not be described). */
    static List<Errors> createTopics(Case c) throws Exception {
        var req = new CreateTopicsRequestData().setTimeoutMs(30_000);
        req.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(c.topic()).setNumPartitions(1).setReplicationFactor((short) 1));
        var r = (CreateTopicsResponse) c.alice(1).send(ApiKeys.CREATE_TOPICS, max(ApiKeys.CREATE_TOPICS), req);
        var t = r.data().topics().find(c.topic());
        return List.of(Errors.forCode(t.errorCode()), Errors.forCode(t.topicConfigErrorCode()));
    }

    /** The row's topic named twice, one copy with 0 partitions: both INVALID_REQUEST, and no topic (else UNKNOWN_SERVER_ERROR). */
    static List<Errors> createTopicsTwice(Case c) throws Exception {
        var req = new CreateTopicsRequestData().setTimeoutMs(30_000);
        req.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(c.topic()).setNumPartitions(0).setReplicationFactor((short) 1));
        req.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(c.topic()).setNumPartitions(1).setReplicationFactor((short) 1));
        var r = (CreateTopicsResponse) c.alice(1).send(ApiKeys.CREATE_TOPICS, max(ApiKeys.CREATE_TOPICS), req);
        if (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(c.topic())) {
            return List.of(Errors.UNKNOWN_SERVER_ERROR);
        }
        return codes(r.data().topics().stream().map(x -> x.errorCode()));
    }

    static List<Errors> deleteTopics(Case c) throws Exception {
        var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
        req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(c.topic()));
        var r = (DeleteTopicsResponse) c.alice(1).send(ApiKeys.DELETE_TOPICS, max(ApiKeys.DELETE_TOPICS), req);
        return codes(r.data().responses().stream().map(x -> x.errorCode()));
    }

    /** By id alone: refused without DELETE, with the name withheld (alice may not describe it either). */
    static List<Errors> deleteTopicsById(Case c) throws Exception {
        Uuid id = admin.describeTopics(List.of(c.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(c.topic()).topicId();
        var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
        req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(null).setTopicId(id));
        var r = (DeleteTopicsResponse) c.alice(1).send(ApiKeys.DELETE_TOPICS, max(ApiKeys.DELETE_TOPICS), req);
        for (var x : r.data().responses()) {
            if (x.errorCode() == TOPIC_AUTHORIZATION_FAILED.code() && x.name() != null) {
                return List.of(Errors.UNKNOWN_SERVER_ERROR);
            }
        }
        return codes(r.data().responses().stream().map(x -> x.errorCode()));
    }

    /** The row's own topic by name with the shared topic's id: the shared topic must survive (else UNKNOWN_SERVER_ERROR). */
    static List<Errors> deleteTopicsByNameAndSharedId(Case c) throws Exception {
        var req = new DeleteTopicsRequestData().setTimeoutMs(30_000);
        req.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(c.topic()).setTopicId(sharedId));
        var r = (DeleteTopicsResponse) c.alice(1).send(ApiKeys.DELETE_TOPICS, max(ApiKeys.DELETE_TOPICS), req);
        if (!admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(SHARED)) {
            return List.of(Errors.UNKNOWN_SERVER_ERROR);
        }
        return codes(r.data().responses().stream().map(x -> x.errorCode()));
    }

    static List<Errors> createPartitions(Case c) throws Exception {
        var req = new CreatePartitionsRequestData().setTimeoutMs(30_000);
        req.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(c.topic()).setCount(2).setAssignments(null));
        var r = (CreatePartitionsResponse) c.alice(1).send(ApiKeys.CREATE_PARTITIONS, max(ApiKeys.CREATE_PARTITIONS), req);
        return codes(r.data().results().stream().map(x -> x.errorCode()));
    }

    static List<Errors> describeConfigsOfShared(Case c) throws Exception {
        return describeConfigs(c.alice(1), ConfigResource.Type.TOPIC, SHARED);
    }

    /** Broker 1's configuration, asked of broker 1. */
    static List<Errors> describeConfigsOfBroker(Case c) throws Exception {
        return describeConfigs(c.alice(1), ConfigResource.Type.BROKER, "1");
    }

    static List<Errors> describeConfigs(RawClient wire, ConfigResource.Type type, String name) throws IOException {
        var req = new DescribeConfigsRequestData();
        req.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(type.id()).setResourceName(name)
                .setConfigurationKeys(null));
        var r = (DescribeConfigsResponse) wire.send(ApiKeys.DESCRIBE_CONFIGS, max(ApiKeys.DESCRIBE_CONFIGS), req);
        return codes(r.data().results().stream().map(x -> x.errorCode()));
    }

    static List<Errors> alterConfigs(Case c) throws Exception {
        var req = new AlterConfigsRequestData();
        var res = new AlterConfigsRequestData.AlterConfigsResource().setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(c.topic());
        res.configs().add(new AlterConfigsRequestData.AlterableConfig().setName("retention.ms").setValue("100000"));
        req.resources().add(res);
        var r = (AlterConfigsResponse) c.alice(1).send(ApiKeys.ALTER_CONFIGS, max(ApiKeys.ALTER_CONFIGS), req);
        return codes(r.data().responses().stream().map(x -> x.errorCode()));
    }

    static List<Errors> incrementalAlterConfigsOfTopic(Case c) throws Exception {
        return incrementalAlterConfigs(c.alice(1), ConfigResource.Type.TOPIC, c.topic(), "retention.ms", "100000");
    }

    /** A logger of broker 1, asked of broker 1 (Apache changes loggers on the broker, never forwarded). */
    static List<Errors> incrementalAlterConfigsOfLogger(Case c) throws Exception {
        return incrementalAlterConfigs(c.alice(1), ConfigResource.Type.BROKER_LOGGER, "1", "dev.kaas.broker.storage.LogCleaner", "INFO");
    }

    static List<Errors> incrementalAlterConfigs(RawClient wire, ConfigResource.Type type, String name, String key, String value)
            throws IOException {
        var req = new IncrementalAlterConfigsRequestData();
        var res = new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType(type.id()).setResourceName(name);
        res.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(key).setConfigOperation((byte) 0).setValue(value));
        req.resources().add(res);
        var r = (IncrementalAlterConfigsResponse) wire.send(ApiKeys.INCREMENTAL_ALTER_CONFIGS, max(ApiKeys.INCREMENTAL_ALTER_CONFIGS), req);
        return codes(r.data().responses().stream().map(x -> x.errorCode()));
    }

    static List<Errors> describeAcls(Case c) throws Exception {
        var r = (DescribeAclsResponse) c.alice(1).send(ApiKeys.DESCRIBE_ACLS, max(ApiKeys.DESCRIBE_ACLS),
                new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(max(ApiKeys.DESCRIBE_ACLS)).data());
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    /** Alice gives bob READ on a topic. */
    static List<Errors> createAcls(Case c) throws Exception {
        AclBinding forBob = binding(ResourceType.TOPIC, c.topic(), PatternType.LITERAL, "User:bob", READ, AclPermissionType.ALLOW);
        var r = (CreateAclsResponse) c.alice(1).send(ApiKeys.CREATE_ACLS, max(ApiKeys.CREATE_ACLS),
                new CreateAclsRequestData().setCreations(List.of(CreateAclsRequest.aclCreation(forBob))));
        return codes(r.data().results().stream().map(x -> x.errorCode()));
    }

    /** Alice removes bob's ACLs on a topic (there are none: a filter that matches nothing is still answered). */
    static List<Errors> deleteAcls(Case c) throws Exception {
        var filter = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, c.topic(), PatternType.LITERAL),
                new AccessControlEntryFilter("User:bob", null, AclOperation.ANY, AclPermissionType.ANY));
        var r = (DeleteAclsResponse) c.alice(1).send(ApiKeys.DELETE_ACLS, max(ApiKeys.DELETE_ACLS),
                new DeleteAclsRequestData().setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(filter))));
        return codes(r.data().filterResults().stream().map(x -> x.errorCode()));
    }

    /** The shared topic's partition "moved" to the data directory it is in, asked of its leader. */
    static List<Errors> alterReplicaLogDirs(Case c) throws Exception {
        var req = new AlterReplicaLogDirsRequestData();
        var dir = new AlterReplicaLogDirsRequestData.AlterReplicaLogDir().setPath(cluster.dataDir().toAbsolutePath().toString());
        dir.topics().add(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic().setName(SHARED).setPartitions(List.of(0)));
        req.dirs().add(dir);
        var r = (AlterReplicaLogDirsResponse) c.aliceAtLeader(SHARED).send(ApiKeys.ALTER_REPLICA_LOG_DIRS, max(ApiKeys.ALTER_REPLICA_LOG_DIRS), req);
        return codes(r.data().results().stream().flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    /** Before batching (v0-3): one key, its code at the top level. */
    static List<Errors> findCoordinatorSingle(Case c, String key, byte keyType, short version) throws Exception {
        var r = (FindCoordinatorResponse) c.alice(1).send(ApiKeys.FIND_COORDINATOR, version,
                new FindCoordinatorRequestData().setKey(key).setKeyType(keyType));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    /**
     * One group (v0-7): the top-level code from v2 when it is not NONE, else the shared topic's
     * partitions (none when left out).
     */
    static List<Errors> offsetFetchSingle(Case c, short version, boolean namedTopics) throws Exception {
        var req = new OffsetFetchRequestData().setGroupId(c.group()).setTopics(namedTopics
                ? List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(SHARED).setPartitionIndexes(List.of(0)))
                : null);
        var r = (OffsetFetchResponse) c.aliceAtGroupCoordinator().send(ApiKeys.OFFSET_FETCH, version, req);
        if (version >= 2 && r.data().errorCode() != 0) {
            return List.of(Errors.forCode(r.data().errorCode()));
        }
        return codes(r.data().topics().stream().filter(t -> t.name().equals(SHARED)).flatMap(t -> t.partitions().stream().map(p -> p.errorCode())));
    }

    /** Before the top-level code (v0-2): each log dir's code; a refusal answers no log dir at all. */
    static List<Errors> describeLogDirsBefore3(Case c, short version) throws Exception {
        var r = (DescribeLogDirsResponse) c.alice(1).send(ApiKeys.DESCRIBE_LOG_DIRS, version,
                new DescribeLogDirsRequestData().setTopics(null));
        return codes(r.data().results().stream().map(d -> d.errorCode()));
    }

    /** A fetch as broker 7's replica would send it (the replica id in ReplicaState from v15). */
    static List<Errors> followerFetch(Case c, short version) throws Exception {
        var req = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setSessionEpoch(-1);
        if (version >= 15) {
            req.setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(7).setReplicaEpoch(-1));
        } else {
            req.setReplicaId(7);
        }
        var t = new FetchRequestData.FetchTopic().setTopicId(sharedId).setTopic(SHARED);
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
        req.topics().add(t);
        var r = (FetchResponse) c.aliceAtLeader(SHARED).send(ApiKeys.FETCH, version, req);
        assertThat(Errors.forCode(r.data().errorCode())).as("fetch top level").isEqualTo(NONE);
        return codes(r.data().responses().stream().flatMap(x -> x.partitions().stream().map(p -> p.errorCode())));
    }

    static List<Errors> describeLogDirs(Case c) throws Exception {
        var r = (DescribeLogDirsResponse) c.alice(1).send(ApiKeys.DESCRIBE_LOG_DIRS, max(ApiKeys.DESCRIBE_LOG_DIRS),
                new DescribeLogDirsRequestData().setTopics(null));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    /** The top-level code, then each partition's. */
    static List<Errors> electLeaders(Case c) throws Exception {
        var req = new ElectLeadersRequestData().setElectionType((byte) 0).setTimeoutMs(30_000);
        req.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic(SHARED).setPartitions(List.of(0)));
        var r = (ElectLeadersResponse) c.alice(1).send(ApiKeys.ELECT_LEADERS, max(ApiKeys.ELECT_LEADERS), req);
        List<Errors> out = new ArrayList<>(List.of(Errors.forCode(r.data().errorCode())));
        r.data().replicaElectionResults().forEach(t -> t.partitionResult().forEach(p -> out.add(Errors.forCode(p.errorCode()))));
        return out;
    }

    /** The top-level code, then each partition's: the shared topic's partition onto its own leader. */
    static List<Errors> alterPartitionReassignments(Case c) throws Exception {
        var req = new AlterPartitionReassignmentsRequestData().setTimeoutMs(30_000);
        var t = new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(SHARED);
        t.partitions().add(new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0)
                .setReplicas(List.of(leader(SHARED))));
        req.topics().add(t);
        var r = (AlterPartitionReassignmentsResponse) c.alice(1).send(ApiKeys.ALTER_PARTITION_REASSIGNMENTS,
                max(ApiKeys.ALTER_PARTITION_REASSIGNMENTS), req);
        List<Errors> out = new ArrayList<>(List.of(Errors.forCode(r.data().errorCode())));
        r.data().responses().forEach(x -> x.partitions().forEach(p -> out.add(Errors.forCode(p.errorCode()))));
        return out;
    }

    static List<Errors> listPartitionReassignments(Case c) throws Exception {
        var r = (ListPartitionReassignmentsResponse) c.alice(1).send(ApiKeys.LIST_PARTITION_REASSIGNMENTS,
                max(ApiKeys.LIST_PARTITION_REASSIGNMENTS), new ListPartitionReassignmentsRequestData().setTopics(null).setTimeoutMs(30_000));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> describeClientQuotas(Case c) throws Exception {
        var r = (DescribeClientQuotasResponse) c.alice(1).send(ApiKeys.DESCRIBE_CLIENT_QUOTAS, max(ApiKeys.DESCRIBE_CLIENT_QUOTAS),
                new DescribeClientQuotasRequestData().setComponents(new ArrayList<>()).setStrict(false));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> alterClientQuotas(Case c) throws Exception {
        var r = (AlterClientQuotasResponse) c.alice(1).send(ApiKeys.ALTER_CLIENT_QUOTAS, max(ApiKeys.ALTER_CLIENT_QUOTAS),
                new AlterClientQuotasRequestData().setEntries(List.of(new AlterClientQuotasRequestData.EntryData()
                        .setEntity(List.of(new AlterClientQuotasRequestData.EntityData().setEntityType("client-id").setEntityName(c.key)))
                        .setOps(List.of(new AlterClientQuotasRequestData.OpData().setKey("producer_byte_rate").setValue(1e12))))));
        return codes(r.data().entries().stream().map(e -> e.errorCode()));
    }

    static List<Errors> describeUserScramCredentials(Case c) throws Exception {
        var r = (DescribeUserScramCredentialsResponse) c.alice(1).send(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS,
                max(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS), new DescribeUserScramCredentialsRequestData().setUsers(new ArrayList<>()));
        return List.of(Errors.forCode(r.data().errorCode()));
    }

    static List<Errors> alterUserScramCredentials(Case c) throws Exception {
        var r = (AlterUserScramCredentialsResponse) c.alice(1).send(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS,
                max(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS), new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                        new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName(c.key).setMechanism((byte) 2)
                                .setIterations(4096).setSalt(new byte[] {1, 2, 3}).setSaltedPassword(new byte[64]))));
        return codes(r.data().results().stream().map(x -> x.errorCode()));
    }

    static Integer describeClusterAuthorizedOperations(Case c) throws Exception {
        var r = (DescribeClusterResponse) c.alice(1).send(ApiKeys.DESCRIBE_CLUSTER, max(ApiKeys.DESCRIBE_CLUSTER),
                new DescribeClusterRequestData().setIncludeClusterAuthorizedOperations(true));
        assertThat(Errors.forCode(r.data().errorCode())).as("DescribeCluster has no gate").isEqualTo(NONE);
        assertThat(r.data().brokers()).as("DescribeCluster has no gate").hasSize(2);
        return r.data().clusterAuthorizedOperations();
    }

    // ---------------------------------------------------------------------------------------------
    // Wiring
    // ---------------------------------------------------------------------------------------------

    /** Apache 3.7's latest stable version, as ApiVersionMatrixIT pins the advertised ranges. */
    static short max(ApiKeys key) {
        return key.latestVersion(false);
    }

    static List<Errors> codes(Stream<Short> codes) {
        return codes.map(Errors::forCode).toList();
    }

    static Properties client(String user) {
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrap());
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                + "\" password=\"" + user + "-secret\";");
        return p;
    }

    /** A raw connection to {@code broker}, authenticated as {@code user} with SASL PLAIN. */
    static RawClient login(String user, int broker) throws IOException {
        RawClient c = new RawClient(cluster.kafkaPort(broker));
        try {
            var hs = (SaslHandshakeResponse) c.send(ApiKeys.SASL_HANDSHAKE, (short) 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            assertThat(Errors.forCode(hs.data().errorCode())).as("SaslHandshake").isEqualTo(NONE);
            var auth = (SaslAuthenticateResponse) c.send(ApiKeys.SASL_AUTHENTICATE, (short) 2, new SaslAuthenticateRequestData()
                    .setAuthBytes(("\0" + user + "\0" + user + "-secret").getBytes(StandardCharsets.UTF_8)));
            assertThat(Errors.forCode(auth.data().errorCode())).as("SaslAuthenticate as %s", user).isEqualTo(NONE);
            return c;
        } catch (IOException | RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    static RawClient adminAt(int broker) throws IOException {
        RawClient c = adminWire.get(broker);
        if (c == null) {
            c = login("admin", broker);
            adminWire.put(broker, c);
        }
        return c;
    }

    static AclBinding binding(ResourceType type, String name, PatternType pattern, String principal, AclOperation op,
                              AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, "*", op, permission));
    }

    /** Creates the ACLs of {@code acls} and waits until every broker lists them and {@code already}, and nothing else. */
    static void grant(Case c, List<Acl> acls, List<Acl> already) throws Exception {
        if (acls.isEmpty()) {
            return;
        }
        List<AclBinding> bindings = acls.stream().map(a -> a.binding(c)).toList();
        admin.createAcls(bindings).all().get(30, TimeUnit.SECONDS);
        Set<AclBinding> expected = new HashSet<>(bindings);
        already.forEach(a -> expected.add(a.binding(c)));
        awaitAclsOnEveryBroker(expected);
    }

    /** Waits (at most {@link #ACL_WAIT}) until DescribeAcls on every broker lists exactly {@code expected}. */
    static void awaitAclsOnEveryBroker(Set<AclBinding> expected) {
        Awaitility.await("ACLs " + expected + " on every broker (logs: " + cluster.logDir() + ")").atMost(ACL_WAIT)
                .pollInterval(Duration.ofMillis(20)).pollDelay(Duration.ZERO).pollInSameThread().until(() -> {
                    for (int b : BROKERS) {
                        if (!aclsAt(b).equals(expected)) {
                            return false;
                        }
                    }
                    return true;
                });
    }

    static Set<AclBinding> aclsAt(int broker) throws IOException {
        var r = (DescribeAclsResponse) adminAt(broker).send(ApiKeys.DESCRIBE_ACLS, max(ApiKeys.DESCRIBE_ACLS),
                new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(max(ApiKeys.DESCRIBE_ACLS)).data());
        assertThat(Errors.forCode(r.data().errorCode())).as("DescribeAcls as the super user at broker %d: %s", broker,
                r.data().errorMessage()).isEqualTo(NONE);
        return new HashSet<>(DescribeAclsResponse.aclBindings(r.data().resources()));
    }

    /** Waits until every broker serves {@code topic} with a leader; returns the leader. */
    static int awaitTopic(String topic) {
        int[] leader = {-1};
        Awaitility.await(topic + " served by every broker").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .pollInSameThread().until(() -> {
            Set<Integer> leaders = new HashSet<>();
            for (int b : BROKERS) {
                leaders.add(leaderAt(b, topic));
            }
            leader[0] = leaders.iterator().next();
            return leaders.size() == 1 && leader[0] >= 0;
        });
        return leader[0];
    }

    static int leader(String topic) throws IOException {
        int l = leaderAt(1, topic);
        assertThat(l).as("leader of %s", topic).isPositive();
        return l;
    }

    private static int leaderAt(int broker, String topic) throws IOException {
        var req = new MetadataRequestData().setAllowAutoTopicCreation(false);
        req.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(topic));
        var r = (MetadataResponse) adminAt(broker).send(ApiKeys.METADATA, max(ApiKeys.METADATA), req);
        var t = r.data().topics().find(topic);
        if (t == null || t.errorCode() != 0 || t.partitions().isEmpty()) {
            return -1;
        }
        return t.partitions().get(0).leaderId();
    }

    static Uuid topicId(String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).topicId();
    }

    /** The coordinator of a group (key type 0) or transactional id (1), as the super user finds it. */
    static int coordinator(String key, byte keyType) throws Exception {
        int[] node = {-1};
        Awaitility.await("coordinator of " + key).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .pollInSameThread().until(() -> {
            var r = (FindCoordinatorResponse) adminAt(1).send(ApiKeys.FIND_COORDINATOR, max(ApiKeys.FIND_COORDINATOR),
                    new FindCoordinatorRequestData().setKeyType(keyType).setCoordinatorKeys(List.of(key)));
            var found = r.data().coordinators().get(0);
            node[0] = found.nodeId();
            return found.errorCode() == 0;
        });
        return node[0];
    }

    static void produceAsAdmin(String topic, int count) throws Exception {
        RawClient wire = adminAt(leader(topic));
        for (int i = 0; i < count; i++) {
            assertThat(produce(wire, topic, null, records())).as("set-up produce to %s", topic).containsExactly(NONE);
        }
    }

    /** Alice's consumer, assigned partition 0 of {@code topic} from the start: the values of the first {@code count} records. */
    static List<String> consumeAsAlice(String topic, int count) {
        Properties props = client("alice");
        props.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<String, String> k = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            k.assign(List.of(new TopicPartition(topic, 0)));
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : k.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                }
            }
            return seen;
        }
    }
}
