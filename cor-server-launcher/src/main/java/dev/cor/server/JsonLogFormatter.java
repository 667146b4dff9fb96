package dev.cor.server;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * {@code --logFormat json}: each log record as one JSON object on one line - {@code time}
 * (ISO-8601, UTC, milliseconds), {@code level} (as {@code --logLevel} names it, in capitals),
 * {@code logger}, {@code message} and, with an exception, {@code thrown} (its stack trace as one
 * string). What collectors (Loki, Elasticsearch, Cloud Logging) read without a parser of their own.
 * Any thread ({@link java.util.logging.Handler}s call it under their own lock).
 */
final class JsonLogFormatter extends Formatter {
    @Override
    public String format(LogRecord r) {
        StringBuilder b = new StringBuilder(160);
        b.append("{\"time\":\"").append(Instant.ofEpochMilli(r.getMillis())).append('"');
        b.append(",\"level\":\"").append(level(r.getLevel())).append('"');
        field(b, "logger", r.getLoggerName());
        field(b, "message", formatMessage(r));
        if (r.getThrown() != null) {
            StringWriter w = new StringWriter();
            try (PrintWriter p = new PrintWriter(w)) {
                r.getThrown().printStackTrace(p);
            }
            field(b, "thrown", w.toString());
        }
        return b.append("}\n").toString();
    }

    /** A line the launcher prints itself (its start and stop), as a record of {@code logger}. */
    String line(Level level, String logger, String message) {
        LogRecord r = new LogRecord(level, message);
        r.setLoggerName(logger);
        return format(r);
    }

    /** The System.Logger level a java.util.logging level stands for (the runtime logs through System.Logger). */
    static String level(Level l) {
        int v = l.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        }
        if (v >= Level.WARNING.intValue()) {
            return "WARN";
        }
        if (v >= Level.INFO.intValue()) {
            return "INFO";
        }
        if (v >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

    private static void field(StringBuilder b, String name, String value) {
        b.append(",\"").append(name).append("\":");
        if (value == null) {
            b.append("null");
            return;
        }
        b.append('"');
        JsonStringEncoder.getInstance().quoteAsString(value, b);
        b.append('"');
    }
}
