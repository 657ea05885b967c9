package dev.kaas.common.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kaas.common.cluster.LinkAuth.Verdict;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LinkAuthTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final String SESSION = "kaas.BrokerLink/Session";
    private static final String NUDGE = "kaas.ControllerAdmin/Nudge";
    private final AtomicLong now = new AtomicLong(1_800_000_000_000L);
    private final SecureRandom random = new SecureRandom();
    private final LinkAuth.Verifier verifier = new LinkAuth.Verifier(now::get, 3);

    @Test
    void aHeaderMadeWithTheKeyForThisMethodIsAcceptedOnceAndItsReplayRefused() {
        String header = LinkAuth.sign(KEY, SESSION, now.get(), random);
        assertThat(verifier.verify(header, SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
        now.addAndGet(1_000);
        assertThat(verifier.verify(header, SESSION, KEY, false)).isEqualTo(Verdict.REPLAYED);
        assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
    }

    @Test
    void anotherKeyOrAnotherMethodIsRefused() {
        byte[] other = "0123456789abcdef0123456789abcdeX".getBytes(StandardCharsets.US_ASCII);
        assertThat(verifier.verify(LinkAuth.sign(other, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.WRONG_KEY);
        // A header seen on a method whose replay is harmless cannot open one whose replay is not.
        String nudge = LinkAuth.sign(KEY, NUDGE, now.get(), random);
        assertThat(verifier.verify(nudge, NUDGE, KEY, true)).isEqualTo(Verdict.ACCEPTED);
        assertThat(verifier.verify(nudge, NUDGE, KEY, true)).isEqualTo(Verdict.ACCEPTED);
        assertThat(verifier.verify(nudge, SESSION, KEY, false)).isEqualTo(Verdict.WRONG_KEY);
    }

    @Test
    void aHeaderFromOutsideTheWindowIsRefused() {
        String old = LinkAuth.sign(KEY, SESSION, now.get() - LinkAuth.WINDOW_MS - 1, random);
        String future = LinkAuth.sign(KEY, SESSION, now.get() + LinkAuth.WINDOW_MS + 1, random);
        assertThat(verifier.verify(old, SESSION, KEY, false)).isEqualTo(Verdict.OUT_OF_WINDOW);
        assertThat(verifier.verify(future, SESSION, KEY, false)).isEqualTo(Verdict.OUT_OF_WINDOW);
        String edge = LinkAuth.sign(KEY, SESSION, now.get() - LinkAuth.WINDOW_MS, random);
        assertThat(verifier.verify(edge, SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
    }

    @Test
    void aNonceIsRememberedAsLongAsItsHeaderIsInTheWindowAndForgottenAfter() {
        String early = LinkAuth.sign(KEY, SESSION, now.get() + LinkAuth.WINDOW_MS, random);
        assertThat(verifier.verify(early, SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
        // The header's own time is acceptable until now + 2 windows: still refused as a replay then.
        now.addAndGet(2 * LinkAuth.WINDOW_MS - 1);
        assertThat(verifier.verify(early, SESSION, KEY, false)).isEqualTo(Verdict.REPLAYED);
        now.addAndGet(2);
        assertThat(verifier.verify(early, SESSION, KEY, false)).isEqualTo(Verdict.OUT_OF_WINDOW);
        assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
        assertThat(verifier.remembered()).as("the early nonce forgotten").isEqualTo(1);
    }

    @Test
    void pastTheRememberedBoundCallsAreRefusedAsBusyUntilNoncesExpire() {
        for (int i = 0; i < 3; i++) {
            assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
        }
        assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.BUSY);
        // Replay-safe methods are not remembered, so they pass a full memory.
        assertThat(verifier.verify(LinkAuth.sign(KEY, NUDGE, now.get(), random), NUDGE, KEY, true)).isEqualTo(Verdict.ACCEPTED);
        now.addAndGet(2 * LinkAuth.WINDOW_MS);
        assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false))
                .as("a nonce accepted at t is remembered through t + 2 windows").isEqualTo(Verdict.BUSY);
        now.incrementAndGet();
        assertThat(verifier.verify(LinkAuth.sign(KEY, SESSION, now.get(), random), SESSION, KEY, false)).isEqualTo(Verdict.ACCEPTED);
        assertThat(verifier.remembered()).isEqualTo(1);
    }

    @Test
    void malformedHeadersAreRefusedWithoutAnException() {
        String good = LinkAuth.sign(KEY, SESSION, now.get(), random);
        String[] bad = {
            "v1", "v2" + good.substring(2), good + " extra", "v1 notanumber nonce mac", "v1 " + now.get() + "  mac",
            "v1 -5 nonce mac", "v1 " + now.get() + " " + "n".repeat(65) + " mac", "x".repeat(10_000), good.replace(' ', '\t'),
        };
        for (String header : bad) {
            assertThat(verifier.verify(header, SESSION, KEY, false)).as(header).isIn(Verdict.MALFORMED, Verdict.OUT_OF_WINDOW);
        }
        assertThat(verifier.verify(null, SESSION, KEY, false)).isEqualTo(Verdict.MISSING);
        assertThat(verifier.verify("", SESSION, KEY, false)).isEqualTo(Verdict.MISSING);
        assertThat(verifier.remembered()).isZero();
    }
}
