package dev.kaas.it;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * kcat and kafka-python come from Debian, not Maven, so a developer's machine may lack them and
 * their tests skip there. CI sets {@value #REQUIRE} so that a missing tool fails the build instead
 * of turning it green with the non-Java clients untested.
 */
final class NativeClients {
    static final String REQUIRE = "KAAS_REQUIRE_NATIVE_CLIENTS";

    private NativeClients() {
    }

    static boolean required() {
        String v = System.getenv(REQUIRE);
        return v != null && (v.equals("1") || v.equalsIgnoreCase("true"));
    }

    /** Skips the test when the tool is absent, or fails it when {@value #REQUIRE} is set. */
    static void requirePresent(boolean present, String what) {
        if (!present && required()) {
            throw new AssertionError(what + " is not installed, and " + REQUIRE + " is set");
        }
        assumeTrue(present, what + " is not installed (set " + REQUIRE + "=1 to make this a failure)");
    }
}
