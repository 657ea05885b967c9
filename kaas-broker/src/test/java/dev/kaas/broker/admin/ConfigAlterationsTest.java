package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.proto.AlterTopicConfigsCall;
import dev.kaas.proto.AlterTopicConfigsReply;
import dev.kaas.proto.TopicResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** What a broker decides itself for AlterConfigs and IncrementalAlterConfigs, and what it forwards, without sockets. */
class ConfigAlterationsTest {
    static final byte TOPIC = ConfigResource.Type.TOPIC.id();
    static final byte BROKER = ConfigResource.Type.BROKER.id();
    static final byte LOGGERS = ConfigResource.Type.BROKER_LOGGER.id();
    /** Held, so the logger exists for the whole test (java.util.logging keeps loggers weakly). */
    static final Logger TEST_LOGGER = Logger.getLogger("dev.kaas.test.ConfigAlterations");

    final List<AlterTopicConfigsCall> forwarded = new ArrayList<>();
    final List<Long> awaited = new ArrayList<>();
    CompletableFuture<AlterTopicConfigsReply> controllerAnswer;

    ConfigAlterations alterations() {
        return new ConfigAlterations(call -> {
            forwarded.add(call);
            return controllerAnswer;
        }, version -> {
            awaited.add(version);
            return CompletableFuture.completedFuture(null);
        }, 1);
    }

    static ConfigAlterations.Op set(String name, String value) {
        return new ConfigAlterations.Op(name, OpType.SET.id(), value);
    }

    static ConfigAlterations.Resource resource(byte type, String name, ConfigAlterations.Op... ops) {
        return new ConfigAlterations.Resource(type, name, List.of(ops));
    }

    static AlterTopicConfigsReply reply(long version, TopicResult... results) {
        return AlterTopicConfigsReply.newBuilder().setAssignmentVersion(version).addAllResults(List.of(results)).build();
    }

