package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.junit.jupiter.api.Test;

/** A throttle time set on any response: kept where the version has the field, left out where it has not. */
class ThrottleTimesTest {
    /** A longer delay is set on a copy (one message may answer several clients: a SyncGroup's members); a shorter one changes nothing. */
    @Test
    void aLongerDelayRaisesTheThrottleTimeOfACopyAndAShorterOneLeavesIt() {
        MetadataResponseData m = new MetadataResponseData().setThrottleTimeMs(500);
        assertThat(ThrottleTimes.raise(m, 300)).isSameAs(m);
        ApiMessage raised = ThrottleTimes.raise(m, 800);
        assertThat(((MetadataResponseData) raised).throttleTimeMs()).isEqualTo(800);
        assertThat(m.throttleTimeMs()).as("the handler's message is not changed").isEqualTo(500);
        FetchResponseData f = new FetchResponseData();
        assertThat(ThrottleTimes.raise(f, 0)).isSameAs(f);
        SaslHandshakeResponseData none = new SaslHandshakeResponseData();
        assertThat(ThrottleTimes.raise(none, 100)).as("no such field").isSameAs(none);
    }

    /** Every response of every version: one that could be written before can be written with a throttle time too. */
    @Test
    void everyResponseOfEveryVersionCanCarryIt() {
        List<String> broken = new ArrayList<>();
        int written = 0;
        for (ApiKeys key : ApiKeys.values()) {
            for (short v = key.oldestVersion(); v <= key.latestVersion(); v++) {
                ApiMessage plain = ApiMessageType.fromApiKey(key.id).newResponse();
                try {
                    MessageUtil.toByteBuffer(plain, v);
                } catch (RuntimeException notWritableAnyway) {
                    continue;
                }
                ApiMessage throttled = ThrottleTimes.raise(ApiMessageType.fromApiKey(key.id).newResponse(), 1234);
                try {
                    MessageUtil.toByteBuffer(throttled, v);
                    written++;
                } catch (RuntimeException e) {
                    broken.add(key + " v" + v + ": " + e.getMessage());
                }
            }
        }
        assertThat(broken).isEmpty();
        assertThat(written).as("responses written with a throttle time").isGreaterThan(200);
    }
}
