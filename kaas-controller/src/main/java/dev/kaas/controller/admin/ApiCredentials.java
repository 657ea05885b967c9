package dev.kaas.controller.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who may call the REST admin API, parsed from the credentials file
 * ({@code kaas.rest.credentials-file}): one entry per line, {@code #} starts a comment,
 *
 * <pre>
 * token admin     &lt;token&gt;              # Authorization: Bearer &lt;token&gt;
 * token read-only &lt;token&gt;
 * basic admin     &lt;user&gt; &lt;password&gt;    # Authorization: Basic base64(user:password)
 * basic read-only &lt;user&gt; &lt;password&gt;
 * </pre>
 *
 * Secrets are kept only as SHA-256 digests and compared in constant time; a malformed line is
 * skipped with a problem that names its number, never its content. Pure: no file access here.
 */
final class ApiCredentials {
    enum Role {
        /** May read and change. */
        ADMIN,
        /** May read; a change gets 403. */
        READ_ONLY
    }

    /** The most lines, and the longest line, a credentials file may have: a bound on what is parsed. */
    static final int MAX_LINES = 10_000;
    static final int MAX_LINE = 4_096;

    private static final java.util.regex.Pattern COMMENT = java.util.regex.Pattern.compile("(^|\\s)#.*$");

    private final List<Entry> tokens;
    private final Map<String, Entry> users;
    final List<String> problems;

    private record Entry(byte[] secretDigest, Role role) {
    }

    private ApiCredentials(List<Entry> tokens, Map<String, Entry> users, List<String> problems) {
        this.tokens = tokens;
        this.users = users;
        this.problems = problems;
    }

    static ApiCredentials parse(String text) {
        List<Entry> tokens = new ArrayList<>();
        Map<String, Entry> users = new HashMap<>();
        List<String> problems = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (i >= MAX_LINES) {
                problems.add("lines after " + MAX_LINES + " ignored");
                break;
            }
            // A comment starts at a '#' that begins the line or follows whitespace: a '#' inside a secret is part of it.
            String line = COMMENT.matcher(lines[i]).replaceFirst("").strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.length() > MAX_LINE) {
                problems.add("line " + (i + 1) + ": longer than " + MAX_LINE + " characters, ignored");
                continue;
            }
            String[] f = line.split("\\s+");
            Optional<Role> role = f.length > 1 ? role(f[1]) : Optional.empty();
            if (f[0].equals("token") && f.length == 3 && role.isPresent()) {
                tokens.add(new Entry(digest(f[2]), role.get()));
            } else if (f[0].equals("basic") && f.length == 4 && role.isPresent() && !f[2].contains(":")) {
                if (users.put(f[2], new Entry(digest(f[3]), role.get())) != null) {
                    problems.add("line " + (i + 1) + ": user " + f[2] + " named again; this line counts");
                }
            } else {
                problems.add("line " + (i + 1) + ": expected 'token admin|read-only TOKEN' or 'basic admin|read-only USER PASSWORD'"
                        + " (a user name without ':'), ignored");
            }
        }
        return new ApiCredentials(List.copyOf(tokens), Map.copyOf(users), List.copyOf(problems));
    }

    private static Optional<Role> role(String name) {
        return switch (name) {
            case "admin" -> Optional.of(Role.ADMIN);
            case "read-only" -> Optional.of(Role.READ_ONLY);
            default -> Optional.empty();
        };
    }

    boolean isEmpty() {
        return tokens.isEmpty() && users.isEmpty();
    }

    /** The role an {@code Authorization} header's credentials carry; empty when absent, malformed or not known. */
    Optional<Role> authenticate(String authorization) {
        if (authorization == null || authorization.length() > MAX_LINE) {
            return Optional.empty();
        }
        int space = authorization.indexOf(' ');
        if (space < 0) {
            return Optional.empty();
        }
        String scheme = authorization.substring(0, space);
        String value = authorization.substring(space + 1).strip();
        if (scheme.equalsIgnoreCase("Bearer")) {
            byte[] presented = digest(value);
            Role found = null;
            // Every entry is compared, so the time taken does not tell which one matched.
            for (Entry e : tokens) {
                if (MessageDigest.isEqual(presented, e.secretDigest()) && found == null) {
                    found = e.role();
                }
            }
            return Optional.ofNullable(found);
        }
        if (scheme.equalsIgnoreCase("Basic")) {
            String decoded;
            try {
                decoded = new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
            int colon = decoded.indexOf(':');
            if (colon < 0) {
                return Optional.empty();
            }
            Entry e = users.get(decoded.substring(0, colon));
            byte[] presented = digest(decoded.substring(colon + 1));
            return e != null && MessageDigest.isEqual(presented, e.secretDigest()) ? Optional.of(e.role()) : Optional.empty();
        }
        return Optional.empty();
    }

    private static byte[] digest(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
