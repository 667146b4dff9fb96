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

    private static final class Holder {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }
}
