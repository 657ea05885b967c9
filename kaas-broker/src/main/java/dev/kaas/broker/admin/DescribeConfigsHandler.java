package dev.kaas.broker.admin;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.protocol.ApiHandler;
import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.common.config.DynamicBrokerConfigs;
import dev.kaas.common.config.TopicConfigs;
import dev.kaas.common.config.TopicDefaults;
import dev.kaas.common.model.TopicAssignment;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeConfigs: for a topic, every Apache topic key with its effective value and source
 * ({@link TopicConfigEntries}: the override, this broker's default, Apache's), as {@code kafka-topics.sh
 * --describe} and {@code kafka-configs.sh --describe} read them; for BROKER_LOGGER, this broker's
 * loggers and their levels ({@link BrokerLoggers}); for BROKER, this broker's settings under
 * Apache's key names ({@link BrokerConfigs}), all static (src/docs/compatibility.md).
 */
@ApplicationScoped
public class DescribeConfigsHandler implements ApiHandler {
    private final ClusterView view;
    private final int brokerId;
    private final dev.kaas.broker.config.BrokerConfig config;
    /** The topic defaults in force on this broker, static and dynamic. */
    private final java.util.function.Supplier<TopicDefaults> topicDefaults;

    public DescribeConfigsHandler(ClusterView view, dev.kaas.broker.config.BrokerConfig config, dev.kaas.broker.data.Partitions partitions) {
        this.view = view;
        this.topicDefaults = partitions::topicDefaults;
        this.brokerId = config.broker().id();
        this.config = config;
    }

    @Override
    public ApiKeys key() {
        return ApiKeys.DESCRIBE_CONFIGS;
    }

