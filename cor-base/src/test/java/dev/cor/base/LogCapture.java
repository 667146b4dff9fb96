package dev.cor.base;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Test support (cor-base's test-jar): the records one class logs through {@code System.Logger}
 * (the JDK's logging by default) while it is open. Any thread logs; the test thread reads.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final List<LogRecord> records = new ArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            synchronized (records) {
                records.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private LogCapture(Class<?> source) {
        this.logger = Logger.getLogger(source.getName());
        logger.addHandler(handler);
    }

    /** Captures what {@code source} logs (its logger is named after the class) until {@link #close()}. */
    public static LogCapture of(Class<?> source) {
        return new LogCapture(source);
    }

    /** The messages logged at {@code level} or above that contain {@code text}, in order. */
    public List<String> messages(Level level, String text) {
        synchronized (records) {
            return records.stream().filter(r -> r.getLevel().intValue() >= level.intValue())
                    .map(LogRecord::getMessage).filter(m -> m != null && m.contains(text)).toList();
        }
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
