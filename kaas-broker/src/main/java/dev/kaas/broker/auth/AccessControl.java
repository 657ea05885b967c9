package dev.kaas.broker.auth;

import java.util.List;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/** The broker's authorizer: the ACLs the controller published, with this broker's authorizer settings. */
public interface AccessControl {
    /** No authorizer configured. */
    AccessControl NONE = new AccessControl() {
        @Override
        public Access session(KafkaPrincipal principal, String host) {
            return Access.ALL;
        }

        @Override
        public List<AclBinding> acls(AclBindingFilter filter) {
            return List.of();
        }
    };

    /**
     * @param host the client's address as ACL hosts name it ({@code 127.0.0.1}, no leading slash)
     */
    Access session(KafkaPrincipal principal, String host);

    /** The ACLs a DescribeAcls filter matches. */
    List<AclBinding> acls(AclBindingFilter filter);
}
