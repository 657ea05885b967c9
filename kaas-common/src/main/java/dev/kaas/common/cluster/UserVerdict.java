package dev.kaas.common.cluster;

/**
 * The controller's answer to one {@link UserDeclaration}. The binding records it where the user
 * looks (Kubernetes: the resource's status, {@code username} and condition {@code Ready}).
 *
 * @param username the user name now applied for the declaration (its principal is
 *                 {@code User:<username>}), null when nothing is
 * @param reason   a CamelCase reason when not ready (Kubernetes condition reason), null when ready
 * @param message  what a user must change, null when ready
 */
public record UserVerdict(UserDeclaration declaration, String username, String reason, String message) {
    public boolean ready() {
        return reason == null;
    }
}
