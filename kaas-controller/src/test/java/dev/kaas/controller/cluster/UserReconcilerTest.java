package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.cluster.UserDeclaration;
import dev.kaas.common.cluster.UserVerdict;
import dev.kaas.common.model.AclEntry;
import dev.kaas.common.model.ClientQuota;
import dev.kaas.common.model.ScramUser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/** {@link UserReconciler} without a store: declarations in, the assignment's users and verdicts out. */
class UserReconcilerTest {
    private final AtomicInteger salts = new AtomicInteger();
    private final UserReconciler reconciler = new UserReconciler(() -> {
        byte[] salt = new byte[32];
        salt[0] = (byte) salts.incrementAndGet();
        return salt;
    });

    private static UserDeclaration scram(String name, String password, List<UserDeclaration.Rule> acls) {
        return new UserDeclaration("uid-" + name, name, 1, "scram-sha-512", password, null, "simple", acls, Map.of());
    }

    private UserReconciler.Result reconcile(Map<String, List<ScramUser>> users, List<ClientQuota> quotas, List<AclEntry> acls,
                                            List<UserDeclaration> declarations) throws Exception {
        return reconciler.reconcile(users, quotas, acls, Map.of(), declarations, d -> d, () -> false);
    }

    private static UserDeclaration.Rule rule(String type, String name, String... operations) {
        return new UserDeclaration.Rule(type, name, null, List.of(operations), null, null);
    }

    private static AclEntry acl(String principal, String topic) {
        return new AclEntry(ResourceType.TOPIC, topic, PatternType.LITERAL, principal, "*", AclOperation.READ, AclPermissionType.ALLOW);
    }

    @Test
    void aChangedPasswordGetsANewCredentialAndAnUnchangedOneKeepsItsOwn() throws Exception {
        var first = reconcile(Map.of(), List.of(), List.of(), List.of(scram("alice", "one", List.of())));
        ScramUser minted = first.scramUsers().get("alice").get(0);

        var again = reconcile(first.scramUsers(), List.of(), List.of(), List.of(scram("alice", "one", List.of())));
        assertThat(again.scramUsers().get("alice")).containsExactly(minted);
        assertThat(salts).as("minted once").hasValue(1);

        // A fresh reconciler (a new controller) checks the credential itself and keeps it too.
        var restarted = new UserReconciler(() -> new byte[32]).reconcile(first.scramUsers(), List.of(), List.of(), Map.of(),
                List.of(scram("alice", "one", List.of())), d -> d, () -> false);
        assertThat(restarted.scramUsers().get("alice")).containsExactly(minted);

        var changed = reconcile(first.scramUsers(), List.of(), List.of(), List.of(scram("alice", "two", List.of())));
        assertThat(changed.scramUsers().get("alice")).singleElement().isNotEqualTo(minted);
        var back = reconcile(changed.scramUsers(), List.of(), List.of(), List.of(scram("alice", "one", List.of())));
        assertThat(back.scramUsers().get("alice")).singleElement().as("the old password does not pass for the new credential")
                .isNotEqualTo(changed.scramUsers().get("alice").get(0));
    }

    @Test
    void aDeclaredUserOwnsItsPrincipalsAclsItsUserQuotaAndItsCredentialsOnly() throws Exception {
        List<AclEntry> acls = List.of(acl("User:alice", "old"), acl("User:bob", "kept"), acl("User:alice2", "kept"));
        List<ClientQuota> quotas = List.of(new ClientQuota(Map.of("user", "alice"), Map.of("consumer_byte_rate", 5.0)),
                new ClientQuota(Map.of("user", "alice", "client-id", "app"), Map.of("consumer_byte_rate", 7.0)));
        Map<String, List<ScramUser>> users = Map.of("alice", List.of(new ScramUser("SCRAM-SHA-256", "c2FsdA==", "a2V5", "a2V5", 4096)));
        UserDeclaration d = new UserDeclaration("u1", "alice", 3, "scram-sha-512", "pw", null, "simple",
                List.of(rule("topic", "new", "Read")), Map.of("producer_byte_rate", 10.0));

        var r = reconcile(users, quotas, acls, List.of(d));

        assertThat(r.acls()).containsExactlyInAnyOrder(acl("User:alice", "new"), acl("User:bob", "kept"), acl("User:alice2", "kept"));
        assertThat(r.clientQuotas()).containsExactlyInAnyOrder(new ClientQuota(Map.of("user", "alice"), Map.of("producer_byte_rate", 10.0)),
                new ClientQuota(Map.of("user", "alice", "client-id", "app"), Map.of("consumer_byte_rate", 7.0)));
        assertThat(r.scramUsers().get("alice")).extracting(ScramUser::mechanism).containsExactly("SCRAM-SHA-512");
        assertThat(r.verdicts()).singleElement().satisfies(v -> {
            assertThat(v.ready()).isTrue();
            assertThat(v.username()).isEqualTo("alice");
        });
        assertThat(r.declaredUsers()).isEqualTo(Map.of("u1", "alice"));
    }

