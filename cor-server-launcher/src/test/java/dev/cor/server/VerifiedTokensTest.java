package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The cache of verified JWTs keeps a token only until its expiry, and within its bounds in entries and bytes. */
class VerifiedTokensTest {
    private static final Grant GRANT = Grant.of("this token", List.of("*"), true);

    @Test
    void aTokenIsServedUntilItsExpiryAndThenForgotten() {
        VerifiedTokens c = new VerifiedTokens(10, 1 << 20);
        c.put("t1", GRANT, 1_000, 0);
        assertSame(GRANT, c.get("t1", 999));
        assertNull(c.get("t1", 1_000), "at its expiry the token is verified again");
        assertEquals(0, c.size());
        assertEquals(0, c.bytes());
    }

    @Test
    void theEntriesStayWithinTheirBoundExpiredOnesFirst() {
        VerifiedTokens c = new VerifiedTokens(2, 1 << 20);
        c.put("old", GRANT, 10, 0);
        c.put("live", GRANT, 1_000, 0);
        c.put("new", GRANT, 1_000, 20); // past the bound at 20: "old" has expired and goes
        assertEquals(2, c.size());
        assertNotNull(c.get("live", 20));
        assertNotNull(c.get("new", 20));
        for (int i = 0; i < 100; i++) {
            c.put("t" + i, GRANT, 1_000, 20);
            assertTrue(c.size() <= 2, "size " + c.size());
        }
    }

    @Test
    void theBytesStayWithinTheirBound() {
        String longToken = "x".repeat(1_000);
        long one = 2L * (longToken.length() + 3) + VerifiedTokens.ENTRY_OVERHEAD;
        VerifiedTokens c = new VerifiedTokens(1_000, 3 * one);
        for (int i = 100; i < 200; i++) {
            c.put(longToken + i, GRANT, 1_000, 0);
            assertTrue(c.bytes() <= 3 * one, "bytes " + c.bytes());
        }
        assertEquals(3, c.size());
        assertEquals(3 * one, c.bytes());
        VerifiedTokens tiny = new VerifiedTokens(10, 100);
        tiny.put(longToken, GRANT, 1_000, 0);
        assertEquals(0, tiny.size(), "a token larger than the whole bound is not kept");
    }
}
