package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Flags from {@code COR_<FLAG>} environment variables, the command line winning over them. */
@Tag("process")
class EnvironmentFlagsProcessTest {
    @Test
    void everyFlagComesFromItsEnvironmentVariableAndTheCommandLineWins() throws Exception {
        try (ServerProcess s = ServerProcess.start(ServerProcess.command(), Map.of("COR_HTTP_LOOPS", "3",
                "COR_CONTEXT_TIMEOUT", "1234", "COR_STORE", "memory", "COR_NO_BUILD", "1"), null,
                "--contextTimeout", "999")) {
            JsonNode f = new ObjectMapper().readTree(s.send("GET", "/version", null).body()).get("flags");
            assertEquals(3, f.get("httpLoops").asInt(), "COR_HTTP_LOOPS");
            assertEquals("memory", f.get("store").asText(), "COR_STORE");
            assertEquals(999, f.get("contextTimeout").asInt(), "the command line wins over COR_CONTEXT_TIMEOUT");
        }
    }

    @Test
    void aBadValueInTheEnvironmentNamesItsVariable() throws Exception {
        assertEquals("COR_HTTP_LOOPS", EnvironmentFlags.variable("httpLoops"));
        try {
            EnvironmentFlags.prepend(Map.of("COR_PORT", "x"), new String[0]);
            throw new AssertionError("COR_PORT=x was taken");
        } catch (IllegalArgumentException e) {
            assertEquals("COR_PORT=x: --port takes a number from 0 to 65535, not x", e.getMessage());
        }
    }
}
