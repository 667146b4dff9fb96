package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

class CorCoLogLimiterTest {
    @Test
    void oneLinePerIntervalEachSayingHowManyWereHeldBackAndMessagesBuiltOnlyWhenLogged() throws Exception {
        String name = "dev.cor.base.test.limited";
        Logger jul = Logger.getLogger(name);
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(capture);
        jul.setUseParentHandlers(false);
        try {
            CorCoLogLimiter limiter = new CorCoLogLimiter(System.getLogger(name), 1000);
            RuntimeException failure = new RuntimeException("boom");
            AtomicInteger built = new AtomicInteger();
            assertTrue(limiter.log(System.Logger.Level.WARNING, () -> "failed " + built.incrementAndGet(), failure));
            for (int i = 0; i < 49; i++) {
                assertFalse(limiter.log(System.Logger.Level.WARNING, () -> "failed " + built.incrementAndGet(), failure));
            }
            assertEquals(1, records.size());
            assertEquals(1, built.get(), "messages held back are never built");
            assertSame(failure, records.get(0).getThrown());
            Thread.sleep(1100);
            assertTrue(limiter.log(System.Logger.Level.WARNING, () -> "failed again", failure));
            assertEquals(2, records.size());
            assertEquals("failed again (49 more held back since the last report)", records.get(1).getMessage());
            assertEquals(49, limiter.heldBack());
        } finally {
            jul.removeHandler(capture);
            jul.setUseParentHandlers(true);
        }
    }
}
