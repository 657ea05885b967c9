package dev.kaas.controller.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.model.AclEntry;
import dev.kaas.proto.AclFilterResult;
import dev.kaas.proto.AclResult;
import dev.kaas.proto.AclSpec;
import dev.kaas.proto.CreateAclsCall;
import dev.kaas.proto.DeleteAclsCall;
import java.util.List;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

class AclChangesTest {
    // Apache's codes: resource TOPIC 2, GROUP 3; pattern ANY 1, MATCH 2, LITERAL 3, PREFIXED 4;
    // operation ANY 1, ALL 2, READ 3, WRITE 4; permission ANY 1, DENY 2, ALLOW 3.
    static AclSpec acl(int type, String name, int pattern, String principal, int operation, int permission) {
        return AclSpec.newBuilder().setResourceType(type).setResourceName(name).setPatternType(pattern).setPrincipal(principal)
                .setHost("*").setOperation(operation).setPermission(permission).build();
    }

    private static List<AclEntry> create(List<AclEntry> current, AclSpec... specs) {
        return AclChanges.create(current, CreateAclsCall.newBuilder().addAllAcls(List.of(specs)).build()).acls();
    }

    @Test
    void createRefusesWhatApachesAclControlManagerRefusesWithItsMessages() {
        var outcome = AclChanges.create(List.of(), CreateAclsCall.newBuilder()
                .addAcls(acl(1, "x", 3, "User:a", 3, 3))       // resource ANY
                .addAcls(acl(2, "x", 2, "User:a", 3, 3))       // pattern MATCH
                .addAcls(acl(2, "x", 3, "User:a", 1, 3))       // operation ANY
                .addAcls(acl(2, "x", 3, "User:a", 3, 1))       // permission ANY
                .addAcls(acl(2, "", 3, "User:a", 3, 3))        // empty name
                .addAcls(acl(2, "x", 3, "alice", 3, 3))        // no principal type
                .addAcls(acl(2, "x", 3, "User:a", 3, 3))       // fine
                .build());

        assertThat(outcome.results()).extracting(AclResult::getErrorMessage).containsExactly(
                "Invalid resourceType ANY", "Invalid patternType MATCH", "Invalid operation ANY", "Invalid permissionType ANY",
                "Resource name should not be empty",
                "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)", "");
        assertThat(outcome.results()).extracting(AclResult::getErrorCode).containsExactly(
                (int) Errors.INVALID_REQUEST.code(), (int) Errors.INVALID_REQUEST.code(), (int) Errors.INVALID_REQUEST.code(),
                (int) Errors.INVALID_REQUEST.code(), (int) Errors.INVALID_REQUEST.code(), (int) Errors.INVALID_REQUEST.code(), 0);
        assertThat(outcome.acls()).containsExactly(new AclEntry(ResourceType.TOPIC, "x", PatternType.LITERAL, "User:a", "*",
                AclOperation.READ, AclPermissionType.ALLOW));
    }

    @Test
    void anAclThatExistsIsASuccessThatAddsNothing() {
        List<AclEntry> one = create(List.of(), acl(2, "x", 3, "User:a", 3, 3));
        var again = AclChanges.create(one, CreateAclsCall.newBuilder().addAcls(acl(2, "x", 3, "User:a", 3, 3))
                .addAcls(acl(2, "x", 3, "User:a", 3, 3)).build());

        assertThat(again.changed()).isFalse();
        assertThat(again.results()).extracting(AclResult::getErrorCode).containsExactly(0, 0);
        assertThat(again.acls()).isEqualTo(one);
    }

    @Test
    void aFilterDeletesWhatItMatchesAndEachFilterSeesTheAclsBeforeTheCall() {
        List<AclEntry> acls = create(List.of(), acl(2, "orders", 3, "User:a", 3, 3), acl(2, "ord", 4, "User:a", 4, 3),
                acl(3, "g", 3, "User:b", 3, 2));
        // MATCH "orders": the literal and the prefix that covers it; ANY on group: the group ACL; the second topic filter again matches the literal.
        var outcome = AclChanges.delete(acls, DeleteAclsCall.newBuilder()
                .addFilters(AclSpec.newBuilder().setResourceType(2).setResourceName("orders").setPatternType(2).setOperation(1).setPermission(1))
                .addFilters(AclSpec.newBuilder().setResourceType(3).setPatternType(1).setOperation(1).setPermission(1))
                .addFilters(AclSpec.newBuilder().setResourceType(2).setPatternType(3).setPrincipal("User:a").setOperation(3).setPermission(3))
                .addFilters(AclSpec.newBuilder().setResourceType(2).setPatternType(0).setOperation(1).setPermission(1))
                .build());

        assertThat(outcome.results().get(0).getMatchingList()).extracting(AclSpec::getResourceName).containsExactlyInAnyOrder("orders", "ord");
        assertThat(outcome.results().get(1).getMatchingList()).extracting(AclSpec::getResourceName).containsExactly("g");
        assertThat(outcome.results().get(2).getMatchingList()).extracting(AclSpec::getResourceName).containsExactly("orders");
        assertThat(outcome.results().get(3)).extracting(AclFilterResult::getErrorCode, AclFilterResult::getErrorMessage)
                .containsExactly((int) Errors.INVALID_REQUEST.code(), "Unknown patternFilter.");
        assertThat(outcome.acls()).isEmpty();
        assertThat(outcome.changed()).isTrue();
    }

    @Test
    void allAclsTogetherStayWithinWhatAnAssignmentCanCarry() {
        String longName = "t".repeat(30_000);
        List<AclEntry> acls = List.of();
        int made = 0;
        for (int i = 0; i < 100; i++) {
            var outcome = AclChanges.create(acls, CreateAclsCall.newBuilder().addAcls(acl(2, longName + i, 3, "User:a", 3, 3)).build());
            if (outcome.results().get(0).getErrorCode() != 0) {
                assertThat(outcome.results().get(0).getErrorMessage()).startsWith("Cannot create the acl: kaas keeps at most");
                assertThat(outcome.changed()).isFalse();
                break;
            }
            acls = outcome.acls();
            made++;
        }
        assertThat(made).isBetween(60, 70);
        assertThat(acls.stream().mapToLong(a -> a.resourceName().length()).sum()).isLessThanOrEqualTo(AclChanges.MAX_TEXT);
    }
}
