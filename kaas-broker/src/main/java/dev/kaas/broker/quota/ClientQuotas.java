package dev.kaas.broker.quota;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.broker.protocol.RequestQuota;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.internals.QuotaConfigs;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;

/**
 * This broker's byte-rate and request quota managers, on the quotas of the assignment it applied
 * last (AlterClientQuotas publishes them there). {@code controller_mutation_rate} is the
 * controller's, {@code connection_creation_rate} {@link IpConnectionRates}'.
 */
@ApplicationScoped
public class ClientQuotas implements RequestQuota {
    /** Apache's ClientQuotaManagerConfig.NanosToPercentagePerSecond: a second of one thread is 100. */
    static final double NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / TimeUnit.SECONDS.toNanos(1);

    private final QuotaManager produce;
    private final QuotaManager fetch;
    private final QuotaManager request;

    public ClientQuotas(ClusterView view, BrokerConfig config) {
        int samples = config.broker().quotaWindowNum();
        int window = config.broker().quotaWindowSizeSeconds();
        this.produce = new QuotaManager("producer_byte_rate", "Produce", () -> view.assignment().clientQuotas(), Time.SYSTEM, samples, window);
        this.fetch = new QuotaManager("consumer_byte_rate", "Fetch", () -> view.assignment().clientQuotas(), Time.SYSTEM, samples, window);
        this.request = new QuotaManager(QuotaConfigs.REQUEST_PERCENTAGE_OVERRIDE_CONFIG, "Request", () -> view.assignment().clientQuotas(),
                Time.SYSTEM, samples, window);
    }

    @Override
    public int recordAndGetThrottleTimeMs(KafkaPrincipal principal, String clientId, long threadNanos, long nowMs) {
        return request.recordAndGetThrottleTimeMs(principal, clientId, percentage(threadNanos), nowMs);
    }

    /** Thread time as the request quota's rate counts it: a second of one thread is 100 (percent of a thread for a second). */
    static double percentage(long threadNanos) {
        return threadNanos * NANOS_TO_PERCENTAGE_PER_SECOND;
    }

    public QuotaManager produce() {
        return produce;
    }

    public QuotaManager fetch() {
        return fetch;
    }

    void onStop(@Observes ShutdownEvent ev) {
        produce.close();
        fetch.close();
        request.close();
    }
}
