package dev.kaas.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.AclEntry;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;

/**
 * The ACL decision: StandardAuthorizer's rules one by one, then the same decisions as Apache
 * 3.7.2's own StandardAuthorizer (and kafka-clients' authorizeByResourceType on it) over many
 * random ACL sets and questions, with names chosen to overlap as prefixes.
 */
class AclAuthorizerTest {
    static final KafkaPrincipal ALICE = new KafkaPrincipal("User", "alice");
    static final KafkaPrincipal BOB = new KafkaPrincipal("User", "bob");
    static final String HOST = "127.0.0.1";

    static AclEntry acl(ResourceType type, String name, PatternType pattern, String principal, String host, AclOperation op,
                        AclPermissionType permission) {
        return new AclEntry(type, name, pattern, principal, host, op, permission);
    }

    static AclEntry allow(String topic, PatternType pattern, String principal, AclOperation op) {
        return acl(ResourceType.TOPIC, topic, pattern, principal, "*", op, AclPermissionType.ALLOW);
    }

    static AclEntry deny(String topic, PatternType pattern, String principal, AclOperation op) {
        return acl(ResourceType.TOPIC, topic, pattern, principal, "*", op, AclPermissionType.DENY);
    }

    static boolean read(AclAuthorizer a, KafkaPrincipal who, String topic) {
        return a.authorize(who, HOST, AclOperation.READ, ResourceType.TOPIC, topic);
    }

    @Test
    void denyWinsOverAllowAndOnlyForItsOperation() {
        AclAuthorizer a = new AclAuthorizer(List.of(allow("*", PatternType.LITERAL, "User:alice", AclOperation.ALL),
                deny("secret-", PatternType.PREFIXED, "User:alice", AclOperation.READ)), Set.of(), false);

        assertThat(read(a, ALICE, "secret-x")).isFalse();
        assertThat(read(a, ALICE, "open-x")).isTrue();
        assertThat(a.authorize(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC, "secret-x")).as("DENY READ leaves WRITE").isTrue();
        assertThat(read(a, BOB, "open-x")).as("a resource with ACLs, none for bob").isFalse();
    }

    @Test
    void allowImpliesDescribeAndAlterConfigsImpliesDescribeConfigsButDenyImpliesNothing() {
        AclAuthorizer a = new AclAuthorizer(List.of(allow("t", PatternType.LITERAL, "User:alice", AclOperation.READ),
                allow("t", PatternType.LITERAL, "User:alice", AclOperation.ALTER_CONFIGS),
                deny("u", PatternType.LITERAL, "User:alice", AclOperation.READ),
                allow("u", PatternType.LITERAL, "User:alice", AclOperation.DESCRIBE)), Set.of(), false);

        assertThat(a.authorize(ALICE, HOST, AclOperation.DESCRIBE, ResourceType.TOPIC, "t")).isTrue();
        assertThat(a.authorize(ALICE, HOST, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "t")).isTrue();
        assertThat(a.authorize(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC, "t")).isFalse();
        assertThat(a.authorize(ALICE, HOST, AclOperation.DESCRIBE, ResourceType.TOPIC, "u")).as("DENY READ does not deny DESCRIBE").isTrue();
    }

    @Test
    void superUsersWildcardPrincipalsHostsAndTheDefaultForResourcesWithoutAcls() {
        AclAuthorizer a = new AclAuthorizer(List.of(allow("shared", PatternType.LITERAL, "User:*", AclOperation.READ),
                acl(ResourceType.TOPIC, "pinned", PatternType.LITERAL, "User:alice", "10.0.0.9", AclOperation.READ, AclPermissionType.ALLOW)),
                Set.of("User:admin"), true);

        assertThat(read(a, new KafkaPrincipal("User", "admin"), "pinned")).isTrue();
        assertThat(read(a, BOB, "shared")).isTrue();
        assertThat(read(a, ALICE, "pinned")).as("ACL for another host").isFalse();
        assertThat(a.authorize(ALICE, "10.0.0.9", AclOperation.READ, ResourceType.TOPIC, "pinned")).isTrue();
        assertThat(read(a, BOB, "no-acls")).as("allow.everyone.if.no.acl.found").isTrue();
        assertThat(read(new AclAuthorizer(List.of(), Set.of(), false), BOB, "no-acls")).isFalse();
        assertThat(a.authorize(BOB, HOST, AclOperation.READ, ResourceType.GROUP, "shared")).as("another resource type").isTrue();
    }

    @Test
    void prefixesMatchEveryLongerNameAndOnlyThose() {
        AclAuthorizer a = new AclAuthorizer(List.of(allow("ab", PatternType.PREFIXED, "User:alice", AclOperation.READ),
                allow("abd", PatternType.PREFIXED, "User:bob", AclOperation.READ), allow("b", PatternType.LITERAL, "User:bob", AclOperation.READ)),
                Set.of(), false);

        assertThat(read(a, ALICE, "ab")).isTrue();
        assertThat(read(a, ALICE, "abc")).isTrue();
        assertThat(read(a, ALICE, "abdz")).as("through a longer prefix that is someone else's").isTrue();
        assertThat(read(a, ALICE, "a")).isFalse();
        assertThat(read(a, ALICE, "ac")).isFalse();
        assertThat(read(a, BOB, "abd")).isTrue();
        assertThat(read(a, BOB, "abc")).isFalse();
        assertThat(read(a, BOB, "bb")).isFalse();
    }

