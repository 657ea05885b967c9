package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.kaas.common.model.ScramUser;
import dev.kaas.proto.AlterScramCredentialsCall;
import dev.kaas.proto.ScramDeletion;
import dev.kaas.proto.ScramResult;
import dev.kaas.proto.ScramUpsertion;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.junit.jupiter.api.Test;

class ScramCredentialChangesTest {
    static final byte[] SALT = "0123456789abcdef".getBytes(StandardCharsets.UTF_8);

    /** As the receiving broker sends it: the keys of the salted password, not the salted password. */
    static ScramUpsertion upsert(String user, int mechanism, int iterations, String password) throws Exception {
        ScramMechanism m = mechanism == 1 ? ScramMechanism.SCRAM_SHA_256 : ScramMechanism.SCRAM_SHA_512;
        ScramFormatter f = new ScramFormatter(m);
        ScramCredential c = f.generateCredential(SALT, f.saltedPassword(password, SALT, iterations), iterations);
        return ScramUpsertion.newBuilder().setName(user).setMechanism(mechanism).setIterations(iterations)
                .setSalt(ByteString.copyFrom(SALT)).setStoredKey(ByteString.copyFrom(c.storedKey()))
                .setServerKey(ByteString.copyFrom(c.serverKey())).build();
    }

    static Map<String, Short> errors(ScramCredentialChanges.Outcome o) {
        return o.results().stream().collect(Collectors.toMap(ScramResult::getUser, r -> (short) r.getErrorCode()));
    }

    @Test
    void theBrokersKeysAreWhatIsPublished() throws Exception {
        var o = ScramCredentialChanges.apply(Map.of(), AlterScramCredentialsCall.newBuilder()
                .addUpsertions(upsert("alice", 2, 8192, "alice-secret")).build());

        assertThat(o.changed()).isTrue();
        assertThat(errors(o)).containsExactly(Map.entry("alice", Errors.NONE.code()));
        ScramUser c = o.users().get("alice").get(0);
        assertThat(c.mechanism()).isEqualTo("SCRAM-SHA-512");
        assertThat(c.iterations()).isEqualTo(8192);
        // What Apache's own formatter makes of the password, from scratch.
        ScramCredential expected = new ScramFormatter(ScramMechanism.SCRAM_SHA_512).generateCredential(SALT,
                new ScramFormatter(ScramMechanism.SCRAM_SHA_512).saltedPassword("alice-secret", SALT, 8192), 8192);
        assertThat(Base64.getDecoder().decode(c.storedKey())).isEqualTo(expected.storedKey());
        assertThat(Base64.getDecoder().decode(c.serverKey())).isEqualTo(expected.serverKey());
        assertThat(Base64.getDecoder().decode(c.salt())).isEqualTo(SALT);
        assertThat(c.toString()).doesNotContain(c.storedKey());
    }

    @Test
    void apachesRulesDecideEachUserAndTheValidRestApplies() throws Exception {
        Map<String, List<ScramUser>> current = ScramCredentialChanges.apply(Map.of(), AlterScramCredentialsCall.newBuilder()
                .addUpsertions(upsert("bob", 1, 4096, "b")).addUpsertions(upsert("carol", 1, 4096, "c")).build()).users();
        var o = ScramCredentialChanges.apply(current, AlterScramCredentialsCall.newBuilder()
                .addDeletions(ScramDeletion.newBuilder().setName("bob").setMechanism(1))
                .addDeletions(ScramDeletion.newBuilder().setName("nobody").setMechanism(1))
                .addDeletions(ScramDeletion.newBuilder().setName("carol").setMechanism(2))
                .addUpsertions(upsert("dave", 1, 4095, "d"))
                .addUpsertions(upsert("erin", 2, 16385, "e"))
                .addUpsertions(upsert("", 1, 4096, "f"))
                .addUpsertions(upsert("gina", 1, 4096, "g").toBuilder().setMechanism(7).build())
                .addUpsertions(upsert("hank", 1, 4096, "h"))
                .addUpsertions(upsert("hank", 1, 8192, "h"))
                .addUpsertions(upsert("kim", 1, 8192, "k"))
                .addUpsertions(upsert("kim", 2, 4096, "k"))
                .addUpsertions(upsert("ivan", 1, 4096, "i").toBuilder().setStoredKey(ByteString.EMPTY).setServerKey(ByteString.EMPTY).build())
                .addUpsertions(upsert("judy", 2, 16384, "j"))
                .build());

        assertThat(errors(o)).containsOnly(
                Map.entry("bob", Errors.NONE.code()),
                Map.entry("nobody", Errors.RESOURCE_NOT_FOUND.code()),
                Map.entry("carol", Errors.RESOURCE_NOT_FOUND.code()),
                Map.entry("dave", Errors.UNACCEPTABLE_CREDENTIAL.code()),
                Map.entry("erin", Errors.UNACCEPTABLE_CREDENTIAL.code()),
                Map.entry("", Errors.UNACCEPTABLE_CREDENTIAL.code()),
                Map.entry("gina", Errors.UNSUPPORTED_SASL_MECHANISM.code()),
                Map.entry("hank", Errors.DUPLICATE_RESOURCE.code()),
                Map.entry("ivan", Errors.UNACCEPTABLE_CREDENTIAL.code()),
                Map.entry("judy", Errors.NONE.code()),
                Map.entry("kim", Errors.NONE.code()));
        assertThat(o.results().stream().filter(r -> r.getUser().equals("dave")).findFirst().orElseThrow().getErrorMessage())
                .isEqualTo("Too few iterations");
        assertThat(o.results().stream().filter(r -> r.getUser().equals("hank")).findFirst().orElseThrow().getErrorMessage())
                .isEqualTo("A user credential cannot be altered twice in the same request");
        assertThat(o.users()).containsOnlyKeys("carol", "judy", "kim");
        assertThat(o.users().get("kim")).as("both mechanisms in one request, as Apache's documentation sets them")
                .extracting(ScramUser::mechanism).containsExactly("SCRAM-SHA-256", "SCRAM-SHA-512");
        assertThat(o.results()).as("one result per user").hasSize(11);
    }

    @Test
    void nothingValidChangesNothing() throws Exception {
        var o = ScramCredentialChanges.apply(Map.of(), AlterScramCredentialsCall.newBuilder()
                .addDeletions(ScramDeletion.newBuilder().setName("nobody").setMechanism(1)).build());
        assertThat(o.changed()).isFalse();
        assertThat(o.users()).isEmpty();
    }
}
