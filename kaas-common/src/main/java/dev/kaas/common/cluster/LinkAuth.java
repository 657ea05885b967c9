package dev.kaas.common.cluster;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * How a broker proves, on every call to the controller, that it holds the cluster's link key
 * ({@link LinkKey}) without sending it: the call carries a header
 * {@code v1 <millis> <nonce> <HMAC-SHA256(key, "kaas-link-v1\n" + method + "\n" + millis + "\n" + nonce)>}.
 *
 * <p>The MAC names the gRPC method, so a header seen on one method cannot open another; the time
 * bounds how long a captured header is worth anything; and the verifier remembers every nonce it
 * accepted for as long as its time is acceptable, so a captured header cannot be replayed either.
 * Methods whose replay does nothing (a doorbell, a read of a version number) are not remembered:
 * they are the frequent ones, and remembering them would only fill the memory. What this does not
 * give is secrecy or integrity of what follows the header: that needs TLS on the link.
 */
public final class LinkAuth {
    public static final String HEADER = "kaas-link-auth";
    /** Clocks of the pods of one cluster agree far better than this; a header older or newer is refused. */
    public static final long WINDOW_MS = 60_000;
    /** Nonces remembered at most; past it, calls are refused as busy rather than let the memory grow. */
    public static final int MAX_REMEMBERED = 100_000;
    private static final int NONCE_BYTES = 16;
    private static final int MAX_HEADER_CHARS = 200;

    public enum Verdict {
        ACCEPTED, MISSING, MALFORMED, OUT_OF_WINDOW, WRONG_KEY, REPLAYED, BUSY;

        public String describe() {
            return switch (this) {
                case ACCEPTED -> "accepted";
                case MISSING -> "no " + HEADER + " header: the caller does not know the cluster's link key";
                case MALFORMED -> "a malformed " + HEADER + " header";
                case OUT_OF_WINDOW -> "the " + HEADER + " header is more than " + WINDOW_MS / 1000 + " s away from the controller's clock";
                case WRONG_KEY -> "the " + HEADER + " header was not made with the cluster's link key";
                case REPLAYED -> "the " + HEADER + " header was used before";
                case BUSY -> "too many calls to remember; try again";
            };
        }
    }

    private LinkAuth() {
    }

    /** The header for one call of {@code method} (gRPC's full method name). */
    public static String sign(byte[] key, String method, long nowMs, SecureRandom random) {
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        String n = Base64.getUrlEncoder().withoutPadding().encodeToString(nonce);
        return "v1 " + nowMs + " " + n + " " + mac(key, method, nowMs, n);
    }

    private static String mac(byte[] key, String method, long millis, String nonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] out = mac.doFinal(("kaas-link-v1\n" + method + "\n" + millis + "\n" + nonce).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java 17 runtime", e);
        }
    }

    /** The controller's side: checks headers and remembers the nonces it accepted. Thread-safe. */
    public static final class Verifier {
        private final LongSupplier clock;
        private final int maxRemembered;
        /** Nonce → when it may be forgotten; insertion order is expiry order (a fixed span after acceptance). */
        private final LinkedHashMap<String, Long> seen = new LinkedHashMap<>();

        public Verifier(LongSupplier clock) {
            this(clock, MAX_REMEMBERED);
        }

        Verifier(LongSupplier clock, int maxRemembered) {
            this.clock = clock;
            this.maxRemembered = maxRemembered;
        }

        /**
         * Whether {@code header} admits a call of {@code method} under {@code key}. With
         * {@code replaySafe} the nonce is not remembered (the method's replay does nothing).
         */
        public Verdict verify(String header, String method, byte[] key, boolean replaySafe) {
            if (header == null || header.isEmpty()) {
                return Verdict.MISSING;
            }
            if (header.length() > MAX_HEADER_CHARS) {
                return Verdict.MALFORMED;
            }
            String[] parts = header.split(" ", -1);
            if (parts.length != 4 || !parts[0].equals("v1") || parts[2].isEmpty() || parts[2].length() > 64) {
                return Verdict.MALFORMED;
            }
            long millis;
            try {
                millis = Long.parseLong(parts[1]);
            } catch (NumberFormatException e) {
                return Verdict.MALFORMED;
            }
            long now = clock.getAsLong();
            if (Math.abs(now - millis) > WINDOW_MS || millis < 0) {
                return Verdict.OUT_OF_WINDOW;
            }
            byte[] expected = mac(key, method, millis, parts[2]).getBytes(StandardCharsets.US_ASCII);
            if (!MessageDigest.isEqual(expected, parts[3].getBytes(StandardCharsets.US_ASCII))) {
                return Verdict.WRONG_KEY;
            }
            if (replaySafe) {
                return Verdict.ACCEPTED;
            }
            synchronized (seen) {
                forgetExpired(now);
                if (seen.containsKey(parts[2])) {
                    return Verdict.REPLAYED;
                }
                if (seen.size() >= maxRemembered) {
                    return Verdict.BUSY;
                }
                // Acceptable while now <= millis + WINDOW_MS <= (this now) + 2 * WINDOW_MS: remembered past that.
                seen.put(parts[2], now + 2 * WINDOW_MS + 1);
            }
            return Verdict.ACCEPTED;
        }

        private void forgetExpired(long now) {
            Iterator<Map.Entry<String, Long>> it = seen.entrySet().iterator();
            while (it.hasNext()) {
                if (it.next().getValue() > now) {
                    return;
                }
                it.remove();
            }
        }

        int remembered() {
            synchronized (seen) {
                return seen.size();
            }
        }
    }
}