    List<ConfigAlterations.Result> alter(boolean validateOnly, boolean legacy, ConfigAlterations.Resource... resources) throws Exception {
        return alterations().alter(List.of(resources), validateOnly, legacy).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void whatApacheRefusesBeforeForwardingIsRefusedHereAndTheRestKeepsItsOrder() throws Exception {
        controllerAnswer = CompletableFuture.completedFuture(reply(7, TopicResult.newBuilder().setName("ok").build()));

        var results = alter(false, false,
                resource(TOPIC, "twice", set("retention.ms", "1")),
                resource(TOPIC, "ok", set("retention.ms", "1")),
                resource(TOPIC, "twice", set("segment.ms", "1")),
                resource(TOPIC, "keys", set("retention.ms", "1"), set("retention.ms", "2")),
                resource(TOPIC, "nulls", set("retention.ms", null), new ConfigAlterations.Op("segment.ms", OpType.DELETE.id(), null)),
                resource(TOPIC, "op", new ConfigAlterations.Op("retention.ms", (byte) 9, "1")),
                resource(BROKER, "1", set("num.io.threads", "2")),
                resource(BROKER, "", new ConfigAlterations.Op("num.io.threads", OpType.DELETE.id(), null)),
                resource(BROKER, "2", set("num.io.threads", "2")));

        assertThat(results).extracting(ConfigAlterations.Result::error).containsExactly(Errors.INVALID_REQUEST, Errors.NONE,
                Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST,
                Errors.INVALID_REQUEST, Errors.NONE, Errors.INVALID_REQUEST);
        assertThat(results.get(0).message()).isEqualTo("Each resource must appear at most once.");
        assertThat(results.get(3).message()).isEqualTo("Error due to duplicate config keys");
        assertThat(results.get(4).message()).isEqualTo("Null value not supported for : retention.ms");
        assertThat(results.get(5).message()).isEqualTo("Unknown operations type 9");
        assertThat(results.get(6).message()).isEqualTo("Cannot update these configs dynamically: Set(num.io.threads)");
        assertThat(results.get(8).message()).isEqualTo("Unexpected broker id, expected 1, but received 2");
        assertThat(forwarded).hasSize(1);
        assertThat(forwarded.get(0).getTopicsList()).extracting(t -> t.getName()).containsExactly("ok");
        assertThat(awaited).as("the answer waits for the assignment carrying the change").containsExactly(7L);
    }

    @Test
    void aCustomBrokerPropertyIsForwardedAndASecuritySettingRefusedWithApachesMessage() throws Exception {
        List<dev.kaas.proto.AlterBrokerConfigsCall> brokerCalls = new ArrayList<>();
        ConfigAlterations alterations = new ConfigAlterations(call -> controllerAnswer, call -> {
            brokerCalls.add(call);
            return CompletableFuture.completedFuture(dev.kaas.proto.AlterBrokerConfigsReply.newBuilder().setAssignmentVersion(4).build());
        }, version -> CompletableFuture.completedFuture(null), 1);

        var results = alterations.alter(List.of(resource(BROKER, "", set("my.reporter.endpoint", "http://x")),
                resource(BROKER, "1", set("ssl.keystore.location", "/tmp/k.p12"))), false, false).toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(results.get(0).error()).as("kept as Apache keeps it").isEqualTo(Errors.NONE);
        assertThat(brokerCalls).hasSize(1);
        assertThat(brokerCalls.get(0).getOpsList()).extracting(dev.kaas.proto.ConfigOp::getName).containsExactly("my.reporter.endpoint");
        assertThat(results.get(1).error()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(results.get(1).message())
                .isEqualTo("These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)");
    }

    @Test
    void deletingAnUnsetBrokerKeyIsAccepted() throws Exception {
        var results = alter(false, false, resource(BROKER, "", new ConfigAlterations.Op("num.io.threads", OpType.DELETE.id(), null)));

        assertThat(results.get(0).error()).isEqualTo(Errors.NONE);
    }

    @Test
    void brokerLoggersAreCheckedThenSetHere() throws Exception {
        TEST_LOGGER.setLevel(null);
        String name = TEST_LOGGER.getName();

        var refused = alter(false, false,
                resource(LOGGERS, "2", set(name, "DEBUG")),
                resource(LOGGERS, "x", new ConfigAlterations.Op(name, (byte) 9, "DEBUG")),
                resource(LOGGERS, "1", new ConfigAlterations.Op(name, (byte) 9, "DEBUG")));
        assertThat(refused.get(0).message()).isEqualTo("Unexpected node id. Expected 1, but received 2");
        assertThat(refused.get(1).message()).as("the node id first").isEqualTo("Node id must be an integer, but it is: x");
        assertThat(refused.get(2).message()).isEqualTo("Unknown operation type 9 is not allowed for the BROKER_LOGGER resource");

        var checks = List.of(
                alter(false, false, resource(LOGGERS, "1", set("dev.kaas.no.such.logger", "DEBUG"))).get(0),
                alter(false, false, resource(LOGGERS, "1", set(name, "LOUD"))).get(0),
                alter(false, false, resource(LOGGERS, "1", new ConfigAlterations.Op("root", OpType.DELETE.id(), null))).get(0),
                alter(false, false, resource(LOGGERS, "1", new ConfigAlterations.Op(name, OpType.APPEND.id(), "DEBUG"))).get(0),
                alter(false, true, resource(LOGGERS, "1", set(name, "DEBUG"))).get(0));
        assertThat(checks).extracting(ConfigAlterations.Result::error).containsExactly(Errors.INVALID_CONFIG, Errors.INVALID_CONFIG,
                Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST);
        assertThat(checks.get(0).message()).isEqualTo("Logger dev.kaas.no.such.logger does not exist!");
        assertThat(BrokerLoggers.exists("dev.kaas.no.such.logger")).as("asking did not create it").isFalse();
        assertThat(checks.get(1).message()).startsWith("Cannot set the log level of " + name + " to LOUD");
        assertThat(checks.get(4).message()).as("legacy AlterConfigs never knew loggers").isEqualTo("Unknown resource type 8");
        assertThat(TEST_LOGGER.getLevel()).as("nothing refused was applied").isNull();

        assertThat(alter(true, false, resource(LOGGERS, "1", set(name, "DEBUG"))).get(0).error()).isEqualTo(Errors.NONE);
        assertThat(TEST_LOGGER.getLevel()).as("validate_only changes nothing").isNull();
        assertThat(alter(false, false, resource(LOGGERS, "1", set(name, "DEBUG"))).get(0).error()).isEqualTo(Errors.NONE);
        assertThat(BrokerLoggers.loggers()).containsEntry(name, "DEBUG");
        alter(false, false, resource(LOGGERS, "1", new ConfigAlterations.Op(name, OpType.DELETE.id(), null)));
        assertThat(TEST_LOGGER.getLevel()).isNull();
    }

    @Test
    void whenTheControllerDoesNotAnswerOnlyWhatWentToItFails() throws Exception {
        controllerAnswer = CompletableFuture.failedFuture(new NotControllerException("no controller"));
        TEST_LOGGER.setLevel(null);

        var results = alter(false, false,
                resource(TOPIC, "t", set("retention.ms", "1")),
                resource(LOGGERS, "1", set(TEST_LOGGER.getName(), "WARN")),
                resource(BROKER, "1", set("num.io.threads", "2")));

        assertThat(results).extracting(ConfigAlterations.Result::error)
                .containsExactly(Errors.NOT_CONTROLLER, Errors.NONE, Errors.INVALID_REQUEST);
        assertThat(BrokerLoggers.loggers()).containsEntry(TEST_LOGGER.getName(), "WARN");
        TEST_LOGGER.setLevel(null);
    }

    @Test
    void aValidateOnlyOrRefusedChangeDoesNotWaitForAnAssignment() throws Exception {
        controllerAnswer = CompletableFuture.completedFuture(reply(9, TopicResult.newBuilder().setName("t")
                .setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage("bad").build()));

        var refused = alter(false, false, resource(TOPIC, "t", set("retention.ms", "x")));
        assertThat(refused.get(0)).isEqualTo(new ConfigAlterations.Result(Errors.INVALID_CONFIG, "bad"));
        controllerAnswer = CompletableFuture.completedFuture(reply(9, TopicResult.newBuilder().setName("t").build()));
        alter(true, false, resource(TOPIC, "t", set("retention.ms", "1")));

        assertThat(awaited).isEmpty();
        assertThat(forwarded.get(1).getValidateOnly()).isTrue();
    }

    @Test
    void dynamicBrokerKeysGoToTheControllerForTheClusterOrThisBrokerAndTheAnswerWaitsForTheirAssignment() throws Exception {
        List<dev.kaas.proto.AlterBrokerConfigsCall> brokerCalls = new ArrayList<>();
        controllerAnswer = CompletableFuture.completedFuture(reply(5, TopicResult.newBuilder().setName("t").build()));
        ConfigAlterations alterations = new ConfigAlterations(call -> controllerAnswer, call -> {
            brokerCalls.add(call);
            return CompletableFuture.completedFuture(call.getOpsList().stream().anyMatch(o -> o.getValue().equals("bad"))
                    ? dev.kaas.proto.AlterBrokerConfigsReply.newBuilder().setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage("no").build()
                    : dev.kaas.proto.AlterBrokerConfigsReply.newBuilder().setAssignmentVersion(brokerCalls.size() + 10).build());
        }, version -> {
            awaited.add(version);
            return CompletableFuture.completedFuture(null);
        }, 1);

        var results = alterations.alter(List.of(
                resource(BROKER, "", set("log.retention.ms", "1000")),
                resource(BROKER, "1", set("message.max.bytes", "5000"), new ConfigAlterations.Op("log.cleaner.threads", OpType.DELETE.id(), null)),
                resource(BROKER, "2", set("message.max.bytes", "5000")),
                resource(BROKER, "1 ", set("log.retention.ms", "1")),
                resource(TOPIC, "t", set("retention.ms", "1"))), false, false).toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(results).extracting(ConfigAlterations.Result::error).containsExactly(Errors.NONE, Errors.NONE, Errors.INVALID_REQUEST,
                Errors.INVALID_REQUEST, Errors.NONE);
        assertThat(brokerCalls).extracting(dev.kaas.proto.AlterBrokerConfigsCall::getResource).containsExactly("", "1");
        assertThat(brokerCalls.get(1).getOpsList()).extracting(dev.kaas.proto.ConfigOp::getName)
                .containsExactly("message.max.bytes", "log.cleaner.threads");
        assertThat(awaited).as("the newest version any part of the request produced").containsExactly(12L);

        var refused = alterations.alter(List.of(resource(BROKER, "", set("log.retention.ms", "bad"))), false, true)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(refused.get(0)).isEqualTo(new ConfigAlterations.Result(Errors.INVALID_CONFIG, "no"));
        assertThat(brokerCalls.get(2).getReplace()).as("legacy AlterConfigs replaces the resource's set").isTrue();

        awaited.clear();
        var deleteOnly = alterations.alter(List.of(resource(BROKER, "", new ConfigAlterations.Op("num.io.threads", OpType.DELETE.id(), null))),
                false, false).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(deleteOnly.get(0)).as("nothing dynamic to delete: answered here").isEqualTo(ConfigAlterations.Result.OK);
        assertThat(brokerCalls).hasSize(3);
        var checked = alterations.alter(List.of(resource(BROKER, "01", set("log.retention.ms", "1000"))), true, false)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(checked.get(0).error()).isEqualTo(Errors.NONE);
        assertThat(brokerCalls.get(3).getValidateOnly()).isTrue();
        assertThat(brokerCalls.get(3).getResource()).as("filed under the id brokers look up").isEqualTo("1");
        assertThat(awaited).as("validate_only waits for nothing").isEmpty();
    }

    @Test
    void aChangeThisBrokerCouldNotTakeIsRefusedBeforeItReachesTheController() throws Exception {
        List<dev.kaas.proto.AlterBrokerConfigsCall> brokerCalls = new ArrayList<>();
        List<String> checked = new ArrayList<>();
        ConfigAlterations alterations = new ConfigAlterations(call -> controllerAnswer, call -> {
            brokerCalls.add(call);
            return CompletableFuture.completedFuture(dev.kaas.proto.AlterBrokerConfigsReply.newBuilder().setAssignmentVersion(3).build());
        }, (resource, ops, legacy) -> {
            checked.add(resource + ":" + ops.get(0).name() + "=" + ops.get(0).value() + (legacy ? " legacy" : ""));
            return "8".equals(ops.get(0).value()) ? "too many" : null;
        }, version -> CompletableFuture.completedFuture(null), 1);

        for (boolean validateOnly : new boolean[] {false, true}) {
            var results = alterations.alter(List.of(resource(BROKER, "1", set("log.cleaner.threads", "8")),
                    resource(BROKER, "", set("log.cleaner.threads", "2"))), validateOnly, false).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(results).containsExactly(new ConfigAlterations.Result(Errors.INVALID_REQUEST, "too many"), ConfigAlterations.Result.OK);
        }
        var legacy = alterations.alter(List.of(resource(BROKER, "", set("log.cleaner.threads", "8"))), false, true)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(legacy.get(0).error()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(checked).contains("1:log.cleaner.threads=8", ":log.cleaner.threads=2", ":log.cleaner.threads=8 legacy");
        assertThat(brokerCalls).as("only what this broker could take went on").hasSize(2)
                .allSatisfy(c -> assertThat(c.getResource()).isEmpty());
    }

    @Test
    void aBrokerConfigChangeTheControllerDoesNotAnswerIsNotController() throws Exception {
        ConfigAlterations alterations = new ConfigAlterations(call -> controllerAnswer,
                call -> CompletableFuture.failedFuture(new NotControllerException("no controller")), version -> CompletableFuture.completedFuture(null), 1);

        var results = alterations.alter(List.of(resource(BROKER, "", set("log.retention.ms", "1000"))), false, false)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(results.get(0).error()).isEqualTo(Errors.NOT_CONTROLLER);
    }
}
