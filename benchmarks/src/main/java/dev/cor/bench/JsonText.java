package dev.cor.bench;

/**
 * Writes JSON string literals for the tools' small hand-made JSON (error bodies, result files),
 * where a JSON library would be one more dependency in every measured process. Stateless.
 */
public final class JsonText {
    private JsonText() {
    }

    /** {@code s} as a quoted JSON string, escaping quotes, backslashes and control characters. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
