package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.ScramUser;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData.UserName;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

class DescribeUserScramCredentialsHandlerTest {
    static final Map<String, List<ScramUser>> USERS = Map.of(
            "alice", List.of(new ScramUser("SCRAM-SHA-256", "s", "k", "v", 4096), new ScramUser("SCRAM-SHA-512", "s", "k", "v", 8192)),
            "bob", List.of(new ScramUser("SCRAM-SHA-512", "s", "k", "v", 4096)));

    @Test
    void everyUserWhenNoneIsNamedWithMechanismsAndIterationsOnly() {
        var all = DescribeUserScramCredentialsHandler.describe(new DescribeUserScramCredentialsRequestData().setUsers(null), USERS);
        assertThat(all.results()).extracting(DescribeUserScramCredentialsResult::user).containsExactlyInAnyOrder("alice", "bob");
        assertThat(all.results().stream().filter(r -> r.user().equals("alice")).findFirst().orElseThrow().credentialInfos())
                .containsExactlyInAnyOrder(new CredentialInfo().setMechanism((byte) 1).setIterations(4096),
                        new CredentialInfo().setMechanism((byte) 2).setIterations(8192));
    }

    @Test
    void aNamedUserWithoutCredentialsOrNamedTwiceIsAnErrorAsApaches() {
        var some = DescribeUserScramCredentialsHandler.describe(new DescribeUserScramCredentialsRequestData().setUsers(List.of(
                new UserName().setName("bob"), new UserName().setName("nobody"), new UserName().setName("alice"),
                new UserName().setName("alice"))), USERS);
        assertThat(some.results()).hasSize(3);
        var byUser = some.results().stream().collect(java.util.stream.Collectors.toMap(DescribeUserScramCredentialsResult::user, r -> r));
        assertThat(byUser.get("bob").errorCode()).isZero();
        assertThat(byUser.get("nobody").errorCode()).isEqualTo(Errors.RESOURCE_NOT_FOUND.code());
        assertThat(byUser.get("nobody").errorMessage()).isEqualTo("Attempt to describe a user credential that does not exist: nobody");
        assertThat(byUser.get("alice").errorCode()).isEqualTo(Errors.DUPLICATE_RESOURCE.code());
        assertThat(byUser.get("alice").errorMessage())
                .isEqualTo("Cannot describe SCRAM credentials for the same user twice in a single request: alice");
    }
}