    @Override
    public CompletionStage<ApiMessage> handle(RequestContext ctx, AbstractRequest request) {
        DescribeConfigsRequestData data = ((DescribeConfigsRequest) request).data();
        DescribeConfigsResponseData resp = new DescribeConfigsResponseData().setThrottleTimeMs(0);
        for (var r : data.resources()) {
            DescribeConfigsResult out = new DescribeConfigsResult().setResourceType(r.resourceType()).setResourceName(r.resourceName());
            // Apache's ConfigHelper: DESCRIBE_CONFIGS on the cluster for broker resources, on the topic for a topic,
            // before the resource's name or existence is looked at.
            boolean broker = r.resourceType() == ConfigResource.Type.BROKER.id() || r.resourceType() == ConfigResource.Type.BROKER_LOGGER.id();
            if (broker && !ctx.access().allowedOnCluster(AclOperation.DESCRIBE_CONFIGS)) {
                resp.results().add(out.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())
                        .setErrorMessage(Errors.CLUSTER_AUTHORIZATION_FAILED.message()));
                continue;
            }
            if (r.resourceType() == ConfigResource.Type.TOPIC.id()
                    && !ctx.allowed(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, r.resourceName())) {
                resp.results().add(out.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message()));
                continue;
            }
            if (r.resourceType() == ConfigResource.Type.BROKER_LOGGER.id()) {
                resp.results().add(describeLoggers(r, out));
                continue;
            }
            if (r.resourceType() == ConfigResource.Type.BROKER.id()) {
                resp.results().add(describeBroker(ctx, data, r, out));
                continue;
            }
            if (r.resourceType() != ConfigResource.Type.TOPIC.id()) {
                resp.results().add(out.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("kaas describes topic configs only in this release"));
                continue;
            }
            TopicAssignment t = view.topic(r.resourceName());
            if (t == null) {
                resp.results().add(out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                        .setErrorMessage("Topic " + r.resourceName() + " does not exist"));
                continue;
            }
            TopicConfigEntries topic = new TopicConfigEntries(topicDefaults.get(), t.topic().configs());
            List<String> keys = r.configurationKeys() == null || r.configurationKeys().isEmpty()
                    ? TopicConfigs.names().stream().sorted().toList() : r.configurationKeys();
            for (String key : keys) {
                ConfigDef.ConfigKey def = TopicConfigs.DEF.configKeys().get(key);
                if (def == null) {
                    continue;
                }
                out.configs().add(entry(ctx, data, key, topic.value(key), topic.source(key), false, type(def.type), def.documentation,
                        topic.synonyms(key)));
            }
            resp.results().add(out.setErrorCode(Errors.NONE.code()));
        }
        return CompletableFuture.completedFuture(resp);
    }

    /**
     * Apache's {@code ConfigHelper} for BROKER: the empty name is the cluster-wide dynamic defaults
     * (only what is set there, DYNAMIC_DEFAULT_BROKER_CONFIG); this broker's id lists its whole
     * configuration ({@link BrokerConfigs}), with the dynamic layers over the static one.
     */
    private DescribeConfigsResult describeBroker(RequestContext ctx, DescribeConfigsRequestData data,
                                                 DescribeConfigsRequestData.DescribeConfigsResource r, DescribeConfigsResult out) {
        String name = r.resourceName() == null ? "" : r.resourceName();
        List<String> wanted = r.configurationKeys() == null || r.configurationKeys().isEmpty() ? null : r.configurationKeys();
        var assignment = view.assignment();
        Map<String, String> clusterDefault = assignment == null ? Map.of() : assignment.brokerConfig(dev.kaas.common.model.Assignment.CLUSTER_DEFAULT);
        if (name.isEmpty()) {
            for (var e : new java.util.TreeMap<>(clusterDefault).entrySet()) {
                if (wanted == null || wanted.contains(e.getKey())) {
                    DescribeConfigsResourceResult c = entry(ctx, data, e.getKey(), e.getValue(), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                            BrokerConfigs.readOnly(e.getKey()), BrokerConfigs.typeOf(e.getKey()), null,
                            List.of(new TopicConfigEntries.Synonym(e.getKey(), e.getValue(), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)));
                    if (DynamicBrokerConfigs.custom(e.getKey())) {
                        // Apache's maybeSensitive: a name of unknown type is described with its value hidden.
                        c.setIsSensitive(true).setValue(null);
                        c.synonyms().forEach(y -> y.setValue(null));
                    }
                    out.configs().add(c);
                }
            }
            return out.setErrorCode(Errors.NONE.code());
        }
        if (!isThisBroker(name, "Unexpected broker id, expected " + brokerId + " or empty string, but received " + name, out)) {
            return out;
        }
        Map<String, String> mine = assignment == null ? Map.of() : assignment.brokerConfig(Integer.toString(brokerId));
        for (BrokerConfigs.Entry e : BrokerConfigs.of(config, topicDefaults.get(), clusterDefault, mine)) {
            if (wanted != null && !wanted.contains(e.name())) {
                continue;
            }
            DescribeConfigsResourceResult c = entry(ctx, data, e.name(), e.value(), e.source(), e.readOnly(), e.type(), e.doc(), e.synonyms());
            if (e.sensitive()) {
                // As Apache: a password is described, its value never (nor its synonyms').
                c.setIsSensitive(true).setValue(null);
                c.synonyms().forEach(y -> y.setValue(null));
            }
            out.configs().add(c);
        }
        return out.setErrorCode(Errors.NONE.code());
    }

    /** One described key, with what the request's version and flags ask for. */
    private static DescribeConfigsResourceResult entry(RequestContext ctx, DescribeConfigsRequestData data, String name, String value,
                                                       ConfigSource source, boolean readOnly, ConfigType type, String doc,
                                                       List<TopicConfigEntries.Synonym> synonyms) {
        DescribeConfigsResourceResult c = new DescribeConfigsResourceResult().setName(name).setValue(value)
                .setReadOnly(readOnly).setConfigSource(source.id()).setIsSensitive(false);
        if (ctx.apiVersion() == 0) {
            c.setIsDefault(source == ConfigSource.DEFAULT_CONFIG);
        }
        if (ctx.apiVersion() >= 3) {
            c.setConfigType(type.id());
        }
        if (data.includeSynonyms()) {
            synonyms.forEach(y -> c.synonyms().add(new DescribeConfigsSynonym().setName(y.name()).setValue(y.value()).setSource(y.source().id())));
        }
        if (data.includeDocumentation()) {
            c.setDocumentation(doc);
        }
        return c;
    }

    /** True when {@code name} is this broker's id; else {@code out} carries Apache's INVALID_REQUEST. */
    private boolean isThisBroker(String name, String mismatch, DescribeConfigsResult out) {
        int id;
        try {
            id = Integer.parseInt(name);
        } catch (NumberFormatException e) {
            out.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Broker id must be an integer, but it is: " + name);
            return false;
        }
        if (id != brokerId) {
            out.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(mismatch);
            return false;
        }
        return true;
    }

    /** Apache's {@code ConfigHelper} for BROKER_LOGGER: this broker's id, every logger with its level, no synonyms. */
    private DescribeConfigsResult describeLoggers(DescribeConfigsRequestData.DescribeConfigsResource r, DescribeConfigsResult out) {
        String name = r.resourceName();
        if (name == null || name.isEmpty()) {
            return out.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Broker id must not be empty");
        }
        if (!isThisBroker(name, "Unexpected broker id, expected " + brokerId + " but received " + name, out)) {
            return out;
        }
        Map<String, String> loggers = BrokerLoggers.loggers();
        List<String> keys = r.configurationKeys() == null || r.configurationKeys().isEmpty() ? List.copyOf(loggers.keySet())
                : r.configurationKeys();
        for (String key : keys) {
            String level = loggers.get(key);
            if (level != null) {
                out.configs().add(new DescribeConfigsResourceResult().setName(key).setValue(level)
                        .setConfigSource(ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG.id()).setIsSensitive(false).setReadOnly(false));
            }
        }
        return out.setErrorCode(Errors.NONE.code());
    }

    private static ConfigType type(ConfigDef.Type t) {
        return switch (t) {
            case BOOLEAN -> ConfigType.BOOLEAN;
            case STRING -> ConfigType.STRING;
            case INT -> ConfigType.INT;
            case SHORT -> ConfigType.SHORT;
            case LONG -> ConfigType.LONG;
            case DOUBLE -> ConfigType.DOUBLE;
            case LIST -> ConfigType.LIST;
            case CLASS -> ConfigType.CLASS;
            case PASSWORD -> ConfigType.PASSWORD;
        };
    }
}
