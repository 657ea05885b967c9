package dev.kaas.broker.auth;

import dev.kaas.common.model.AclEntry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * Apache 3.7's StandardAuthorizer decision over one immutable set of ACLs: a super user may do
 * anything; otherwise the ACLs of the resource are those with its literal name, the literal
 * {@code *} and every prefix of its name; a matching DENY wins, then a matching ALLOW (ALL, the
 * operation itself, and DESCRIBE implied by READ, WRITE, DELETE, ALTER, DESCRIBE_CONFIGS by
 * ALTER_CONFIGS); a resource that has ACLs but none for this request is denied, one without any
 * ACL gets {@code allow.everyone.if.no.acl.found}. An ACL matches the session's principal (type
 * and name) or {@code User:*}, and its host or {@code *}.
 */
public final class AclAuthorizer {
    static final String WILDCARD = ResourcePattern.WILDCARD_RESOURCE;
    private static final KafkaPrincipal EVERYONE = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, WILDCARD);
    private static final Set<AclOperation> IMPLIES_DESCRIBE = EnumSet.of(AclOperation.DESCRIBE, AclOperation.READ,
            AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER);
    private static final Set<AclOperation> IMPLIES_DESCRIBE_CONFIGS = EnumSet.of(AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS);

    /** One ACL with its principal parsed once. */
    private record Acl(AclEntry entry, KafkaPrincipal principal) {
    }

    private final List<AclEntry> acls;
    private final Set<String> superUsers;
    private final boolean allowIfNoAcl;
    private final Map<ResourceType, Map<String, List<Acl>>> literal = new EnumMap<>(ResourceType.class);
    private final Map<ResourceType, TreeMap<String, List<Acl>>> prefixed = new EnumMap<>(ResourceType.class);

    /**
     * @param superUsers   {@code super.users}: principals as {@code type:name}
     * @param allowIfNoAcl {@code allow.everyone.if.no.acl.found}
     */
    public AclAuthorizer(List<AclEntry> acls, Set<String> superUsers, boolean allowIfNoAcl) {
        this.acls = List.copyOf(acls);
        this.superUsers = Set.copyOf(superUsers);
        this.allowIfNoAcl = allowIfNoAcl;
        for (AclEntry e : this.acls) {
            int colon = e.principal().indexOf(':');
            KafkaPrincipal p = colon < 0 ? null : new KafkaPrincipal(e.principal().substring(0, colon), e.principal().substring(colon + 1));
            Acl acl = new Acl(e, p);
            if (e.patternType() == PatternType.PREFIXED) {
                prefixed.computeIfAbsent(e.resourceType(), t -> new TreeMap<>()).computeIfAbsent(e.resourceName(), n -> new ArrayList<>()).add(acl);
            } else if (e.patternType() == PatternType.LITERAL) {
                literal.computeIfAbsent(e.resourceType(), t -> new HashMap<>()).computeIfAbsent(e.resourceName(), n -> new ArrayList<>()).add(acl);
            }
        }
    }

    public List<AclEntry> acls() {
        return acls;
    }

    /** The principal as StandardAuthorizer compares it: type and name only (a subclass's extra state does not count). */
    public static KafkaPrincipal base(KafkaPrincipal principal) {
        return principal.getClass() == KafkaPrincipal.class ? principal : new KafkaPrincipal(principal.getPrincipalType(), principal.getName());
    }

    public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type, String name) {
        KafkaPrincipal who = base(principal);
        if (superUsers.contains(who.toString())) {
            return true;
        }
        boolean resourceHasAcls = false;
        boolean allowed = false;
        for (List<Acl> section : sections(type, name)) {
            for (Acl acl : section) {
                resourceHasAcls = true;
                AclPermissionType verdict = verdict(acl, who, host, operation);
                if (verdict == AclPermissionType.DENY) {
                    return false;
                }
                allowed |= verdict == AclPermissionType.ALLOW;
            }
        }
        return allowed || (!resourceHasAcls && allowIfNoAcl);
    }

    /** The ACL lists that apply to a resource: its literal name, the literal wildcard, each prefix of its name. */
    private List<List<Acl>> sections(ResourceType type, String name) {
        List<List<Acl>> out = new ArrayList<>();
        Map<String, List<Acl>> lit = literal.get(type);
        if (lit != null) {
            List<Acl> exact = lit.get(name);
            if (exact != null) {
                out.add(exact);
            }
            List<Acl> any = name.equals(WILDCARD) ? null : lit.get(WILDCARD);
            if (any != null) {
                out.add(any);
            }
        }
        TreeMap<String, List<Acl>> pre = prefixed.get(type);
        if (pre != null) {
            // Walk down the sorted prefixes: each step finds the greatest key <= the probe; when it is not a prefix of
            // the name, no longer key can be either, so the probe shrinks to what they share (Apache's matchesUpTo).
            String probe = name;
            while (true) {
                Map.Entry<String, List<Acl>> floor = pre.floorEntry(probe);
                if (floor == null) {
                    break;
                }
                String key = floor.getKey();
                int common = commonPrefix(name, key);
                if (common == key.length()) {
                    out.add(floor.getValue());
                    if (key.isEmpty()) {
                        break;
                    }
                    probe = key.substring(0, key.length() - 1);
                } else {
                    probe = name.substring(0, common);
                }
            }
        }
        return out;
    }

    private static int commonPrefix(String a, String b) {
        int n = Math.min(a.length(), b.length());
        int i = 0;
        while (i < n && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    /** StandardAuthorizerData.findResult: ALLOW, DENY, or null when the ACL does not speak to this request. */
    private static AclPermissionType verdict(Acl acl, KafkaPrincipal who, String host, AclOperation operation) {
        if (acl.principal() == null || !(acl.principal().equals(who) || acl.principal().equals(EVERYONE))) {
            return null;
        }
        AclEntry e = acl.entry();
        if (!e.host().equals(WILDCARD) && !e.host().equals(host)) {
            return null;
        }
        if (e.operation() != AclOperation.ALL) {
            if (e.permission() == AclPermissionType.ALLOW) {
                boolean matches = switch (operation) {
                    case DESCRIBE -> IMPLIES_DESCRIBE.contains(e.operation());
                    case DESCRIBE_CONFIGS -> IMPLIES_DESCRIBE_CONFIGS.contains(e.operation());
                    default -> operation == e.operation();
                };
                if (!matches) {
                    return null;
                }
            } else if (operation != e.operation()) {
                return null;
            }
        }
        return e.permission();
    }

    /**
     * Whether the session may do {@code operation} on at least one resource of the type, as
     * kafka-clients' {@code Authorizer.authorizeByResourceType} decides (what Apache uses for
     * InitProducerId without a transactional id): allowed on any resource, unless every ALLOW is
     * covered by a DENY of the same literal name or of a prefix of it; a literal {@code *} DENY
     * denies it all. Implied operations do not count here, as in Apache.
     */
    public boolean authorizeByResourceType(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type) {
        if (authorize(principal, host, operation, type, "hardcode")) {
            return true;
        }
        KafkaPrincipal who = base(principal);
        Map<PatternType, Set<String>> deny = new EnumMap<>(PatternType.class);
        Map<PatternType, Set<String>> allow = new EnumMap<>(PatternType.class);
        for (PatternType p : List.of(PatternType.LITERAL, PatternType.PREFIXED)) {
            deny.put(p, new HashSet<>());
            allow.put(p, new HashSet<>());
        }
        boolean wildcardAllow = false;
        for (AclEntry e : acls) {
            if (e.resourceType() != type || (!e.host().equals(host) && !e.host().equals(WILDCARD))) {
                continue;
            }
            if (!e.principal().equals("User:*") && !principalOf(e).equals(who)) {
                continue;
            }
            if (e.operation() != operation && e.operation() != AclOperation.ALL) {
                continue;
            }
            if (e.permission() == AclPermissionType.DENY) {
                if (e.patternType() == PatternType.LITERAL && e.resourceName().equals(WILDCARD)) {
                    return false;
                }
                deny.get(e.patternType()).add(e.resourceName());
            } else if (e.permission() == AclPermissionType.ALLOW) {
                if (e.patternType() == PatternType.LITERAL && e.resourceName().equals(WILDCARD)) {
                    wildcardAllow = true;
                } else {
                    allow.get(e.patternType()).add(e.resourceName());
                }
            }
        }
        if (wildcardAllow) {
            return true;
        }
        for (Map.Entry<PatternType, Set<String>> entry : allow.entrySet()) {
            for (String allowed : entry.getValue()) {
                if (entry.getKey() == PatternType.LITERAL && deny.get(PatternType.LITERAL).contains(allowed)) {
                    continue;
                }
                boolean dominated = false;
                for (int i = 1; i <= allowed.length() && !dominated; i++) {
                    dominated = deny.get(PatternType.PREFIXED).contains(allowed.substring(0, i));
                }
                if (!dominated) {
                    return true;
                }
            }
        }
        return false;
    }

    private static KafkaPrincipal principalOf(AclEntry e) {
        int colon = e.principal().indexOf(':');
        return colon < 0 ? new KafkaPrincipal("", e.principal()) : new KafkaPrincipal(e.principal().substring(0, colon), e.principal().substring(colon + 1));
    }

    /** The ACLs a DescribeAcls filter matches. */
    public List<AclBinding> acls(AclBindingFilter filter) {
        List<AclBinding> out = new ArrayList<>();
        for (AclEntry e : acls) {
            AclBinding b = e.toBinding();
            if (filter.matches(b)) {
                out.add(b);
            }
        }
        return out;
    }
}
