package dev.kaas.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kaas.broker.auth.Access;
import dev.kaas.common.model.AclEntry;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

class AclStoreTest {
    static final String STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    static final KafkaPrincipal ALICE = new KafkaPrincipal("User", "alice");

    static AclEntry readOrders() {
        return new AclEntry(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW);
    }

    @Test
    void withoutAnAuthorizerEveryoneMayDoEverything() {
        AclStore store = new AclStore("", "", false, List::of);

        Access access = store.session(ALICE, "127.0.0.1");
        assertThat(access.enabled()).isFalse();
        assertThat(access.allowed(AclOperation.DELETE, ResourceType.TOPIC, "orders")).isTrue();
        assertThat(access.authorizedOperations(ResourceType.CLUSTER, Access.CLUSTER)).as("Apache's full cluster mask").isEqualTo(8096);
    }

    @Test
    void aPublishedChangeAppliesToTheNextQuestionOfAnOpenSession() {
        AtomicReference<List<AclEntry>> published = new AtomicReference<>(List.of());
        AclStore store = new AclStore(STANDARD, "User:admin; User:ops", false, published::get);
        Access alice = store.session(ALICE, "127.0.0.1");

        assertThat(alice.allowed(AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse();
        published.set(List.of(readOrders()));
        assertThat(alice.allowed(AclOperation.READ, ResourceType.TOPIC, "orders")).isTrue();
        assertThat(alice.authorizedOperations(ResourceType.TOPIC, "orders")).as("READ and the DESCRIBE it implies")
                .isEqualTo((1 << AclOperation.READ.code()) | (1 << AclOperation.DESCRIBE.code()));
        assertThat(store.acls(AclBindingFilter.ANY)).containsExactly(readOrders().toBinding());
        published.set(List.of());
        assertThat(alice.allowed(AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse();
        assertThat(store.session(new KafkaPrincipal("User", "ops"), "10.0.0.1").allowed(AclOperation.ALTER, ResourceType.CLUSTER, Access.CLUSTER))
                .as("a super user, with spaces around it in the setting").isTrue();
    }

    /** No assignment applied yet (a broker just started): nobody but a super user is served, even where no ACL would mean everyone. */
    @Test
    void beforeTheFirstAssignmentOnlySuperUsersAreAllowed() {
        AtomicReference<List<AclEntry>> published = new AtomicReference<>(null);
        AclStore store = new AclStore(STANDARD, "User:admin", true, published::get);

        assertThat(store.session(ALICE, "127.0.0.1").ready()).as("her connection is closed, which a client retries").isFalse();
        assertThat(store.session(new KafkaPrincipal("User", "admin"), "127.0.0.1").ready()).isTrue();
        assertThat(store.session(ALICE, "127.0.0.1").allowed(AclOperation.READ, ResourceType.TOPIC, "no-acls")).isFalse();
        assertThat(store.session(ALICE, "127.0.0.1").allowedOnAny(AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        assertThat(store.session(new KafkaPrincipal("User", "admin"), "127.0.0.1").allowed(AclOperation.ALTER, ResourceType.CLUSTER,
                Access.CLUSTER)).isTrue();
        published.set(List.of());
        assertThat(store.session(ALICE, "127.0.0.1").ready()).isTrue();
        assertThat(store.session(ALICE, "127.0.0.1").allowed(AclOperation.READ, ResourceType.TOPIC, "no-acls"))
                .as("allow.everyone.if.no.acl.found, once the ACLs are known").isTrue();
    }

    @Test
    void anAuthorizerKaasDoesNotImplementOrABadSuperUserStopsStartUp() {
        assertThatThrownBy(() -> new AclStore("com.example.MyAuthorizer", "", false, List::of))
                .hasMessageContaining("com.example.MyAuthorizer").hasMessageContaining("StandardAuthorizer");
        assertThatThrownBy(() -> new AclStore(STANDARD, "admin", false, List::of)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new AclStore("kafka.security.authorizer.AclAuthorizer", "", true, List::of).enabled()).isTrue();
    }
}
