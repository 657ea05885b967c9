package dev.kaas.broker.quota;

import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.apache.kafka.common.utils.Time;

/**
 * This broker's byte-rate quota managers, on the quotas of the assignment it applied last
 * (AlterClientQuotas publishes them there). {@code controller_mutation_rate} is the
 * controller's, {@code connection_creation_rate} {@link IpConnectionRates}'; {@code request_percentage}
 * is kept and described but not enforced yet.
 */
@ApplicationScoped
public class ClientQuotas {
    private final QuotaManager produce;
    private final QuotaManager fetch;

    public ClientQuotas(ClusterView view, BrokerConfig config) {
        int samples = config.broker().quotaWindowNum();
        int window = config.broker().quotaWindowSizeSeconds();
        this.produce = new QuotaManager("producer_byte_rate", "Produce", () -> view.assignment().clientQuotas(), Time.SYSTEM, samples, window);
        this.fetch = new QuotaManager("consumer_byte_rate", "Fetch", () -> view.assignment().clientQuotas(), Time.SYSTEM, samples, window);
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
    }
}
