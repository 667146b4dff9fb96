package dev.cor.server;

/**
 * The launcher's logging flags beside {@code --logLevel}: {@code --accessLog FILE|-} (one line a
 * request, {@link AccessLog}) and {@code --logFormat text|json} (the log records' and the access
 * log's lines, {@link JsonLogFormatter}). Parsed with the other flags on the main thread.
 *
 * @param accessLog {@code -} for stdout, a file, or {@code null} for none
 * @param json      {@code --logFormat json}
 */
record LogFlags(String accessLog, boolean json) {
    static final LogFlags DEFAULT = new LogFlags(null, false);

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --accessLog FILE    one line a request - time, tenant, method, target, status, microseconds,
                                  body bytes - appended to FILE, or to stdout with - (default: none)
              --logFormat F       text (the default) or json: one JSON object a line, for the log records
                                  (stderr), the start lines (stdout) and the access log""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return flag.equals("--accessLog") || flag.equals("--logFormat");
    }

    /** These flags with {@code flag} set to {@code value}. */
    LogFlags with(String flag, String value) {
        return switch (flag) {
            case "--accessLog" -> {
                if (value.isBlank()) {
                    throw new IllegalArgumentException(flag + " takes a file, or - for stdout, not an empty string");
                }
                yield new LogFlags(value, json);
            }
            case "--logFormat" -> switch (value) {
                case "text" -> new LogFlags(accessLog, false);
                case "json" -> new LogFlags(accessLog, true);
                default -> throw new IllegalArgumentException(flag + " takes text or json, not " + value);
            };
            default -> throw new IllegalArgumentException(flag);
        };
    }
}
