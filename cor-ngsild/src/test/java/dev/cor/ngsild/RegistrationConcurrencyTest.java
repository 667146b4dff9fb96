package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.federation.Registrations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The registry under 16 parallel clients over real sockets while lookups run on other threads:
 * each client creates, updates and deletes registrations of its own; every lookup meanwhile sees
 * a consistent list (in id order, no duplicates, only registrations some client made, each whole)
 * and never waits; at the end the registry holds exactly the survivors. And of sixteen exclusive
 * registrations of one attribute of one entity at once, exactly one is accepted.
 */
class RegistrationConcurrencyTest {
    private static final int CLIENTS = 16;
    private static final int PER_CLIENT = 12;
    private static final String CAR = "https://uri.etsi.org/ngsi-ld/default-context/Car";
    private static final String SPEED = "https://uri.etsi.org/ngsi-ld/default-context/speed";
    private static TestBroker broker;
    private static BrokerHttp http;

    @BeforeAll
    static void start() {
        broker = TestBroker.start();
        http = new BrokerHttp(broker);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static String registration(String id, String mode, String entityId) {
        return "{\"id\": \"" + id + "\", \"type\": \"ContextSourceRegistration\"" + (mode == null ? "" : ", \"mode\": \"" + mode
                + "\"") + ", \"information\": [{\"entities\": [{\"type\": \"Car\"" + (entityId == null ? "" : ", \"id\": \""
                + entityId + "\"") + "}], \"propertyNames\": [\"speed\"]}], \"endpoint\": \"http://127.0.0.1:9/s\"}";
    }

    @Test
    void sixteenClientsChangeRegistrationsWhileLookupsSeeAConsistentRegistry() throws Exception {
        Registrations regs = broker.registrations();
        String tenant = "concurrent";
        RegistrationLookup.Want want = new RegistrationLookup.Want("retrieveEntity", "urn:ngsi-ld:Car:1", null, Set.of(CAR),
                Set.of(SPEED));
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong lookups = new AtomicLong();
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Thread t = new Thread(() -> {
                while (!done.get()) {
                    List<Registration> found = regs.matching(tenant, want, System.currentTimeMillis());
                    String previous = "";
                    for (Registration x : found) {
                        if (x.id().compareTo(previous) <= 0) {
                            problems.add("out of order or twice: " + previous + ", " + x.id());
                        }
                        if (!x.id().startsWith("urn:ngsi-ld:ContextSourceRegistration:c") || x.information().size() != 1
                                || !x.tenant().equals(tenant)) {
                            problems.add("not a registration a client made, or not whole: " + x);
                        }
                        previous = x.id();
                    }
                    regs.any(tenant);
                    lookups.incrementAndGet();
                }
            });
            t.start();
            readers.add(t);
        }
        List<List<String>> survivors;
        try {
            survivors = BrokerConcurrencyTest.inParallel(CLIENTS, k -> {
                List<String> kept = new ArrayList<>();
                for (int i = 0; i < PER_CLIENT; i++) {
                    String id = String.format("urn:ngsi-ld:ContextSourceRegistration:c%02d-%02d", k, i);
                    HttpResponse<String> c = http.postJson("/csourceRegistrations", registration(id, null, null),
                            "NGSILD-Tenant", tenant);
                    assertEquals(201, c.statusCode(), c.body());
                    HttpResponse<String> u = http.send("PATCH", "/csourceRegistrations/" + id, "application/json",
                            "{\"registrationName\": \"r" + i + "\"}", "NGSILD-Tenant", tenant);
                    assertEquals(204, u.statusCode(), u.body());
                    if (i % 3 == 0) {
                        HttpResponse<String> d = http.send("DELETE", "/csourceRegistrations/" + id, null, null,
                                "NGSILD-Tenant", tenant);
                        assertEquals(204, d.statusCode(), d.body());
                    } else {
                        kept.add(id);
                    }
                }
                return kept;
            });
        } finally {
            done.set(true);
            for (Thread t : readers) {
                t.join(10_000);
            }
        }
        assertTrue(problems.isEmpty(), () -> problems.size() + " inconsistent lookups, the first: " + problems.peek());
        assertTrue(lookups.get() > 0);
        Set<String> expected = new TreeSet<>();
        survivors.forEach(expected::addAll);
        List<String> found = regs.matching(tenant, want, System.currentTimeMillis()).stream().map(Registration::id).toList();
        assertEquals(List.copyOf(expected), found);
        assertEquals(CLIENTS * (PER_CLIENT - PER_CLIENT / 3), found.size());
        for (String id : found) {
            assertTrue(regs.get(tenant, id).definition().document().has("registrationName"), id + " has its update");
        }
    }

    @Test
    void ofSixteenExclusiveRegistrationsOfOneAttributeExactlyOneIsAccepted() throws Exception {
        String tenant = "exclusive";
        List<Integer> statuses = BrokerConcurrencyTest.inParallel(CLIENTS, k -> http.postJson("/csourceRegistrations",
                registration("urn:ngsi-ld:ContextSourceRegistration:x" + k, "exclusive", "urn:ngsi-ld:Car:9"),
                "NGSILD-Tenant", tenant).statusCode());
        assertEquals(1, statuses.stream().filter(s -> s == 201).count(), statuses.toString());
        assertEquals(CLIENTS - 1, statuses.stream().filter(s -> s == 409).count(), statuses.toString());
    }
}
