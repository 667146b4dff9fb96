package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Query results under concurrent writes (5.7.2; design: readers never lock): each entity in an
 * answer is one snapshot - two attributes a write always sets together are never seen apart - and
 * every entity of the type is listed exactly once per page walk, whatever the writers do to
 * attribute values meanwhile.
 */
class QueryConsistencyTest extends ConformanceTest {

    @Test
    @DisplayName("5.7.2: while writers update a and b together, every queried entity shows a == b, and each appears once")
    void snapshotsPerEntity() throws Exception {
        String type = Entities.uniqueName("Pair");
        int n = 40;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = Entities.id(type);
            ids.add(id);
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"a\": {\"type\": \"Property\", \"value\": 0},"
                    + " \"b\": {\"type\": \"Property\", \"value\": 0}}", id, type));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger writes = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> writer = pool.submit(() -> {
                int v = 1;
                while (!stop.get()) {
                    String id = ids.get(v % n);
                    Checks.status(api.patch(Ngsi.entity(id) + "/attrs").json(Json.obj(
                            "{\"a\": {\"type\": \"Property\", \"value\": %d}, \"b\": {\"type\": \"Property\", \"value\": %d}}", v, v))
                            .send(), 204);
                    writes.incrementAndGet();
                    v++;
                }
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int queries = 0;
            while (System.nanoTime() < deadline) {
                JsonNode list = Checks.okJson(api.get("/entities").query("type", type).query("q", "a>=0")
                        .query("limit", "100").send(), Json.CORE);
                assertEquals(n, list.size(), "every entity once, a always >= 0");
                java.util.Set<String> seen = new java.util.HashSet<>();
                for (JsonNode e : list) {
                    assertTrue(seen.add(e.path("id").asText()), () -> "each entity once: " + list);
                    assertEquals(e.path("a").path("value").asLong(), e.path("b").path("value").asLong(),
                            () -> "one snapshot per entity: " + e);
                }
                queries++;
            }
            stop.set(true);
            writer.get(20, TimeUnit.SECONDS);
            assertTrue(queries > 10 && writes.get() > 10, "both sides ran: " + queries + " queries, " + writes + " writes");
        } finally {
            stop.set(true);
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(20, TimeUnit.SECONDS));
        }
    }
}
