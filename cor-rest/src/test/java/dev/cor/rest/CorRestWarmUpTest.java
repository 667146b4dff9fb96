package dev.cor.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import dev.cor.base.testing.ForkedJvm;
import org.junit.jupiter.api.Test;

/** What a server pays when it is wired rather than on the loop of its first request: in a fresh JVM. */
class CorRestWarmUpTest {
    @Test
    void theFirstProblemDetailsAnswerFindsJacksonReadyOnceADispatcherIsBuilt() throws Exception {
        ForkedJvm jvm = ForkedJvm.run(FirstFailMain.class, List.of(System.getProperty("cor.test.jvm.flags")));
        assertEquals(0, jvm.exitCode, jvm.toString());
        String line = jvm.stdout.lines().filter(l -> l.startsWith("classesLoadedByTheFirstFail=")).findFirst().orElseThrow();
        int loaded = Integer.parseInt(line.substring(line.indexOf('=') + 1).trim());
        // Cold, Jackson builds its tree serializers here: some 67 classes and ~20 ms on a loop.
        assertTrue(loaded <= 10, loaded + " classes loaded by the first fail()");
    }
}
