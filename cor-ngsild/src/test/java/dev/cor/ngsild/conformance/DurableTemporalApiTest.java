package dev.cor.ngsild.conformance;

import java.io.IOException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every case of {@link TemporalApiTest} against a broker over the durable store: its history goes
 * through the journal and the history segments (doc/storage.md, "History") and must answer as the
 * memory store's does.
 */
class DurableTemporalApiTest extends TemporalApiTest {
    private static DurableDir durable;

    @BeforeAll
    static void overTheDurableStore() throws IOException {
        durable = overADurableStore("cor-temporal-api");
    }

    @AfterAll
    static void closeTheStore() throws IOException {
        closeDurable(durable);
    }
}
