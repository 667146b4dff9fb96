package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.store.durable.DurableEntityStore;

/**
 * {@link TemporalDifferentialTest} against a broker over the durable store: its history goes
 * through the journal and the history segments (doc/storage.md, "History") and must answer as the
 * memory store's does.
 */
class DurableTemporalDifferentialTest extends TemporalDifferentialTest {
    private static DurableEntityStore store;
    private static Path dir;

    @BeforeAll
    static void overTheDurableStore() throws IOException {
        broker.close(); // the memory broker ConformanceTest started
        dir = Files.createTempDirectory("cor-temporal-differential");
        store = DurableEntityStore.builder(dir).open();
        broker = TestBroker.start(b -> b.contextTimeoutMs(CONTEXT_TIMEOUT_MS).store(store), s -> { });
        api = new Ngsi(broker.baseUrl());
    }

    @AfterAll
    static void closeTheStore() throws IOException {
        if (broker != null) {
            broker.close();
            broker = null;
        }
        store.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
