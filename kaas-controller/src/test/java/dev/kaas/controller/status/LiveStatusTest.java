package dev.kaas.controller.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class LiveStatusTest {
    private static final URI ONE = URI.create("http://127.0.0.1:9094/api/");
    private static final URI TWO = URI.create("http://127.0.0.1:9098/api/");

    @Test
    void theLeadingControllerAnswersWithBrokerHealthDrainsAndLag() {
        Map<String, String> answers = new HashMap<>();
        answers.put("http://127.0.0.1:9094/api/v1/cluster", "{\"controller\":{\"holder\":\"controller-1#a\",\"leader\":false,\"epoch\":-1}}");
        answers.put("http://127.0.0.1:9098/api/v1/cluster", """
                {"controller":{"holder":"controller-2#b","leader":true,"epoch":4},"assignmentVersion":9,"handoffsInFlight":1,
                 "brokers":[{"id":1,"alive":true,"caughtUp":true,"drained":false,"owns":{"partitions":4,"groupSlots":50,"txnSlots":50}},
                            {"id":2,"alive":true,"caughtUp":false,"drained":true,"owns":{"partitions":0,"groupSlots":0,"txnSlots":0}}]}""");
        answers.put("http://127.0.0.1:9098/api/v1/groups", "[{\"groupId\":\"billing\",\"totalLag\":15},{\"groupId\":\"idle\",\"totalLag\":null}]");

        String out = LiveStatus.format(List.of(ONE, TWO), u -> Optional.ofNullable(answers.get(u.toString())));

        assertThat(out).startsWith("live (REST API http://127.0.0.1:9098/api/v1):\n")
                .contains("controller controller-2#b leads under epoch 4, assignment version 9, 1 handoffs in flight")
                .containsPattern("broker 1 +alive +caught up +owns 4 partitions, 50 group slots, 50 txn slots")
                .containsPattern("broker 2 +alive +behind +drained +owns 0 partitions")
                .contains("groups:    2 (lag: billing 15, idle ?)");
    }

    @Test
    void withoutAnAnsweringLeaderItSaysSoInOneLine() {
        String out = LiveStatus.format(List.of(ONE, TWO), u -> Optional.empty());
        assertThat(out).startsWith("live:        no controller answered on its REST API (http://127.0.0.1:9094/api/v1 and 1 more)").hasLineCount(1);
        assertThat(LiveStatus.format(List.of(), u -> Optional.of("not json"))).contains("none known");
    }

    @Test
    void theRunDirectoryGivesEachControllersPortAndAUrlOverridesIt() {
        RunDir run = new RunDir(OptionalInt.of(9092), 2, 2, Map.of(), Map.of());
        assertThat(ClusterStatus.restApis(run, null)).containsExactly(URI.create("http://127.0.0.1:9094/api/"), URI.create("http://127.0.0.1:9098/api/"));
        assertThat(ClusterStatus.restApis(run, "https://ctl.example:8443")).containsExactly(URI.create("https://ctl.example:8443/api/"));
        assertThat(ClusterStatus.restApis(RunDir.empty(), null)).isEmpty();
    }
}
