package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.base.testing.LogCapture;
import org.junit.jupiter.api.Test;

class CorCoLogLimiterTest {
    @Test
    void oneLinePerIntervalEachSayingHowManyWereHeldBackAndMessagesBuiltOnlyWhenLogged() throws Exception {
        String name = "dev.cor.base.test.limited";
        try (LogCapture log = LogCapture.of(name)) {
            CorCoLogLimiter limiter = new CorCoLogLimiter(System.getLogger(name), 1000);
            RuntimeException failure = new RuntimeException("boom");
            AtomicInteger built = new AtomicInteger();
            assertTrue(limiter.log(System.Logger.Level.WARNING, () -> "failed " + built.incrementAndGet(), failure));
            for (int i = 0; i < 49; i++) {
                assertFalse(limiter.log(System.Logger.Level.WARNING, () -> "failed " + built.incrementAndGet(), failure));
            }
            assertEquals(1, log.records().size());
            assertEquals(1, built.get(), "messages held back are never built");
            assertSame(failure, log.records().get(0).getThrown());
            Thread.sleep(1100);
            assertTrue(limiter.log(System.Logger.Level.WARNING, () -> "failed again", failure));
            assertEquals(2, log.records().size());
            assertEquals("failed again (49 more held back since the last report)", log.records().get(1).getMessage());
            assertEquals(49, limiter.heldBack());
        }
    }
}