    // --- Against Apache's own authorizer ---

    record Ctx(KafkaPrincipal principal, InetAddress clientAddress) implements AuthorizableRequestContext {
        @Override
        public String listenerName() {
            return "SASL_PLAINTEXT";
        }

        @Override
        public SecurityProtocol securityProtocol() {
            return SecurityProtocol.SASL_PLAINTEXT;
        }

        @Override
        public int requestType() {
            return ApiKeys.METADATA.id;
        }

        @Override
        public int requestVersion() {
            return 12;
        }

        @Override
        public String clientId() {
            return "parity";
        }

        @Override
        public int correlationId() {
            return 1;
        }
    }

    static StandardAuthorizer apache(List<AclEntry> acls, String superUsers, boolean allowIfNoAcl) {
        StandardAuthorizer a = new StandardAuthorizer();
        a.configure(Map.of("super.users", superUsers, "allow.everyone.if.no.acl.found", Boolean.toString(allowIfNoAcl)));
        Map<Uuid, StandardAcl> snapshot = new HashMap<>();
        acls.forEach(e -> snapshot.put(Uuid.randomUuid(), StandardAcl.fromAclBinding(e.toBinding())));
        a.loadSnapshot(snapshot);
        a.completeInitialLoad();
        return a;
    }

    @Test
    void decidesAsApachesStandardAuthorizerOnRandomAclSets() throws Exception {
        String[] names = {"a", "ab", "abc", "abd", "b", "ba", "*", "a*", "abcd", ""};
        String[] principals = {"User:alice", "User:bob", "User:*", "Group:ops"};
        KafkaPrincipal[] asking = {ALICE, BOB, new KafkaPrincipal("Group", "ops"), new KafkaPrincipal("User", "admin")};
        String[] hosts = {"*", "127.0.0.1", "10.0.0.1"};
        ResourceType[] types = {ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID};
        List<AclOperation> ops = new ArrayList<>(List.of(AclOperation.values()));
        ops.removeAll(List.of(AclOperation.ANY, AclOperation.UNKNOWN));
        Random random = new Random(20261201);
        int compared = 0;
        int allowed = 0;
        for (int round = 0; round < 300; round++) {
            List<AclEntry> acls = new ArrayList<>();
            for (int i = random.nextInt(12); i > 0; i--) {
                String name = names[random.nextInt(names.length - 1)];
                acls.add(acl(types[random.nextInt(types.length)], name, random.nextBoolean() ? PatternType.LITERAL : PatternType.PREFIXED,
                        principals[random.nextInt(principals.length)], hosts[random.nextInt(hosts.length)],
                        ops.get(random.nextInt(ops.size())), random.nextInt(3) == 0 ? AclPermissionType.DENY : AclPermissionType.ALLOW));
            }
            boolean allowIfNoAcl = random.nextBoolean();
            AclAuthorizer ours = new AclAuthorizer(List.copyOf(new java.util.TreeSet<>(acls)), Set.of("User:admin"), allowIfNoAcl);
            StandardAuthorizer theirs = apache(acls, "User:admin", allowIfNoAcl);
            for (int q = 0; q < 60; q++) {
                KafkaPrincipal who = asking[random.nextInt(asking.length)];
                String host = random.nextBoolean() ? "127.0.0.1" : "10.0.0.1";
                AclOperation op = ops.get(random.nextInt(ops.size()));
                ResourceType type = types[random.nextInt(types.length)];
                String name = names[random.nextInt(names.length)];
                Ctx ctx = new Ctx(who, InetAddress.getByName(host));
                if (!name.isEmpty()) {
                    AuthorizationResult expected = theirs.authorize(ctx, List.of(new Action(op, new ResourcePattern(type, name, PatternType.LITERAL),
                            1, false, false))).get(0);
                    boolean got = ours.authorize(who, host, op, type, name);
                    assertThat(got).as("%s from %s: %s %s %s with %s (allow.everyone=%s)", who, host, op, type, name, acls, allowIfNoAcl)
                            .isEqualTo(expected == AuthorizationResult.ALLOWED);
                    allowed += got ? 1 : 0;
                    compared++;
                }
                if (op != AclOperation.ALL) {
                    AuthorizationResult byType = theirs.authorizeByResourceType(ctx, op, type);
                    assertThat(ours.authorizeByResourceType(who, host, op, type)).as("by type: %s from %s: %s %s with %s", who, host, op, type, acls)
                            .isEqualTo(byType == AuthorizationResult.ALLOWED);
                }
            }
        }
        // Both outcomes were exercised, many times.
        assertThat(compared).isGreaterThan(10_000);
        assertThat(allowed).isBetween(compared / 20, compared - compared / 20);
    }
}
