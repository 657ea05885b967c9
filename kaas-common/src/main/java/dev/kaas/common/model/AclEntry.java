package dev.kaas.common.model;

import java.util.Comparator;
import java.util.Objects;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * One ACL as Apache's controller keeps it (AccessControlEntryRecord, replayed): CreateAcls,
 * {@code kafka-acls.sh --add}. The ACL itself is its identity; creating it twice keeps one, as
 * Apache's {@code AclControlManager} does.
 *
 * @param principal {@code type:name}, {@code User:*} for everyone
 * @param host      a client address as the broker sees it, or {@code *}
 */
public record AclEntry(ResourceType resourceType, String resourceName, PatternType patternType, String principal,
                       String host, AclOperation operation, AclPermissionType permission) implements Comparable<AclEntry> {
    /** Resource, then who and what: the published order, so the same ACLs are always the same bytes. */
    private static final Comparator<AclEntry> ORDER = Comparator.comparing(AclEntry::resourceType)
            .thenComparing(AclEntry::resourceName).thenComparing(AclEntry::patternType).thenComparing(AclEntry::principal)
            .thenComparing(AclEntry::host).thenComparing(AclEntry::operation).thenComparing(AclEntry::permission);

    public AclEntry {
        Objects.requireNonNull(resourceType, "resourceType");
        Objects.requireNonNull(resourceName, "resourceName");
        Objects.requireNonNull(patternType, "patternType");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(permission, "permission");
    }

    public static AclEntry of(AclBinding binding) {
        return new AclEntry(binding.pattern().resourceType(), binding.pattern().name(), binding.pattern().patternType(),
                binding.entry().principal(), binding.entry().host(), binding.entry().operation(), binding.entry().permissionType());
    }

    public AclBinding toBinding() {
        return new AclBinding(new ResourcePattern(resourceType, resourceName, patternType),
                new AccessControlEntry(principal, host, operation, permission));
    }

    @Override
    public int compareTo(AclEntry o) {
        return ORDER.compare(this, o);
    }
}
