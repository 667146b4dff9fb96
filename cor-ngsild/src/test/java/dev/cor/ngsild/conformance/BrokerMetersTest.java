package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.cor.ngsild.TestBroker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * The broker's meters land in the registry a host application gives the builder: requests by
 * operation and status, their latency by operation and status class, entities by tenant.
 */
class BrokerMetersTest {
    @Test
    void a_host_registry_receives_the_request_counters_latencies_and_tenants() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TestBroker broker = TestBroker.start(b -> b.meterRegistry(registry), s -> s.loops(1).workerThreads(1))) {
            Ngsi api = new Ngsi(broker.baseUrl());
            String id = Entities.id("Metered");
            Checks.status(api.post("/entities").tenant("fleet").json(Json.obj("""
                    {"id": "%s", "type": "Metered"}""", id)).send(), 201);
            long sent = System.nanoTime();
            Checks.status(api.get("/entities/" + id).tenant("fleet").send(), 200);
            long roundTrip = System.nanoTime() - sent;
            Checks.status(api.get("/entities/" + id + "x").tenant("fleet").send(), 404);

            assertEquals(1, registry.get("cor.ngsild.requests").tags("operation", "createEntity", "status", "201")
                    .counter().count());
            assertEquals(1, registry.get("cor.ngsild.requests").tags("operation", "retrieveEntity", "status", "404")
                    .counter().count());
            Timer ok = registry.get("cor.ngsild.request.duration").tags("operation", "retrieveEntity", "status_class", "2xx")
                    .timer();
            assertEquals(1, ok.count());
            assertTrue(ok.totalTime(TimeUnit.NANOSECONDS) > 0, "a request takes time");
            assertTrue(ok.totalTime(TimeUnit.NANOSECONDS) <= roundTrip,
                    "the broker's part is within the client's round trip (" + roundTrip + " ns), in the unit it was measured in: "
                            + ok.totalTime(TimeUnit.NANOSECONDS));
            CountAtBucket[] buckets = ok.takeSnapshot().histogramCounts();
            assertEquals(17, buckets.length, "50 us .. 10 s");
            assertEquals(50_000, buckets[0].bucket(TimeUnit.NANOSECONDS), 0.5);
            assertEquals(10, buckets[buckets.length - 1].bucket(TimeUnit.SECONDS), 1e-9);
            assertEquals(1, registry.get("cor.ngsild.request.duration")
                    .tags("operation", "retrieveEntity", "status_class", "4xx").timer().count());
            assertNull(registry.find("cor.ngsild.request.duration").tags("status_class", "5xx").timer(), "none answered 5xx");

            Gauge fleet = registry.find("cor.ngsild.entities").tag("tenant", "fleet").gauge();
            assertNotNull(fleet, "the tenant the create made is reported");
            assertEquals(1, fleet.value());
            assertEquals(0, registry.get("cor.ngsild.entities").tag("tenant", "").gauge().value(), "the default tenant");
            assertNotNull(registry.find("cor.ngsild.context.cache.hits").functionCounter(), "the context cache's meters");
        }
    }
}
