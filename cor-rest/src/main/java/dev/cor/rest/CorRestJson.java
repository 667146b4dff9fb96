package dev.cor.rest;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The runtime's one JSON mapper, built on first use. Building it costs hundreds of milliseconds,
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
        static final ObjectMapper MAPPER = new ObjectMapper();
    }
}
