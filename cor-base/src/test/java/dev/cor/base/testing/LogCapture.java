package dev.cor.base.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Test support for every module's tests (cor-base's test-jar): collects what is logged to one
 * logger - {@code System.Logger} goes to java.util.logging by default - while it is open. Any
 * thread logs into it; any test thread reads it.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger jul;
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

    private LogCapture(String loggerName) {
        this.jul = Logger.getLogger(loggerName);
        jul.addHandler(handler);
    }

    /** Starts collecting what reaches the logger of that name ({@code ""}: every logger). */
    public static LogCapture of(String loggerName) {
        return new LogCapture(loggerName);
    }

    /** Starts collecting what {@code source} logs (its logger is named after the class). */
    public static LogCapture of(Class<?> source) {
        return new LogCapture(source.getName());
    }

    /** What was logged so far, in order (a copy). */
    public List<LogRecord> records() {
        synchronized (records) {
            return List.copyOf(records);
        }
    }

    /** The records logged with an exception: the stack traces written. */
    public List<LogRecord> withStackTraces() {
        return records().stream().filter(r -> r.getThrown() != null).toList();
    }

    /** The messages logged at {@code level} or above that contain {@code text}, in order. */
    public List<String> messages(Level level, String text) {
        return records().stream().filter(r -> r.getLevel().intValue() >= level.intValue())
                .map(LogRecord::getMessage).filter(m -> m != null && m.contains(text)).toList();
    }

    @Override
    public void close() {
        jul.removeHandler(handler);
    }
}
