package dev.cor.ngsild;

/**
 * The Prometheus text format 0.0.4, written: a family's {@code # HELP} and {@code # TYPE} lines,
 * its samples, and label values escaped as the format asks. The one writer of {@code /metrics}
 * text for the broker, its store, its context cache and the launcher's servers. Stateless; any
 * thread may call it.
 */
public final class PrometheusText {
    private PrometheusText() {
    }

    /** A family's {@code # HELP} and {@code # TYPE} lines; its samples follow. */
    public static StringBuilder family(StringBuilder out, String name, String type, String help) {
        return out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    /** A family of one counter sample without labels. */
    public static void counter(StringBuilder out, String name, String help, long value) {
        sample(family(out, name, "counter", help), name, value);
    }

    /** A family of one gauge sample without labels. */
    public static void gauge(StringBuilder out, String name, String help, long value) {
        sample(family(out, name, "gauge", help), name, value);
    }

    /** A sample without labels. */
    public static void sample(StringBuilder out, String name, long value) {
        out.append(name).append(' ').append(value).append('\n');
    }

    /** A label value escaped as the text format asks: backslash, double quote and line feed. */
    public static StringBuilder label(StringBuilder out, String v) {
        for (int i = 0; i < v.length(); i++) {
            char ch = v.charAt(i);
            switch (ch) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(ch);
            }
        }
        return out;
    }
}