    @Test
    void refusedDeclarationsChangeNothingAndSayWhy() throws Exception {
        List<AclEntry> acls = List.of(acl("User:x", "before"));
        Map<String, List<ScramUser>> users = Map.of("x", List.of(new ScramUser("SCRAM-SHA-512", "c2FsdA==", "a2V5", "a2V5", 4096)));
        List<ClientQuota> quotas = List.of(new ClientQuota(Map.of("user", "x"), Map.of("producer_byte_rate", 5.0)));
        List<UserDeclaration> refused = List.of(
                new UserDeclaration("1", "x", 2, "scram-sha-512", null, "Secret s not found.", "simple", List.of(), Map.of()),
                new UserDeclaration("1", "x", 2, "kerberos", null, null, null, List.of(), Map.of()),
                new UserDeclaration("1", "x", 2, "", null, null, null, List.of(), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "opa", List.of(), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, null, List.of(rule("topic", "t", "Read")), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple", List.of(rule("cluster", "other", "Alter")), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple", List.of(rule("topic", "", "Read")), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple", List.of(rule("topic", "t")), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple",
                        List.of(new UserDeclaration.Rule("group", "g", "match", List.of("Read"), null, null)), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple",
                        List.of(new UserDeclaration.Rule(null, null, null, List.of("Read"), null, null)), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, "simple",
                        List.of(new UserDeclaration.Rule("topic", "t", null, java.util.Arrays.asList("Read", null), null, null)), Map.of()),
                new UserDeclaration("1", "x", 2, null, null, null, null, List.of(), Map.of("request_percentage", 0.0)),
                new UserDeclaration("1", "x", 2, "scram-sha-512", "", null, null, List.of(), Map.of()));
        List<String> reasons = new ArrayList<>();
        for (UserDeclaration d : refused) {
            var r = reconciler.reconcile(users, quotas, acls, Map.of("1", "x"), List.of(d), same -> same, () -> false);
            assertThat(r.acls()).as(d.toString()).containsExactlyElementsOf(acls);
            assertThat(r.scramUsers()).as(d.toString()).isEqualTo(users);
            assertThat(r.clientQuotas()).as(d.toString()).isEqualTo(quotas);
            assertThat(r.declaredUsers()).isEqualTo(Map.of("1", "x"));
            UserVerdict v = r.verdicts().get(0);
            assertThat(v.ready()).as(d.toString()).isFalse();
            assertThat(v.username()).as("what stays applied").isEqualTo("x");
            reasons.add(v.reason() + ": " + v.message());
        }
        assertThat(reasons).containsExactly(
                "PasswordNotFound: Secret s not found.",
                "InvalidAuthentication: Unknown authentication type kerberos: use scram-sha-512 or tls-external.",
                "InvalidAuthentication: The authentication has no type: use scram-sha-512 or tls-external.",
                "InvalidAcl: Unknown authorization type opa: use simple.",
                "InvalidAcl: ACLs are declared without authorization type simple.",
                "InvalidAcl: acls[0]: the cluster resource has no name but kafka-cluster.",
                "InvalidAcl: acls[0]: Resource name should not be empty.",
                "InvalidAcl: acls[0]: no operations.",
                "InvalidAcl: acls[0]: pattern type match is not literal or prefix.",
                "InvalidAcl: acls[0]: resource type null is not one of topic, group, cluster, transactionalId.",
                "InvalidAcl: acls[0]: operation null is not one of Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
                        + "AlterConfigs, DescribeConfigs, IdempotentWrite, All.",
                "InvalidQuota: Quota requestPercentage must be greater than 0.",
                "InvalidPassword: The password must not be empty.");
    }

