package dev.kaas.controller.cluster;

import dev.kaas.common.model.ScramUser;
import dev.kaas.proto.AlterScramCredentialsCall;
import dev.kaas.proto.ScramDeletion;
import dev.kaas.proto.ScramResult;
import dev.kaas.proto.ScramUpsertion;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.common.protocol.Errors;

/**
 * AlterUserScramCredentials with Apache 3.7's rules and messages: an empty name or too few (below
 * the mechanism's 4096) or too many (above 16384) iterations UNACCEPTABLE_CREDENTIAL, an unknown
 * mechanism UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist
 * RESOURCE_NOT_FOUND, a user's credential for one mechanism changed twice in one request
 * DUPLICATE_RESOURCE. Each user's changes apply together or not at all, one result per user.
 * The stored and server keys come computed by the receiving broker: the salted password, which
 * would log in as the user, never reaches the controller.
 * Duplicates are counted per user and mechanism, as Apache's ZooKeeper-mode broker counts them:
 * Apache 3.7's KRaft controller counts them per user, which refuses its own documentation's
 * {@code --add-config 'SCRAM-SHA-256=[…],SCRAM-SHA-512=[…]'}. Pure: the caller publishes {@link Outcome#users}.
 */
final class ScramCredentialChanges {
    /** Apache's ScramControlManager.MAX_ITERATIONS. */
    static final int MAX_ITERATIONS = 16384;
    /** Bounds on untrusted request bytes: names as Apache's principal names go, salts and salted passwords far above any real one. */
    static final int MAX_NAME_CHARS = Short.MAX_VALUE;
    static final int MAX_BYTES = 1024;

    record Outcome(Map<String, List<ScramUser>> users, List<ScramResult> results, boolean changed) {
    }

    private ScramCredentialChanges() {
    }

    static Outcome apply(Map<String, List<ScramUser>> current, AlterScramCredentialsCall call) {
        // Per user, in request order: a user's changes apply together or not at all.
        Map<String, List<Object>> byUser = new LinkedHashMap<>();
        call.getDeletionsList().forEach(d -> byUser.computeIfAbsent(d.getName(), k -> new ArrayList<>()).add(d));
        call.getUpsertionsList().forEach(u -> byUser.computeIfAbsent(u.getName(), k -> new ArrayList<>()).add(u));
        Map<String, List<ScramUser>> next = new TreeMap<>();
        current.forEach((user, list) -> next.put(user, new ArrayList<>(list)));
        List<ScramResult> results = new ArrayList<>();
        boolean changed = false;
        for (Map.Entry<String, List<Object>> e : byUser.entrySet()) {
            String user = e.getKey();
            ScramResult invalid = null;
            java.util.Set<Integer> mechanisms = new java.util.HashSet<>();
            for (Object change : e.getValue()) {
                int type = change instanceof ScramDeletion d ? d.getMechanism() : ((ScramUpsertion) change).getMechanism();
                invalid = change instanceof ScramDeletion d ? invalidDeletion(current, d) : invalidUpsertion((ScramUpsertion) change);
                if (invalid == null && !mechanisms.add(type)) {
                    invalid = error(user, Errors.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request");
                }
                if (invalid != null) {
                    break;
                }
            }
            if (invalid != null) {
                results.add(invalid);
                continue;
            }
            List<ScramUser> after = new ArrayList<>(next.getOrDefault(user, List.of()));
            try {
                for (Object change : e.getValue()) {
                    if (change instanceof ScramDeletion d) {
                        String name = mechanism(d.getMechanism()).mechanismName();
                        after.removeIf(c -> c.mechanism().equals(name));
                    } else {
                        ScramUser credential = credential((ScramUpsertion) change);
                        after.removeIf(c -> c.mechanism().equals(credential.mechanism()));
                        after.add(credential);
                    }
                }
            } catch (Exception ex) {
                results.add(error(user, Errors.UNKNOWN_SERVER_ERROR, String.valueOf(ex.getMessage())));
                continue;
            }
            if (after.isEmpty()) {
                next.remove(user);
            } else {
                next.put(user, after);
            }
            changed = true;
            results.add(ScramResult.newBuilder().setUser(user).setErrorCode(Errors.NONE.code()).build());
        }
        return new Outcome(next, results, changed);
    }

    private static ScramResult invalidDeletion(Map<String, List<ScramUser>> current, ScramDeletion d) {
        ScramResult invalid = validate(d.getName(), d.getMechanism());
        if (invalid == null && !has(current, d.getName(), mechanism(d.getMechanism()))) {
            invalid = error(d.getName(), Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist");
        }
        return invalid;
    }

    private static ScramResult invalidUpsertion(ScramUpsertion u) {
        ScramResult invalid = validate(u.getName(), u.getMechanism());
        if (invalid != null) {
            return invalid;
        }
        ScramMechanism m = ScramMechanism.fromType((byte) u.getMechanism());
        int min = org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(m.mechanismName()).minIterations();
        if (u.getIterations() < min) {
            return error(u.getName(), Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        }
        if (u.getIterations() > MAX_ITERATIONS) {
            return error(u.getName(), Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        }
        if (u.getSalt().isEmpty() || u.getSalt().size() > MAX_BYTES || u.getStoredKey().isEmpty() || u.getStoredKey().size() > MAX_BYTES
                || u.getServerKey().isEmpty() || u.getServerKey().size() > MAX_BYTES) {
            // Apache's controller would fail computing the keys of an empty salted password (UNKNOWN_SERVER_ERROR).
            return error(u.getName(), Errors.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty");
        }
        return null;
    }

    /** The credential as the broker computed it (Apache's ScramFormatter, in AlterUserScramCredentialsHandler). */
    static ScramUser credential(ScramUpsertion u) {
        ScramMechanism m = ScramMechanism.fromType((byte) u.getMechanism());
        Base64.Encoder b64 = Base64.getEncoder();
        return new ScramUser(m.mechanismName(), b64.encodeToString(u.getSalt().toByteArray()), b64.encodeToString(u.getStoredKey().toByteArray()),
                b64.encodeToString(u.getServerKey().toByteArray()), u.getIterations());
    }

    private static ScramResult validate(String name, int mechanism) {
        if (name.isEmpty()) {
            return error(name, Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (name.length() > MAX_NAME_CHARS) {
            return error(name, Errors.UNACCEPTABLE_CREDENTIAL, "Username is longer than " + MAX_NAME_CHARS + " characters");
        }
        if (mechanism(mechanism) == ScramMechanism.UNKNOWN) {
            return error(name, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        }
        return null;
    }

    private static ScramMechanism mechanism(int type) {
        return type < Byte.MIN_VALUE || type > Byte.MAX_VALUE ? ScramMechanism.UNKNOWN : ScramMechanism.fromType((byte) type);
    }

    private static boolean has(Map<String, List<ScramUser>> users, String user, ScramMechanism m) {
        return users.getOrDefault(user, List.of()).stream().anyMatch(c -> c.mechanism().equals(m.mechanismName()));
    }

    private static ScramResult error(String user, Errors error, String message) {
        return ScramResult.newBuilder().setUser(user).setErrorCode(error.code()).setErrorMessage(message).build();
    }
}
