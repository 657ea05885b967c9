package dev.kaas.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.MetadataResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Metadata answers with the advertised endpoint of the listener the request arrived on. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ListenersIT {
    @TempDir
    Path tmp;

    @Test
    void eachListenerAdvertisesItsOwnEndpoint() throws Exception {
        int[] kafka = new int[1];
        int second = 0;
        KaasCluster started = null;
        // The listener ports are chosen here, so a port taken before the broker bound it means choosing again.
        for (int attempt = 1; started == null; attempt++) {
            kafka[0] = KaasCluster.freePort();
            second = KaasCluster.freePort();
            // The second listener advertises a host name of its own, as an internal listener would.
            String listeners = "PLAINTEXT://127.0.0.1:" + kafka[0] + ",INTERNAL://127.0.0.1:" + second;
            String advertised = "PLAINTEXT://127.0.0.1:" + kafka[0] + ",INTERNAL://broker-1.internal:" + second;
            try {
                // As in Apache, a listener name that is not a protocol's needs the protocol map.
                started = KaasCluster.startWithListeners(tmp.resolve("data-" + attempt), listeners, advertised,
                        Map.of("kaas.broker.listener-security-protocol-map", "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"));
            } catch (KaasCluster.PortInUse e) {
                if (attempt == KaasCluster.BIND_ATTEMPTS) {
                    throw e;
                }
            }
        }
        int internalPort = second;
        try (KaasCluster cluster = started) {
            try (RawClient plain = new RawClient(cluster.kafkaPort()); RawClient internal = new RawClient(internalPort)) {
                var a = (MetadataResponse) plain.send(ApiKeys.METADATA, (short) 12, new MetadataRequestData());
                var b = (MetadataResponse) internal.send(ApiKeys.METADATA, (short) 12, new MetadataRequestData());
                assertThat(a.data().brokers()).singleElement().satisfies(n -> {
                    assertThat(n.host()).isEqualTo("127.0.0.1");
                    assertThat(n.port()).isEqualTo(kafka[0]);
                });
                assertThat(b.data().brokers()).singleElement().satisfies(n -> {
                    assertThat(n.host()).isEqualTo("broker-1.internal");
                    assertThat(n.port()).isEqualTo(internalPort);
                });
            }
        }
    }
}
