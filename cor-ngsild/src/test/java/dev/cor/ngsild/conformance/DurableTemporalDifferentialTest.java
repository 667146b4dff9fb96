package dev.cor.ngsild.conformance;

import java.io.IOException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link TemporalDifferentialTest} against a broker over the durable store: its history goes
 * through the journal and the history segments (doc/storage.md, "History") and must answer as the
 * memory store's does.
 */
class DurableTemporalDifferentialTest extends TemporalDifferentialTest {
    private static DurableDir durable;

    @BeforeAll
    static void overTheDurableStore() throws IOException {
        durable = overADurableStore("cor-temporal-differential");
    }

    @AfterAll
    static void closeTheStore() throws IOException {
        closeDurable(durable);
    }
}
