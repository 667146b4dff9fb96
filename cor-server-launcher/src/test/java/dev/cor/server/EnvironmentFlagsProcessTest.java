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

    @Test
    void flagsThatNeedEachOtherComeFromTheEnvironmentEachInItsVariable() {
        // --https needs --key and --cert, --jwtKey needs --jwtIssuer: each variable alone is checked for its own value only
        Map<String, String> env = new java.util.TreeMap<>(Map.of("COR_HTTPS", "true", "COR_KEY", "k.pem", "COR_CERT", "c.pem",
                "COR_JWT_KEY", "jwks.json", "COR_JWT_ISSUER", "https://issuer", "COR_JWT_AUDIENCE", "cor", "COR_DRAIN_MS", "0"));
        java.util.List<String> args = java.util.List.of(EnvironmentFlags.prepend(env, new String[] {"--port", "1"}));
        for (String expected : new String[] {"--https", "--key", "k.pem", "--cert", "c.pem", "--jwtKey", "jwks.json",
                "--jwtIssuer", "https://issuer", "--jwtAudience", "cor", "--drainMs", "0"}) {
            assertEquals(true, args.contains(expected), expected + " in " + args);
        }
        assertEquals(java.util.List.of("--port", "1"), args.subList(args.size() - 2, args.size()), "the command line last, so it wins");
    }
}
