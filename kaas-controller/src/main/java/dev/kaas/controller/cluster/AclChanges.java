package dev.kaas.controller.cluster;

import dev.kaas.common.model.AclEntry;
import dev.kaas.proto.AclFilterResult;
import dev.kaas.proto.AclResult;
import dev.kaas.proto.AclSpec;
import dev.kaas.proto.CreateAclsCall;
import dev.kaas.proto.DeleteAclsCall;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreateAcls and DeleteAcls with Apache 3.7's rules and messages (AclControlManager): a new ACL
 * needs a concrete resource type, LITERAL or PREFIXED, a concrete operation, ALLOW or DENY and a
 * resource name; an ACL that exists already is a success that adds nothing; a filter deletes
 * every ACL it matches, at most {@value #MAX_PER_CALL} per call, or none and an error. Two
 * additions: a principal must read {@code type:name} (Apache stores any string and its
 * authorizer then fails on every request for that resource), and all ACLs together stay under
 * {@value #MAX_TEXT} bytes of names, principals and hosts, because they travel in every published assignment.
 * Pure: the caller publishes {@link Outcome#acls}.
 */
final class AclChanges {
    /** Apache's QuorumController.MAX_RECORDS_PER_USER_OP. */
    static final int MAX_PER_CALL = 10_000;
    /** What the ACLs may add to a published assignment, in bytes (names, principals, hosts as JSON; an overhead per ACL). */
    static final long MAX_TEXT = 2L << 20;
    private static final int OVERHEAD = 128;

    record Outcome<R>(List<AclEntry> acls, List<R> results, boolean changed) {
    }

    private AclChanges() {
    }

    static Outcome<AclResult> create(List<AclEntry> current, CreateAclsCall call) {
        TreeSet<AclEntry> next = new TreeSet<>(current);
        long text = current.stream().mapToLong(AclChanges::text).sum();
        List<AclResult> results = new ArrayList<>();
        int added = 0;
        for (AclSpec spec : call.getAclsList()) {
            String invalid = invalid(spec);
            if (invalid != null) {
                results.add(error(Errors.INVALID_REQUEST, invalid));
                continue;
            }
            AclEntry acl = entry(spec);
            if (!next.contains(acl)) {
                if (++added > MAX_PER_CALL) {
                    results.add(error(Errors.INVALID_REQUEST, "Cannot create more than " + MAX_PER_CALL + " acls in a single operation."));
                    continue;
                }
                if (text + text(acl) > MAX_TEXT) {
                    results.add(error(Errors.INVALID_REQUEST, "Cannot create the acl: kaas keeps at most " + MAX_TEXT
                            + " bytes of acls, and " + next.size() + " acls take " + text + " already."));
                    continue;
                }
                next.add(acl);
                text += text(acl);
            }
            results.add(AclResult.newBuilder().setErrorCode(Errors.NONE.code()).build());
        }
        return new Outcome<>(List.copyOf(next), results, next.size() != current.size());
    }

    static Outcome<AclFilterResult> delete(List<AclEntry> current, DeleteAclsCall call) {
        TreeSet<AclEntry> next = new TreeSet<>(current);
        List<AclFilterResult> results = new ArrayList<>();
        for (AclSpec spec : call.getFiltersList()) {
            AclBindingFilter filter = filter(spec);
            if (filter.patternFilter().isUnknown()) {
                results.add(AclFilterResult.newBuilder().setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unknown patternFilter.").build());
                continue;
            }
            if (filter.entryFilter().isUnknown()) {
                results.add(AclFilterResult.newBuilder().setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unknown entryFilter.").build());
                continue;
            }
            // Apache's filters each see every ACL there was before the call (an ACL two filters match is in both results).
            List<AclEntry> matching = current.stream().filter(a -> filter.matches(a.toBinding())).toList();
            if (matching.size() > MAX_PER_CALL) {
                results.add(AclFilterResult.newBuilder().setErrorCode(Errors.UNKNOWN_SERVER_ERROR.code())
                        .setErrorMessage("Cannot remove more than " + MAX_PER_CALL + " acls in a single delete operation.").build());
                continue;
            }
            AclFilterResult.Builder r = AclFilterResult.newBuilder().setErrorCode(Errors.NONE.code());
            matching.forEach(a -> r.addMatching(spec(a)));
            // One by one: TreeSet.removeAll with a list as large as the set would scan the list per element.
            matching.forEach(next::remove);
            results.add(r.build());
        }
        return new Outcome<>(List.copyOf(next), results, next.size() != current.size());
    }

    /** Apache's AclControlManager.validateNewAcl, then the principal's shape. */
    static String invalid(AclSpec spec) {
        ResourceType type = ResourceType.fromCode((byte) spec.getResourceType());
        if (type == ResourceType.UNKNOWN || type == ResourceType.ANY) {
            return "Invalid resourceType " + type;
        }
        PatternType pattern = PatternType.fromCode((byte) spec.getPatternType());
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            return "Invalid patternType " + pattern;
        }
        AclOperation operation = AclOperation.fromCode((byte) spec.getOperation());
        if (operation == AclOperation.UNKNOWN || operation == AclOperation.ANY) {
            return "Invalid operation " + operation;
        }
        AclPermissionType permission = AclPermissionType.fromCode((byte) spec.getPermission());
        if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
            return "Invalid permissionType " + permission;
        }
        if (!spec.hasResourceName() || spec.getResourceName().isEmpty()) {
            return "Resource name should not be empty";
        }
        if (!spec.hasPrincipal() || spec.getPrincipal().indexOf(':') <= 0) {
            return "Could not parse principal from `" + (spec.hasPrincipal() ? spec.getPrincipal() : "null")
                    + "` (no colon is present separating the principal type from the principal name)";
        }
        if (!spec.hasHost()) {
            return "Invalid null host";
        }
        return null;
    }

    static AclEntry entry(AclSpec spec) {
        return new AclEntry(ResourceType.fromCode((byte) spec.getResourceType()), spec.getResourceName(),
                PatternType.fromCode((byte) spec.getPatternType()), spec.getPrincipal(), spec.getHost(),
                AclOperation.fromCode((byte) spec.getOperation()), AclPermissionType.fromCode((byte) spec.getPermission()));
    }

    static AclBindingFilter filter(AclSpec spec) {
        return new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.fromCode((byte) spec.getResourceType()),
                        spec.hasResourceName() ? spec.getResourceName() : null, PatternType.fromCode((byte) spec.getPatternType())),
                new AccessControlEntryFilter(spec.hasPrincipal() ? spec.getPrincipal() : null, spec.hasHost() ? spec.getHost() : null,
                        AclOperation.fromCode((byte) spec.getOperation()), AclPermissionType.fromCode((byte) spec.getPermission())));
    }

    static AclSpec spec(AclEntry a) {
        return AclSpec.newBuilder().setResourceType(a.resourceType().code()).setResourceName(a.resourceName())
                .setPatternType(a.patternType().code()).setPrincipal(a.principal()).setHost(a.host())
                .setOperation(a.operation().code()).setPermission(a.permission().code()).build();
    }

    /** What the ACL adds to the assignment's JSON, at most: its strings' UTF-8 bytes, each escaped in full at worst. */
    static long text(AclEntry a) {
        return worst(a.resourceName()) + worst(a.principal()) + worst(a.host()) + OVERHEAD;
    }

    private static long worst(String s) {
        long bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            // A control character or a quote is escaped (up to six bytes); anything else is at most three UTF-8 bytes per char.
            bytes += c < 0x20 || c == '"' || c == '\\' ? 6 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        }
        return bytes;
    }

    private static AclResult error(Errors error, String message) {
        return AclResult.newBuilder().setErrorCode(error.code()).setErrorMessage(message).build();
    }
}
