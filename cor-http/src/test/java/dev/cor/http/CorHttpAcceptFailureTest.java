package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.cor.base.testing.ForkedJvm;
import org.junit.jupiter.api.Test;

/** Both acceptors when accept() fails for want of descriptors: in a JVM of its own, under {@code ulimit -n}. */
class CorHttpAcceptFailureTest {
    @Test
    void acceptFailingForWantOfDescriptorsBacksOffInsteadOfSpinningAndResumesOnceTheyAreFree() throws Exception {
        ForkedJvm jvm = ForkedJvm.run(List.of("bash", "-c", "ulimit -n 256 && exec \"$0\" \"$@\""), AcceptFailureMain.class,
                List.of(System.getProperty("cor.test.jvm.flags"), "-Xmx256m"));
        assertEquals(0, jvm.exitCode, jvm.toString());
        Map<String, String> out = new HashMap<>();
        for (String line : jvm.stdout.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), line.substring(eq + 1).trim());
            }
        }
        assertTrue(Integer.parseInt(out.get("descriptorsTaken")) > 0, jvm.toString());
        // Spinning, the loop burns its whole second and logs once per round (thousands); backing off,
        // it wakes a handful of times and logs once per acceptor.
        int logs = Integer.parseInt(out.get("acceptLogLines"));
        long cpuMs = Long.parseLong(out.get("loopCpuMs"));
        assertTrue(logs <= 4, logs + " log lines about accept in one second\n" + jvm);
        int reported = Integer.parseInt(out.get("acceptLogLinesInAll"));
        assertTrue(reported >= 2 && reported <= 6, "each acceptor reports its failure, once: " + reported + " lines\n" + jvm);
        assertTrue(cpuMs < 300, "the acceptors' loop used " + cpuMs + " ms of CPU in one second\n" + jvm);
        assertTrue(out.get("httpAnswer").startsWith("HTTP/1.1 200"), "cor-http accepts again: " + out.get("httpAnswer"));
        assertEquals("1", out.get("protoAccepted"), "cor:// accepts again");
    }
}
