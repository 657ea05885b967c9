package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The broker's protocol limits against a real broker and raw frames: fetch.max.bytes,
 * queued.max.request.bytes, max.connections.per.ip, connections.max.idle.ms, and Apache's answers
 * for Metadata v10 without a name, Produce to internal topics and a partition named twice.
 * Tests that count connections connect from their own loopback address (127.0.0.x), so the
 * clients of other tests never share their per-address count.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ProtocolLimitsIT {
    static final int FETCH_MAX = 64 * 1024;
    static final int FRAME_MAX = 4 << 20;
    static final int PER_IP = 8;

    @RegisterExtension
    static final KaasClusterExtension kaas = new KaasClusterExtension(Map.of(
            "kaas.broker.fetch-max-bytes", String.valueOf(FETCH_MAX),
            "kaas.broker.socket-request-max-bytes", String.valueOf(FRAME_MAX),
            "kaas.broker.queued-max-request-bytes", String.valueOf(2 * FRAME_MAX),
            "kaas.broker.max-connections-per-ip", String.valueOf(PER_IP),
            // Apache's server.properties names are read too: one address gets a limit of its own.
            "kaas.broker.max-connections-per-ip-overrides", "127.0.0.44:2"));

    static KaasCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = kaas.cluster();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            admin.createTopics(List.of(new NewTopic("many", 3, (short) 1), new NewTopic("huge", 1, (short) 1),
                    new NewTopic("twice", 1, (short) 1), new NewTopic("quiet", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties p = cluster.clientProps();
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (var producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            // One ~10 KiB batch per send: 20 per partition, about 600 KiB in all.
            for (int i = 0; i < 20; i++) {
                for (int partition = 0; partition < 3; partition++) {
                    producer.send(new ProducerRecord<>("many", partition, null, new byte[10_000])).get();
                }
            }
            producer.send(new ProducerRecord<>("huge", 0, null, new byte[200_000])).get();
        }
    }

    /** A socket from {@code localIp} (any 127.0.0.x is this machine) to the broker. */
    static Socket connectFrom(String localIp) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(localIp, 0));
        s.connect(new InetSocketAddress("127.0.0.1", cluster.kafkaPort()), 5000);
        s.setSoTimeout(10_000);
        return s;
    }

    static ApiVersionsResponse apiVersions(Socket s) throws IOException {
        ApiVersionsRequestData body = new ApiVersionsRequestData().setClientSoftwareName("it").setClientSoftwareVersion("1");
        s.getOutputStream().write(RawClient.frame(ApiKeys.API_VERSIONS, (short) 3, 7, body).array());
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] resp = new byte[in.readInt()];
        in.readFully(resp);
        return (ApiVersionsResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(resp),
                new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "raw-client", 7));
    }

    static FetchRequestData fetch(String topic, int... partitions) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        for (int p : partitions) {
            t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0)
                    .setPartitionMaxBytes(Integer.MAX_VALUE));
        }
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(Integer.MAX_VALUE)
                .setTopics(List.of(t));
    }

    static List<Records> records(FetchResponse r) {
        List<Records> out = new ArrayList<>();
        for (FetchResponseData.FetchableTopicResponse t : r.data().responses()) {
            for (FetchResponseData.PartitionData p : t.partitions()) {
                assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                out.add(FetchResponse.recordsOrFail(p));
            }
        }
        return out;
    }

    @Test
    void aFetchAskingForEverythingGetsAtMostFetchMaxBytes() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short version : new short[] {12, 3}) {
                FetchResponse r = (FetchResponse) c.send(ApiKeys.FETCH, version, fetch("many", 0, 1, 2));

                int total = records(r).stream().mapToInt(Records::sizeInBytes).sum();
                assertThat(total).as("fetch v%d", version).isPositive().isLessThanOrEqualTo(FETCH_MAX);
            }
        }
    }

    @Test
    void aBatchLargerThanFetchMaxBytesIsStillReturnedWhole() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (short version : new short[] {12, 3}) {
                FetchResponse r = (FetchResponse) c.send(ApiKeys.FETCH, version, fetch("huge", 0));

                List<Record> got = new ArrayList<>();
                records(r).forEach(rs -> rs.records().forEach(got::add));
                assertThat(got).as("fetch v%d", version).singleElement().satisfies(rec -> assertThat(rec.valueSize()).isEqualTo(200_000));
            }
        }
    }

    @Test
    void metadataV10WithANullTopicNameIsAnsweredInvalidRequest() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            MetadataRequestData body = new MetadataRequestData().setAllowAutoTopicCreation(false);
            body.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(null));

            MetadataResponse r = (MetadataResponse) c.send(ApiKeys.METADATA, (short) 10, body);

            assertThat(r.data().topics()).singleElement().satisfies(t -> {
                assertThat(t.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
                assertThat(t.name()).isEmpty();
            });
            // Answered, not dropped: the connection still serves.
            assertThat(c.send(ApiKeys.METADATA, (short) 10, new MetadataRequestData().setTopics(List.of()))).isNotNull();
        }
    }

    static ProduceRequestData produce(String topic, int partition, String... values) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        for (String v : values) {
            t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition)
                    .setRecords(MemoryRecords.withRecords(CompressionType.NONE, new SimpleRecord(v.getBytes()))));
        }
        ProduceRequestData d = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        d.topicData().add(t);
        return d;
    }

    @Test
    void produceToAnInternalTopicIsRefusedAndTheNamesCannotBeCreated() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            for (String internal : List.of("__consumer_offsets", "__transaction_state")) {
                ProduceResponse r = (ProduceResponse) c.send(ApiKeys.PRODUCE, (short) 9, produce(internal, 0, "x"));
                assertThat(r.data().responses()).singleElement().satisfies(t -> assertThat(t.partitionResponses()).singleElement()
                        .satisfies(p -> assertThat(p.errorCode()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION.code())));

                MetadataRequestData auto = new MetadataRequestData().setAllowAutoTopicCreation(true);
                auto.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(internal));
                MetadataResponse m = (MetadataResponse) c.send(ApiKeys.METADATA, (short) 12, auto);
                assertThat(m.data().topics()).singleElement()
                        .satisfies(t -> assertThat(t.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
            }
        }
        try (Admin admin = Admin.create(cluster.clientProps())) {
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("__consumer_offsets", 1, (short) 1))).all().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidTopicException.class);
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).doesNotContain("__consumer_offsets", "__transaction_state");
        }
    }

    @Test
    void aPartitionNamedTwiceInOneProduceIsAppendedOnceWithItsLastRecords() throws Exception {
        try (RawClient c = new RawClient(cluster.kafkaPort())) {
            ProduceResponse r = (ProduceResponse) c.send(ApiKeys.PRODUCE, (short) 9, produce("twice", 0, "first", "second"));

            assertThat(r.data().responses()).singleElement().satisfies(t -> assertThat(t.partitionResponses()).singleElement()
                    .satisfies(p -> assertThat(p.errorCode()).isEqualTo(Errors.NONE.code())));
            FetchResponse f = (FetchResponse) c.send(ApiKeys.FETCH, (short) 12, fetch("twice", 0));
            List<String> values = new ArrayList<>();
            records(f).forEach(rs -> rs.records().forEach(rec -> values.add(new String(Utils.toArray(rec.value())))));
            assertThat(values).containsExactly("second");
            assertThat(f.data().responses().iterator().next().partitions().get(0).highWatermark()).isEqualTo(1);
        }
    }

    @Test
    void connectionsAboveThePerAddressLimitOrItsOverrideAreClosed() throws Exception {
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < PER_IP; i++) {
                Socket s = connectFrom("127.0.0.42");
                open.add(s);
                assertThat(apiVersions(s).data().errorCode()).isZero();
            }

            try (Socket extra = connectFrom("127.0.0.42")) {
                assertThat(RawClient.closedByPeer(extra.getInputStream())).isTrue();
            }
            try (Socket other = connectFrom("127.0.0.43")) {
                assertThat(apiVersions(other).data().errorCode()).as("another address has its own count").isZero();
            }
            for (int i = 0; i < 2; i++) {
                Socket s = connectFrom("127.0.0.44");
                open.add(s);
                assertThat(apiVersions(s).data().errorCode()).isZero();
            }
            try (Socket extra = connectFrom("127.0.0.44")) {
                assertThat(RawClient.closedByPeer(extra.getInputStream())).as("127.0.0.44's override of 2").isTrue();
            }
            open.remove(0).close();
            Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                try (Socket again = connectFrom("127.0.0.42")) {
                    return apiVersions(again).data().errorCode() == 0;
                }
            });
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    /** Apache 3.7's texts for connection limits it refuses, as a client reads them (INVALID_REQUEST, KAFKA-13609). */
    @Test
    void malformedConnectionLimitsAreRefusedWithApachesTexts() throws Exception {
        var clusterDefault = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, "");
        Map<String, String> refusals = Map.of(
                "max.connections.per.ip.overrides", "10.0.0.1",
                "listener.name.plaintext.max.connections", "lots",
                "max.connections", "0");
        Map<String, String> texts = Map.of(
                "max.connections.per.ip.overrides", "Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 8",
                "listener.name.plaintext.max.connections", "Invalid value lots for configuration max.connections: Not a number of type INT",
                "max.connections", "Invalid value org.apache.kafka.common.config.ConfigException: Invalid max.connections 0 for configuration "
                        + "Invalid dynamic configuration");
        try (Admin admin = Admin.create(cluster.clientProps())) {
            for (Map.Entry<String, String> e : refusals.entrySet()) {
                assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                        new org.apache.kafka.clients.admin.ConfigEntry(e.getKey(), e.getValue()),
                        org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, java.util.concurrent.TimeUnit.SECONDS))
                        .as(e.getKey()).hasCauseInstanceOf(org.apache.kafka.common.errors.InvalidRequestException.class)
                        .cause().hasMessage(texts.get(e.getKey()));
            }
        }
    }

    /**
     * As Apache's dynamic connection quotas: {@code kafka-configs.sh --entity-type brokers
     * --entity-default --alter --add-config max.connections.per.ip=…} limits the connections
     * accepted from then on (open ones are kept), DescribeConfigs shows the value with its
     * source, and deleting it brings the static limit back.
     */
    @Test
    void thePerAddressLimitChangedAtRunTimeAppliesToNewConnections() throws Exception {
        var clusterDefault = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, "");
        var broker = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER,
                "1");
        List<Socket> open = new ArrayList<>();
        try (Admin admin = Admin.create(cluster.clientProps())) {
            for (int i = 0; i < 3; i++) {
                Socket s = connectFrom("127.0.0.46");
                open.add(s);
                assertThat(apiVersions(s).data().errorCode()).isZero();
            }
            admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("max.connections.per.ip", "2"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, java.util.concurrent.TimeUnit.SECONDS);

            // Applied with the next assignment: from then on a fourth connection from 127.0.0.46 (and a third from another) is closed.
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
                try (Socket extra = connectFrom("127.0.0.46")) {
                    return RawClient.closedByPeer(extra.getInputStream());
                }
            });
            assertThat(apiVersions(open.get(0)).data().errorCode()).as("open connections are kept").isZero();
            for (int i = 0; i < 2; i++) {
                Socket s = connectFrom("127.0.0.47");
                open.add(s);
                assertThat(apiVersions(s).data().errorCode()).isZero();
            }
            try (Socket extra = connectFrom("127.0.0.47")) {
                assertThat(RawClient.closedByPeer(extra.getInputStream())).as("127.0.0.47's third").isTrue();
            }
            var described = admin.describeConfigs(List.of(broker), new org.apache.kafka.clients.admin.DescribeConfigsOptions().includeSynonyms(true))
                    .all().get(30, java.util.concurrent.TimeUnit.SECONDS).get(broker).get("max.connections.per.ip");
            assertThat(described.value()).isEqualTo("2");
            assertThat(described.source()).isEqualTo(org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
            assertThat(described.isReadOnly()).isFalse();
            assertThat(described.synonyms()).extracting(org.apache.kafka.clients.admin.ConfigEntry.ConfigSynonym::source).containsExactly(
                    org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                    org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG,
                    org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("max.connections.per.ip", ""),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.DELETE)))).all().get(30, java.util.concurrent.TimeUnit.SECONDS);

            Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                Socket again = connectFrom("127.0.0.46");
                open.add(again);
                return apiVersions(again).data().errorCode() == 0;
            });
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    /**
     * The layers of a dynamic limit, as Apache's: a broker's own {@code max.connections.per.ip}
     * (entity {@code 1}) wins over the cluster-wide default, which wins over the static setting,
     * and deleting a layer brings the one below back, each without a restart. Each probe connects
     * from a new address, so connections closed by an earlier probe cannot count against it.
     */
    @Test
    void aBrokersOwnLimitWinsOverTheClusterDefaultAndDeletingItBringsTheDefaultBack() throws Exception {
        var clusterDefault = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, "");
        var broker = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, "1");
        int[] address = {0};
        java.util.function.IntSupplier probe = () -> {
            int n = address[0]++;
            return acceptedFrom("127.0." + (1 + n / 250) + "." + (1 + n % 250), PER_IP + 1);
        };
        try (Admin admin = Admin.create(cluster.clientProps())) {
            try {
                setPerIp(admin, clusterDefault, "6");
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> probe.getAsInt() == 6);
                setPerIp(admin, broker, "4");
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> probe.getAsInt() == 4);
                setPerIp(admin, broker, null);
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> probe.getAsInt() == 6);
                setPerIp(admin, clusterDefault, null);
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> probe.getAsInt() == PER_IP);
            } finally {
                // The class's other tests expect the static limits.
                setPerIp(admin, broker, null);
                setPerIp(admin, clusterDefault, null);
            }
        }
    }

    private static void setPerIp(Admin admin, org.apache.kafka.common.config.ConfigResource resource, String value) throws Exception {
        var op = new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry("max.connections.per.ip",
                value == null ? "" : value), value == null ? org.apache.kafka.clients.admin.AlterConfigOp.OpType.DELETE
                : org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** How many connections from {@code ip} are served (up to {@code max}) before one is closed; all closed after. */
    private static int acceptedFrom(String ip, int max) {
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < max; i++) {
                Socket s = connectFrom(ip);
                open.add(s);
                try {
                    apiVersions(s);
                } catch (IOException closed) {
                    return i;
                }
            }
            return max;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            for (Socket s : open) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing a probe
                }
            }
        }
    }

    @Test
    void partlySentLargeFramesStopReadingOnceTheBudgetIsUsedUntilOneIsReleased() throws Exception {
        List<Socket> stalled = new ArrayList<>();
        try (Socket waiting = connectFrom("127.0.0.52")) {
            // Two frames announced at the maximum size, a quarter sent: each has shown it is being
            // sent, so each holds its whole size, and the whole budget is reserved.
            for (int i = 0; i < 2; i++) {
                Socket s = connectFrom("127.0.0.51");
                stalled.add(s);
                s.getOutputStream().write(ByteBuffer.allocate(4).putInt(FRAME_MAX).array());
                s.getOutputStream().write(new byte[FRAME_MAX / 4]);
                s.getOutputStream().flush();
            }
            // Nothing observable says the broker has read the two frames; give it a moment so the
            // request below arrives after them (were it read first, the test would fail, not pass).
            Thread.sleep(500);
            waiting.setSoTimeout(2_000);
            assertThatThrownBy(() -> apiVersions(waiting)).as("no request is read while the budget is used")
                    .isInstanceOf(SocketTimeoutException.class);

            stalled.remove(0).close();

            waiting.setSoTimeout(15_000);
            DataInputStream in = new DataInputStream(waiting.getInputStream());
            byte[] resp = new byte[in.readInt()];
            in.readFully(resp);
            var r = (ApiVersionsResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(resp),
                    new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "raw-client", 7));
            assertThat(r.data().errorCode()).as("read once a stalled frame's bytes were released").isZero();
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }

    /**
     * Requests in flight per connection bound what the broker reads from it: once as many fetches
     * as it may hold wait for data that never comes, it stops reading that socket, so whatever the
     * client goes on sending stays in the kernel's buffers instead of the broker's memory; when
     * the fetches complete it reads again. Without the pause the client could write on without
     * limit (the broker would buffer it all); without the resume the connection would hang.
     */
    @Test
    void aConnectionWithAllItsRequestsInFlightIsNotReadFromUntilOneCompletes() throws Exception {
        FetchRequestData parked = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(8_000).setMinBytes(1 << 20)
                .setMaxBytes(1 << 20).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("quiet")
                        .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                                .setPartitionMaxBytes(1 << 20)))));
        try (RawClient probe = new RawClient(cluster.kafkaPort())) {
            // The broker serves the partition (a fetch that does not wait answers without error) before any is parked.
            FetchRequestData now = parked.duplicate().setMaxWaitMs(0);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> ((FetchResponse) probe.send(ApiKeys.FETCH, (short) 12, now))
                    .data().responses().get(0).partitions().get(0).errorCode() == Errors.NONE.code());
        }
        try (Socket s = connectFrom("127.0.0.53")) {
            s.setSendBufferSize(64 * 1024);
            java.io.OutputStream out = s.getOutputStream();
            // Sixteen (the default in-flight limit) fetches of an empty partition: all parked for 8 s.
            for (int i = 0; i < 16; i++) {
                out.write(RawClient.frame(ApiKeys.FETCH, (short) 12, 100 + i, parked).array());
            }
            out.flush();
            s.setSoTimeout(1_000);
            assertThatThrownBy(() -> s.getInputStream().read()).as("the fetches are parked, unanswered")
                    .isInstanceOf(SocketTimeoutException.class);
            java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicReference<IOException> failed = new java.util.concurrent.atomic.AtomicReference<>();
            // Zeros: once the broker reads them again, a frame of size 0 closes the connection.
            Thread writer = new Thread(() -> {
                byte[] chunk = new byte[1 << 20];
                try {
                    while (written.get() < 512L << 20) {
                        out.write(chunk);
                        written.addAndGet(chunk.length);
                    }
                } catch (IOException e) {
                    failed.set(e);
                }
            }, "never-read-writer");
            writer.setDaemon(true);
            writer.start();
            // Bounded: the writer blocks within a second once the broker stops reading; without the pause
            // it would have written hundreds of MiB over loopback by then. The fetches are still parked.
            Thread.sleep(2_000);
            assertThat(failed.get()).as("the connection stays open while its requests are in flight").isNull();
            assertThat(writer.isAlive()).as("the writer is blocked, not finished").isTrue();
            assertThat(written.get()).as("bytes the broker let the client write past its parked requests").isLessThan(64L << 20);

            writer.join(30_000);
            assertThat(writer.isAlive()).as("once the fetches completed the broker read again, and closed on the zeros").isFalse();
            assertThat(failed.get()).isNotNull();
        }
        try (Socket after = connectFrom("127.0.0.53")) {
            assertThat(apiVersions(after).data().errorCode()).as("the broker still serves").isZero();
        }
    }

    @Test
    void anIdleConnectionIsClosedAndAnActiveOneIsNot() throws Exception {
        Path dir = Files.createTempDirectory("kaas-it-idle");
        try (KaasCluster idle = KaasCluster.start(dir.resolve("data"), Map.of("kaas.broker.connections-max-idle", "2s"));
                RawClient quiet = new RawClient(idle.kafkaPort());
                RawClient busy = new RawClient(idle.kafkaPort())) {
            ApiVersionsRequestData body = new ApiVersionsRequestData().setClientSoftwareName("it").setClientSoftwareVersion("1");
            quiet.send(ApiKeys.API_VERSIONS, (short) 3, body);
            // Paced requests: the busy connection is never idle for the 2 s limit, over 5 s (a half-second pace
            // leaves a loaded machine 1.5 s of slack; a full second once failed a full run).
            for (int i = 0; i < 10; i++) {
                assertThat(busy.send(ApiKeys.API_VERSIONS, (short) 3, body)).as("a connection in use stays open").isNotNull();
                Thread.sleep(500);
            }

            assertThat(quiet.closedByPeer()).isTrue();
        }
    }
}
