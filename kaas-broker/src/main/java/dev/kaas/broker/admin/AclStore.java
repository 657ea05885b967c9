package dev.kaas.broker.admin;

import dev.kaas.broker.auth.Access;
import dev.kaas.broker.auth.AccessControl;
import dev.kaas.broker.auth.AclAuthorizer;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.broker.config.BrokerConfig;
import dev.kaas.common.model.AclEntry;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.SecurityUtils;

/**
 * The ACLs of the assignment this broker applied last, with this broker's authorizer settings
 * ({@code authorizer.class.name}, {@code super.users}, {@code allow.everyone.if.no.acl.found}):
 * an ACL created through any broker applies here once the controller's push arrives, as Apache's
 * brokers authorize from their metadata image. The index is rebuilt once per published ACL set,
 * by the first request that sees it.
 */
@Singleton
public class AclStore implements AccessControl {
    /** The authorizer classes whose semantics kaas implements (KRaft's, and ZooKeeper mode's, which decides the same). */
    static final Set<String> AUTHORIZERS = Set.of("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "kafka.security.authorizer.AclAuthorizer");

    private final boolean enabled;
    private final Set<String> superUsers;
    private final boolean allowIfNoAcl;
    private final Supplier<List<AclEntry>> published;
    /** Before the first assignment: super users only. */
    private final AclAuthorizer notReady;
    private volatile Snapshot current;

    /** The index, and the published list it was built from (compared by identity: a new publication is a new list). */
    private record Snapshot(List<AclEntry> source, AclAuthorizer authorizer) {
    }

    /** Made when the listeners are (a singleton, not a lazy proxy), so a bad setting stops start-up. */
    @Inject
    public AclStore(ClusterView view, BrokerConfig config) {
        this(config.broker().authorizerClassName().orElse(""), config.broker().superUsers().orElse(""),
                config.broker().allowEveryoneIfNoAclFound(), () -> view.assignment().version() == 0 ? null : view.assignment().acls());
    }

    /**
     * @param published the ACLs of the assignment applied last, or null before the first: until
     *                  then only super users are served, others' connections are closed (Apache's
     *                  listeners wait for its authorizer's first load; with no ACLs known,
     *                  {@code allow.everyone.if.no.acl.found} would open every resource)
     * @throws IllegalArgumentException an authorizer class kaas does not implement, or a super user
     *                                  that is not {@code type:name} (start-up stops, as Apache's would)
     */
    public AclStore(String authorizerClass, String superUsers, boolean allowIfNoAcl, Supplier<List<AclEntry>> published) {
        String cls = authorizerClass.trim();
        if (!cls.isEmpty() && !AUTHORIZERS.contains(cls)) {
            throw new IllegalArgumentException("authorizer.class.name=" + cls + " is not an authorizer kaas implements; use "
                    + "org.apache.kafka.metadata.authorizer.StandardAuthorizer (ACLs through the Kafka API) or leave it unset");
        }
        this.enabled = !cls.isEmpty();
        // Apache's StandardAuthorizer.getConfiguredSuperUsers: ';'-separated, each parsed (a bad one stops start-up).
        Set<String> users = new LinkedHashSet<>();
        for (String v : superUsers.split(";")) {
            String u = v.trim();
            if (!u.isEmpty()) {
                SecurityUtils.parseKafkaPrincipal(u);
                users.add(u);
            }
        }
        this.superUsers = Set.copyOf(users);
        this.allowIfNoAcl = allowIfNoAcl;
        this.notReady = new AclAuthorizer(List.of(), this.superUsers, false);
        this.published = published;
    }

    public boolean enabled() {
        return enabled;
    }

    private AclAuthorizer authorizer() {
        List<AclEntry> acls = published.get();
        if (acls == null) {
            return notReady;
        }
        Snapshot s = current;
        if (s == null || s.source() != acls) {
            // Every publication is a new list, mostly with the same ACLs: the index is rebuilt only when they changed.
            s = s != null && s.source().equals(acls) ? new Snapshot(acls, s.authorizer())
                    : new Snapshot(acls, new AclAuthorizer(acls, superUsers, allowIfNoAcl));
            current = s;
        }
        return s.authorizer();
    }

    @Override
    public Access session(KafkaPrincipal principal, String host) {
        if (!enabled) {
            return Access.ALL;
        }
        boolean ready = published.get() != null || superUsers.contains(AclAuthorizer.base(principal).toString());
        return new Access() {
            @Override
            public boolean ready() {
                return ready;
            }

            @Override
            public boolean allowed(AclOperation operation, ResourceType type, String name) {
                return authorizer().authorize(principal, host, operation, type, name);
            }

            @Override
            public boolean allowedOnAny(AclOperation operation, ResourceType type) {
                return authorizer().authorizeByResourceType(principal, host, operation, type);
            }

            @Override
            public boolean enabled() {
                return true;
            }
        };
    }

    @Override
    public List<AclBinding> acls(AclBindingFilter filter) {
        return authorizer().acls(filter);
    }
}
