package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.junit.jupiter.api.Test;

class AlterUserScramCredentialsHandlerTest {
    static final byte[] SALT = "0123456789abcdef".getBytes(StandardCharsets.UTF_8);

    @Test
    void theSaltedPasswordBecomesApachesStoredAndServerKeysAndGoesNoFurther() throws Exception {
        ScramFormatter f = new ScramFormatter(ScramMechanism.SCRAM_SHA_512);
        byte[] salted = f.saltedPassword("alice-secret", SALT, 8192);
        var sent = AlterUserScramCredentialsHandler.upsertion(new ScramCredentialUpsertion().setName("alice").setMechanism((byte) 2)
                .setIterations(8192).setSalt(SALT).setSaltedPassword(salted));

        ScramCredential expected = f.generateCredential(SALT, salted, 8192);
        assertThat(sent.getStoredKey().toByteArray()).isEqualTo(expected.storedKey());
        assertThat(sent.getServerKey().toByteArray()).isEqualTo(expected.serverKey());
        assertThat(sent.getSalt().toByteArray()).isEqualTo(SALT);
        assertThat(sent.getIterations()).isEqualTo(8192);
        // The call to the controller has no field a salted password could travel in.
        assertThat(sent.getDescriptorForType().getFields()).extracting(com.google.protobuf.Descriptors.FieldDescriptor::getName)
                .doesNotContain("salted_password");
    }

    @Test
    void aSaltedPasswordNoKeyCanBeMadeOfGoesWithoutKeysForTheControllerToRefuse() {
        var empty = AlterUserScramCredentialsHandler.upsertion(new ScramCredentialUpsertion().setName("x").setMechanism((byte) 1)
                .setIterations(4096).setSalt(SALT).setSaltedPassword(new byte[0]));
        var unknown = AlterUserScramCredentialsHandler.upsertion(new ScramCredentialUpsertion().setName("x").setMechanism((byte) 9)
                .setIterations(4096).setSalt(SALT).setSaltedPassword(new byte[32]));
        assertThat(empty.getStoredKey().isEmpty()).isTrue();
        assertThat(unknown.getStoredKey().isEmpty()).isTrue();
        assertThat(unknown.getMechanism()).isEqualTo(9);
    }
}