    /**
     * The ledger, not the resource's status, says what to take away: a resource that is gone, or
     * names another user now, loses its old user even if no status was ever written for it.
     */
    @Test
    void theLedgerRemovesTheUsersOfDeclarationsThatWentOrRenamedTheirUser() throws Exception {
        Map<String, List<ScramUser>> users = Map.of("foo", List.of(new ScramUser("SCRAM-SHA-512", "c2FsdA==", "a2V5", "a2V5", 4096)),
                "gone", List.of(new ScramUser("SCRAM-SHA-512", "c2FsdA==", "a2V5", "a2V5", 4096)),
                "api-user", List.of(new ScramUser("SCRAM-SHA-256", "c2FsdA==", "a2V5", "a2V5", 4096)));
        List<AclEntry> acls = List.of(acl("User:foo", "t"), acl("User:gone", "t"), acl("User:api-user", "t"));
        List<ClientQuota> quotas = List.of(new ClientQuota(Map.of("user", "gone"), Map.of("producer_byte_rate", 1.0)),
                new ClientQuota(Map.of("user", "foo"), Map.of("producer_byte_rate", 1.0)));
        UserDeclaration nowTls = new UserDeclaration("u-foo", "foo", 2, "tls-external", null, null, "simple",
                List.of(rule("topic", "t", "Read")), Map.of());

        var r = reconciler.reconcile(users, quotas, acls, Map.of("u-foo", "foo", "u-gone", "gone"), List.of(nowTls), d -> d, () -> false);

        assertThat(r.scramUsers()).containsOnlyKeys("api-user");
        assertThat(r.acls()).containsExactlyInAnyOrder(acl("User:CN=foo", "t"), acl("User:api-user", "t"));
        assertThat(r.clientQuotas()).isEmpty();
        assertThat(r.declaredUsers()).isEqualTo(Map.of("u-foo", "CN=foo"));
    }

    @Test
    void aPassPastItsBudgetJudgesOneAndLeavesTheRestAsTheyAreWithoutAVerdict() throws Exception {
        List<String> prepared = new ArrayList<>();
        List<UserDeclaration> three = List.of(scram("a", "pw", List.of()), scram("b", "pw", List.of()), scram("c", "pw", List.of()));

        var r = reconciler.reconcile(Map.of(), List.of(), List.of(acl("User:c", "kept")), Map.of("uid-c", "c"), three, d -> {
            prepared.add(d.name());
            return d;
        }, () -> true);

        assertThat(r.complete()).isFalse();
        assertThat(prepared).as("only what is judged is prepared (its Secret read)").containsExactly("a");
        assertThat(r.verdicts()).extracting(v -> v.declaration().name()).containsExactly("a");
        assertThat(r.scramUsers()).containsOnlyKeys("a");
        assertThat(r.acls()).as("c is listed, so not gone: kept until it is judged").containsExactly(acl("User:c", "kept"));
        assertThat(r.declaredUsers()).isEqualTo(Map.of("uid-a", "a", "uid-c", "c"));
    }

    /** Passes that each have time for one declaration judge every one in turn, not the first again and again. */
    @Test
    void passesPastTheirBudgetResumeWhereTheLastStopped() throws Exception {
        List<UserDeclaration> three = List.of(scram("a", "pw", List.of()), scram("b", "pw", List.of()), scram("c", "pw", List.of()));
        List<String> judged = new ArrayList<>();
        for (int pass = 0; pass < 4; pass++) {
            var r = reconciler.reconcile(Map.of(), List.of(), List.of(), Map.of(), three, d -> d, () -> true);
            judged.add(r.verdicts().get(0).declaration().name());
        }
        assertThat(judged).containsExactly("a", "b", "c", "a");
    }

    @Test
    void allAclsTogetherStayWithinTheBoundCreateAclsKeeps() throws Exception {
        List<AclEntry> big = new ArrayList<>();
        String longName = "t".repeat(10_000);
        for (int i = 0; big.stream().mapToLong(AclChanges::text).sum() < AclChanges.MAX_TEXT - 5_000; i++) {
            big.add(acl("User:api-" + i, longName));
        }
        UserDeclaration d = new UserDeclaration("1", "x", 1, null, null, null, "simple", List.of(rule("topic", longName, "Read")), Map.of());

        var r = reconcile(Map.of(), List.of(), big, List.of(d));

        assertThat(r.verdicts().get(0).reason()).isEqualTo("InvalidAcl");
        assertThat(r.verdicts().get(0).message()).startsWith("All ACLs together would be over 2097152 bytes");
        assertThat(r.acls()).hasSize(big.size());
    }

    @Test
    void oneDeclarationAddsAtMostAThousandDistinctAcls() throws Exception {
        List<UserDeclaration.Rule> same = java.util.Collections.nCopies(5000, rule("topic", "t", "Read"));
        var ok = reconcile(Map.of(), List.of(), List.of(), List.of(
                new UserDeclaration("1", "x", 1, null, null, null, "simple", same, Map.of())));
        assertThat(ok.verdicts().get(0).ready()).as("one ACL, however often declared").isTrue();
        assertThat(ok.acls()).hasSize(1);

        List<UserDeclaration.Rule> many = new ArrayList<>();
        for (int i = 0; i <= 1000; i++) {
            many.add(rule("topic", "t" + i, "Read"));
        }
        var r = reconcile(Map.of(), List.of(), List.of(), List.of(new UserDeclaration("1", "x", 1, null, null, null, "simple", many, Map.of())));
        assertThat(r.verdicts().get(0).message()).isEqualTo("More than 1000 ACLs.");
        assertThat(r.acls()).isEmpty();
    }
}
