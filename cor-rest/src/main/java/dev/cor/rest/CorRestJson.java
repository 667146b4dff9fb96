package dev.cor.rest;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The runtime's one JSON mapper, built on first use. Building it costs hundreds of milliseconds,
 * and the first tree it writes or reads tens more (its serializers and parsers are made then),
 * which must never land on a loop thread: servers warm it when they are wired
 * ({@link CorRestDispatcher.Builder#build()} does), long before a request arrives. Thread-safe.
 */
public final class CorRestJson {
    private CorRestJson() {
    }

    public static ObjectMapper mapper() {
        return Holder.MAPPER;
    }

    /** Whether a Content-Type names JSON: {@code application/json} or any {@code +json} type, parameters aside. */
    public static boolean isJsonType(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semi = contentType.indexOf(';');
        String mt = (semi >= 0 ? contentType.substring(0, semi) : contentType).trim().toLowerCase(java.util.Locale.ROOT);
        return mt.equals("application/json") || mt.endsWith("+json");
    }

    private static final class Holder {
        static final ObjectMapper MAPPER = warm(new ObjectMapper());

        /**
         * Writes a problem-details tree ({@link CorRest#fail}'s, text and number fields) and reads
         * it back ({@link CorRest#json}): the paths every server takes, built now.
         */
        private static ObjectMapper warm(ObjectMapper m) {
            try {
                com.fasterxml.jackson.databind.node.ObjectNode p = m.createObjectNode();
                p.put("type", "about:blank");
                p.put("title", "Internal Server Error");
                p.put("status", 500);
                p.put("detail", "warming up");
                p.putArray("list").add(1.5).add(true).addNull();
                m.readTree(m.writeValueAsBytes(p));
            } catch (java.io.IOException e) {
                throw new IllegalStateException("the JSON mapper does not round-trip a tree", e);
            }
            return m;
        }
    }
}
