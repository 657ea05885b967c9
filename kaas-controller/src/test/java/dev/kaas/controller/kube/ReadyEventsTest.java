package dev.kaas.controller.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Which Ready changes become Events, and how long their messages may be. */
class ReadyEventsTest {
    private static Condition ready(String status, String reason) {
        return new ConditionBuilder().withType("Ready").withStatus(status).withReason(reason).build();
    }

    @Test
    void aRefusalANewReasonAndARecoveryAreEventsAFirstAcceptanceAndTheSameRefusalAreNot() {
        assertThat(ReadyEvents.changed(null, ready("True", "Accepted"))).as("first acceptance").isFalse();
        assertThat(ReadyEvents.changed(ready("True", "Accepted"), ready("True", "Accepted"))).as("still accepted").isFalse();
        assertThat(ReadyEvents.changed(null, ready("False", "InvalidAcl"))).as("refused at once").isTrue();
        assertThat(ReadyEvents.changed(ready("True", "Accepted"), ready("False", "InvalidAcl"))).as("refused").isTrue();
        assertThat(ReadyEvents.changed(ready("False", "InvalidAcl"), ready("False", "InvalidAcl"))).as("the same refusal").isFalse();
        assertThat(ReadyEvents.changed(ready("False", "InvalidAcl"), ready("False", "InvalidQuota"))).as("another reason").isTrue();
        assertThat(ReadyEvents.changed(ready("False", "InvalidAcl"), ready("True", "Accepted"))).as("recovered").isTrue();
        assertThat(ReadyEvents.changed(ready("False", "InvalidAcl"), null)).as("no condition").isFalse();
    }

    @Test
    void aLongMessageIsCutToItsByteBoundBetweenCodePoints() {
        assertThat(ReadyEvents.truncated("short")).isEqualTo("short");
        String ascii = "x".repeat(ReadyEvents.MAX_MESSAGE_BYTES);
        assertThat(ReadyEvents.truncated(ascii)).isEqualTo(ascii);
        String wide = "é".repeat(ReadyEvents.MAX_MESSAGE_BYTES);
        String cut = ReadyEvents.truncated(wide);
        assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(ReadyEvents.MAX_MESSAGE_BYTES);
        assertThat(cut).endsWith("…").startsWith("éé");
        String emoji = "\uD83D\uDE00".repeat(ReadyEvents.MAX_MESSAGE_BYTES);
        String cutEmoji = ReadyEvents.truncated(emoji);
        assertThat(cutEmoji.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(ReadyEvents.MAX_MESSAGE_BYTES);
        assertThat(cutEmoji.substring(0, cutEmoji.length() - 1).codePoints().allMatch(c -> c == 0x1F600)).as("no pair split").isTrue();
    }
}
