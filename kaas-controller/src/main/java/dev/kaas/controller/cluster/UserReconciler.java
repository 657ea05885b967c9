package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.UserDeclaration;
import dev.kaas.common.cluster.UserVerdict;
import dev.kaas.common.model.AclEntry;
import dev.kaas.common.model.ClientQuota;
import dev.kaas.common.model.ScramUser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * Brings the users in the assignment in line with their declarations (Kubernetes {@code KafkaUser}
 * resources, shaped like Strimzi's): a pure function of what is published and what is declared,
 * tested without a store.
 *
 * <p>A declaration owns everything of its user, as Strimzi's User Operator does: the user's SCRAM
 * credentials (exactly one SCRAM-SHA-512 credential for {@code scram-sha-512}, none otherwise),
 * every ACL whose principal is {@code User:<username>}, and the quotas of the user entity
 * {@code user=<username>} (user and client-id pairs stay the Kafka API's). What the Kafka API
 * changes for a declared user is put back by the next pass. A declaration that is not valid
 * changes nothing of what was applied for it before; one being deleted removes it all.
 *
 * <p>The user name is the declaration's name for SCRAM (and without authentication), and
 * {@code CN=<name>} for {@code tls-external}, as Strimzi's. {@code tls} (a client certificate the
 * operator would issue) is refused: kaas issues no certificates.
 */
final class UserReconciler {
    /** Strimzi's and Apache's minimum for SCRAM-SHA-512. */
    static final int ITERATIONS = 4096;
    static final String SCRAM = "scram-sha-512";
    static final String TLS = "tls";
    static final String TLS_EXTERNAL = "tls-external";
    /** Strimzi's name for the cluster resource; Apache's is the same. */
    static final String CLUSTER_NAME = "kafka-cluster";
    /** More than any real user needs; bounds what one declaration adds to every assignment. */
    static final int MAX_ACLS = 1000;

    private static final Map<String, ResourceType> RESOURCE_TYPES = Map.of("topic", ResourceType.TOPIC, "group", ResourceType.GROUP,
            "cluster", ResourceType.CLUSTER, "transactionalid", ResourceType.TRANSACTIONAL_ID);
    private static final Map<String, AclOperation> OPERATIONS = operations();
    private static final Map<String, String> QUOTA_KEYS = Map.of("producer_byte_rate", "producerByteRate",
            "consumer_byte_rate", "consumerByteRate", "request_percentage", "requestPercentage",
            "controller_mutation_rate", "controllerMutationRate");

    /**
     * @param declaredUsers the ledger: the user name applied for each declaration, by its ref
     * @param complete      every declaration was judged; false when the budget ran out first
     */
    record Result(Map<String, List<ScramUser>> scramUsers, List<ClientQuota> clientQuotas, List<AclEntry> acls,
                  Map<String, String> declaredUsers, List<UserVerdict> verdicts, boolean complete) {
    }

    /**
     * Where the last pass stopped at its budget: the next one starts after it (and wraps around),
     * so every declaration is judged in turn however many a pass has time for.
     */
    private String resumeAfter;
    /** The next pass starts after {@code ref} (statuses from there on were not written). */
    void resumeAfter(String ref) {
        resumeAfter = ref;
    }

    /** Fingerprints of password and credential pairs already checked: a pass does not redo 4096 rounds per user. */
    private final Map<String, String> verified = new HashMap<>();
    private final Supplier<byte[]> salts;

    UserReconciler(Supplier<byte[]> salts) {
        this.salts = salts;
    }

    /** Completes a declaration just before it is judged: the controller reads its SCRAM password here. */
    @FunctionalInterface
    interface Preparer {
        UserDeclaration prepare(UserDeclaration declaration) throws IOException;
    }

    /**
     * One pass. {@code declarations} must be all of them: a ref in the ledger without one is gone,
     * and its user is removed. Declarations are prepared and judged in ref order until
     * {@code overBudget} says stop (never before the first, so every pass gets somewhere); the
     * rest keep what was applied for them and get no verdict this pass.
     */
    Result reconcile(Map<String, List<ScramUser>> scramUsers, List<ClientQuota> clientQuotas, List<AclEntry> acls,
                     Map<String, String> declaredUsers, List<UserDeclaration> declarations, Preparer preparer,
                     BooleanSupplier overBudget) throws IOException {
        Map<String, List<ScramUser>> users = new TreeMap<>(scramUsers);
        Map<Map<String, String>, ClientQuota> quotas = new LinkedHashMap<>();
        clientQuotas.forEach(q -> quotas.put(q.entity(), q));
        // By principal: a pass replaces one user's ACLs at a time without going over everyone's.
        Map<String, Set<AclEntry>> byPrincipal = new HashMap<>();
        long aclText = 0;
        for (AclEntry a : acls) {
            byPrincipal.computeIfAbsent(a.principal(), k -> new TreeSet<>()).add(a);
            aclText += AclChanges.text(a);
        }
        Map<String, String> ledger = new TreeMap<>(declaredUsers);
        Set<String> listed = new HashSet<>();
        declarations.forEach(d -> listed.add(d.ref()));
        for (var gone : List.copyOf(ledger.entrySet())) {
            if (!listed.contains(gone.getKey())) {
                aclText -= remove(gone.getValue(), users, quotas, byPrincipal);
                ledger.remove(gone.getKey());
            }
        }
        List<UserVerdict> verdicts = new ArrayList<>();
        List<UserDeclaration> ordered = new ArrayList<>(declarations);
        ordered.sort(Comparator.comparing(UserDeclaration::ref));
        if (resumeAfter != null) {
            String after = resumeAfter;
            int from = (int) ordered.stream().filter(d -> d.ref().compareTo(after) <= 0).count();
            java.util.Collections.rotate(ordered, -from);
        }
        boolean complete = true;
        for (UserDeclaration listedOne : ordered) {
            if (!verdicts.isEmpty() && overBudget.getAsBoolean()) {
                complete = false;
                break;
            }
            UserDeclaration d = preparer.prepare(listedOne);
            String applied = ledger.get(d.ref());
            String problem = authenticationProblem(d);
            String reason = problem == null ? null : TLS.equals(d.authentication()) ? "UnsupportedAuthentication" : "InvalidAuthentication";
            if (problem == null && SCRAM.equals(d.authentication())) {
                if (d.password() == null) {
                    reason = "PasswordNotFound";
                    problem = d.passwordProblem() != null ? d.passwordProblem() : "The user's password is not known yet.";
                } else if (d.password().isEmpty()) {
                    reason = "InvalidPassword";
                    problem = "The password must not be empty.";
                }
            }
            String username = username(d);
            Set<AclEntry> wantedAcls = new TreeSet<>();
            if (problem == null) {
                problem = acls(d, "User:" + username, wantedAcls);
                reason = problem == null ? null : "InvalidAcl";
            }
            if (problem == null) {
                long before = text(byPrincipal.get("User:" + username)) + (applied == null || applied.equals(username) ? 0
                        : text(byPrincipal.get("User:" + applied)));
                if (aclText - before + text(wantedAcls) > AclChanges.MAX_TEXT) {
                    reason = "InvalidAcl";
                    problem = "All ACLs together would be over " + AclChanges.MAX_TEXT + " bytes: kaas keeps them in every assignment.";
                }
            }
            Map<String, Double> wantedQuotas = new TreeMap<>();
            if (problem == null) {
                problem = quotas(d, username, wantedQuotas);
                reason = problem == null ? null : "InvalidQuota";
            }
            if (problem != null) {
                verdicts.add(new UserVerdict(d, applied, reason, problem));
                continue;
            }
            if (applied != null && !applied.equals(username)) {
                aclText -= remove(applied, users, quotas, byPrincipal);
            }
            if (SCRAM.equals(d.authentication())) {
                ScramUser kept = users.getOrDefault(username, List.of()).stream()
                        .filter(c -> c.mechanism().equals(ScramMechanism.SCRAM_SHA_512.mechanismName()))
                        .filter(c -> verifies(d.password(), c)).findFirst().orElse(null);
                users.put(username, List.of(kept != null ? kept : mint(d.password())));
            } else {
                users.remove(username);
            }
            aclText += text(wantedAcls) - text(byPrincipal.put("User:" + username, wantedAcls));
            Map<String, String> entity = Map.of(ClientQuota.USER, username);
            quotas.remove(entity);
            if (!wantedQuotas.isEmpty()) {
                ClientQuota q = new ClientQuota(entity, wantedQuotas);
                quotas.put(q.entity(), q);
            }
            ledger.put(d.ref(), username);
            verdicts.add(new UserVerdict(d, username, null, null));
        }
        resumeAfter = complete || verdicts.isEmpty() ? null : verdicts.get(verdicts.size() - 1).declaration().ref();
        List<AclEntry> allAcls = new ArrayList<>();
        byPrincipal.values().forEach(allAcls::addAll);
        // In the assignment's own order, so an unchanged set compares equal to what is published.
        return new Result(users, quotas.values().stream().sorted(Comparator.comparing(q -> q.entity().toString())).toList(),
                List.copyOf(new TreeSet<>(allAcls)), ledger, verdicts, complete);
    }

    private static long text(Set<AclEntry> acls) {
        long n = 0;
        for (AclEntry a : acls == null ? Set.<AclEntry>of() : acls) {
            n += AclChanges.text(a);
        }
        return n;
    }

    /** The user name a declaration applies under, null when its authentication type has none. */
    static String username(UserDeclaration d) {
        if (d.authentication() == null || SCRAM.equals(d.authentication())) {
            return d.name();
        }
        return TLS_EXTERNAL.equals(d.authentication()) ? "CN=" + d.name() : null;
    }

    private static String authenticationProblem(UserDeclaration d) {
        if (d.authentication() == null || SCRAM.equals(d.authentication()) || TLS_EXTERNAL.equals(d.authentication())) {
            return null;
        }
        if (d.authentication().isEmpty()) {
            return "The authentication has no type: use scram-sha-512 or tls-external.";
        }
        if (TLS.equals(d.authentication())) {
            return "kaas issues no client certificates: use authentication type tls-external with a certificate your own CA "
                    + "signed for CN=" + d.name() + ".";
        }
        return "Unknown authentication type " + d.authentication() + ": use scram-sha-512 or tls-external.";
    }

    /** Takes everything of {@code username} away; returns the ACL text that went with it. */
    private static long remove(String username, Map<String, List<ScramUser>> users, Map<Map<String, String>, ClientQuota> quotas,
                               Map<String, Set<AclEntry>> byPrincipal) {
        users.remove(username);
        quotas.remove(Map.of(ClientQuota.USER, username));
        return text(byPrincipal.remove("User:" + username));
    }

    /** The declared rules as ACLs of {@code principal}, checked as CreateAcls checks them; a problem, or null. */
    private static String acls(UserDeclaration d, String principal, Set<AclEntry> out) {
        if (d.authorization() == null) {
            return d.acls().isEmpty() ? null : "ACLs are declared without authorization type simple.";
        }
        if (!"simple".equals(d.authorization())) {
            return "Unknown authorization type " + d.authorization() + ": use simple.";
        }
        for (int i = 0; i < d.acls().size(); i++) {
            UserDeclaration.Rule r = d.acls().get(i);
            String at = "acls[" + i + "]: ";
            ResourceType type = r.resourceType() == null ? null : RESOURCE_TYPES.get(r.resourceType().toLowerCase(Locale.ROOT));
            if (type == null) {
                return at + "resource type " + r.resourceType() + " is not one of topic, group, cluster, transactionalId.";
            }
            String name = type == ResourceType.CLUSTER ? CLUSTER_NAME : r.resourceName();
            if (type == ResourceType.CLUSTER && r.resourceName() != null && !r.resourceName().equals(CLUSTER_NAME)) {
                return at + "the cluster resource has no name but " + CLUSTER_NAME + ".";
            }
            PatternType pattern;
            String p = r.patternType() == null ? "literal" : r.patternType().toLowerCase(Locale.ROOT);
            if (p.equals("literal")) {
                pattern = PatternType.LITERAL;
            } else if (p.equals("prefix") && type != ResourceType.CLUSTER) {
                pattern = PatternType.PREFIXED;
            } else {
                return at + "pattern type " + r.patternType() + " is not literal" + (type == ResourceType.CLUSTER ? "" : " or prefix") + ".";
            }
            AclPermissionType permission;
            String t = r.type() == null ? "allow" : r.type().toLowerCase(Locale.ROOT);
            if (t.equals("allow")) {
                permission = AclPermissionType.ALLOW;
            } else if (t.equals("deny")) {
                permission = AclPermissionType.DENY;
            } else {
                return at + "type " + r.type() + " is not allow or deny.";
            }
            if (r.operations().isEmpty()) {
                return at + "no operations.";
            }
            for (String o : r.operations()) {
                AclOperation op = o == null ? null : OPERATIONS.get(o.toLowerCase(Locale.ROOT));
                if (op == null) {
                    return at + "operation " + o + " is not one of " + String.join(", ", operationNames()) + ".";
                }
                AclEntry entry = new AclEntry(type, name == null ? "" : name, pattern, principal, r.host() == null ? "*" : r.host(), op,
                        permission);
                String invalid = AclChanges.invalid(AclChanges.spec(entry));
                if (invalid != null) {
                    return at + invalid + ".";
                }
                out.add(entry);
                if (out.size() > MAX_ACLS) {
                    return "More than " + MAX_ACLS + " ACLs.";
                }
            }
        }
        return null;
    }

    /** The declared quotas, checked as AlterClientQuotas checks them; a problem, or null. */
    private static String quotas(UserDeclaration d, String username, Map<String, Double> out) {
        for (var e : d.quotas().entrySet()) {
            String strimziName = QUOTA_KEYS.get(e.getKey());
            if (strimziName == null || e.getValue() == null) {
                return "Unknown quota " + e.getKey() + ".";
            }
            if (e.getValue() == 0.0) {
                // Strimzi allows 0 for "no traffic"; Apache refuses a quota of 0 (must be greater than 0).
                return "Quota " + strimziName + " must be greater than 0.";
            }
            Map<String, Double> ops = Map.of(e.getKey(), e.getValue());
            String problem = ClientQuotaChanges.problem(Map.of(ClientQuota.USER, username), ops, out);
            if (problem != null) {
                return "Quota " + strimziName + ": " + problem + ".";
            }
        }
        return null;
    }

    private boolean verifies(String password, ScramUser c) {
        String fingerprint = fingerprint(password, c);
        if (fingerprint.equals(verified.get(c.storedKey()))) {
            return true;
        }
        try {
            ScramFormatter f = new ScramFormatter(ScramMechanism.SCRAM_SHA_512);
            byte[] salted = f.saltedPassword(password, Base64.getDecoder().decode(c.salt()), c.iterations());
            boolean ok = MessageDigest.isEqual(f.storedKey(f.clientKey(salted)), Base64.getDecoder().decode(c.storedKey()));
            if (ok) {
                remember(c, fingerprint);
            }
            return ok;
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    private ScramUser mint(String password) {
        try {
            ScramFormatter f = new ScramFormatter(ScramMechanism.SCRAM_SHA_512);
            byte[] salt = salts.get();
            byte[] salted = f.saltedPassword(password, salt, ITERATIONS);
            Base64.Encoder b64 = Base64.getEncoder();
            ScramUser c = new ScramUser(ScramMechanism.SCRAM_SHA_512.mechanismName(), b64.encodeToString(salt),
                    b64.encodeToString(f.storedKey(f.clientKey(salted))), b64.encodeToString(f.serverKey(salted)), ITERATIONS);
            remember(c, fingerprint(password, c));
            return c;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SCRAM-SHA-512 is not available", e);
        }
    }

    private void remember(ScramUser c, String fingerprint) {
        if (verified.size() >= 100_000) {
            // Credentials of users long gone: checking again costs a few milliseconds per user once.
            verified.clear();
        }
        verified.put(c.storedKey(), fingerprint);
    }

    private static String fingerprint(String password, ScramUser c) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(c.salt().getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(password.getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(md.digest());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, AclOperation> operations() {
        Map<String, AclOperation> m = new HashMap<>();
        for (AclOperation op : List.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
                AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION, AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS,
                AclOperation.IDEMPOTENT_WRITE, AclOperation.ALL)) {
            m.put(op.name().replace("_", "").toLowerCase(Locale.ROOT), op);
        }
        return Map.copyOf(m);
    }

    private static List<String> operationNames() {
        return List.of("Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction", "AlterConfigs", "DescribeConfigs",
                "IdempotentWrite", "All");
    }
}
