package dev.kaas.common.cluster;

import dev.kaas.common.model.TopicSpec;

/**
 * The controller's answer to one {@link TopicDeclaration}: what is in effect for it, and whether
 * that is what it declares. The binding records it where the user looks (Kubernetes: the
 * resource's status, condition {@code Ready}).
 *
 * @param accepted what the catalog holds for the declaration, null if it was never accepted
 * @param reason   a CamelCase reason when not ready (Kubernetes condition reason), null when ready
 * @param message  what a user must change, null when ready
 */
public record TopicVerdict(TopicDeclaration declaration, TopicSpec accepted, String reason, String message) {
    public boolean ready() {
        return reason == null;
    }

    public static TopicVerdict ready(TopicDeclaration declaration, TopicSpec accepted) {
        return new TopicVerdict(declaration, accepted, null, null);
    }
}
