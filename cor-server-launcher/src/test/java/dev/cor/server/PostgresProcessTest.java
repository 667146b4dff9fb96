package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

import dev.cor.ngsild.store.postgres.PostgresCluster;

/**
 * Brokers as operators run them over one PostgreSQL (issue: PostgreSQL): launcher processes with
 * {@code --store postgres} on one real cluster, which the tests also stop, restart and outlive.
 * What one broker acknowledged, every other reads at once; a subscription made on one notifies
 * once per matching write, whichever broker took the write; a periodic one notifies once per period
 * for the whole group; the database restarted under 16 writers loses nothing acknowledged and the
 * brokers recover by themselves; a broker killed with -9 loses nothing it acknowledged.
 */
@Tag("process")
class PostgresProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private static PostgresCluster cluster;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = PostgresCluster.start(dir);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A fresh database and {@code n} brokers over it. */
    private static List<ServerProcess> brokers(int n, String... flags) throws Exception {
        String db = cluster.createDatabase("cor_process_" + DATABASES.incrementAndGet());
        List<ServerProcess> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<String> f = new ArrayList<>(List.of("--store", "postgres", "--db", db, "--httpLoops", "1"));
            f.addAll(List.of(flags));
            all.add(ServerProcess.start(f.toArray(String[]::new)));
        }
        return all;
    }

    private static void closeAll(List<ServerProcess> brokers) throws Exception {
        for (ServerProcess b : brokers) {
            b.close();
        }
    }

    private static String room(String id, int t) {
        return "{\"id\":\"" + id + "\",\"type\":\"Room\",\"temperature\":{\"type\":\"Property\",\"value\":" + t + "}}";
    }

    private static String temperature(int t) {
        return "{\"temperature\":{\"type\":\"Property\",\"value\":" + t + "}}";
    }

    /** A notification endpoint on 127.0.0.1: every body it was sent, in arrival order, with the time it came. */
    private static final class Receiver implements AutoCloseable {
        final HttpServer server;
        final List<JsonNode> bodies = new CopyOnWriteArrayList<>();
        final List<Long> arrivals = new CopyOnWriteArrayList<>();

        Receiver() throws Exception {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            server.createContext("/notify", x -> {
                byte[] b = x.getRequestBody().readAllBytes();
                bodies.add(JSON.readTree(new String(b, StandardCharsets.UTF_8)));
                arrivals.add(System.nanoTime());
                x.sendResponseHeaders(204, -1);
                x.close();
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/notify";
        }

        /** Waits until {@code n} notifications came (at most 30 s), then returns them all. */
        List<JsonNode> await(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (bodies.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            return List.copyOf(bodies);
        }

        /** How many entities the notifications carried (a notification may carry several writes' entities). */
        int entities() {
            int n = 0;
            for (JsonNode b : bodies) {
                n += b.get("data").size();
            }
            return n;
        }

        /** Waits until the notifications carried {@code n} entities (at most 30 s). */
        void awaitEntities(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (entities() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    @Test
    void aWriteAcknowledgedByOneBrokerIsReadByTheOtherAtOnce() throws Exception {
        List<ServerProcess> b = brokers(2);
        try {
            for (int i = 0; i < 50; i++) {
                String id = "urn:ngsi-ld:Room:ryw" + i;
                ServerProcess writer = b.get(i % 2);
                ServerProcess reader = b.get((i + 1) % 2);
                assertEquals(201, writer.send("POST", "/ngsi-ld/v1/entities", room(id, i)).statusCode());
                HttpResponse<String> r = reader.send("GET", "/ngsi-ld/v1/entities/" + id + "?options=keyValues", null);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(i, JSON.readTree(r.body()).get("temperature").asInt());
                assertEquals(204, reader.send("PATCH", "/ngsi-ld/v1/entities/" + id + "/attrs", temperature(i + 1000)).statusCode());
                r = writer.send("GET", "/ngsi-ld/v1/entities/" + id + "?options=keyValues", null);
                assertEquals(i + 1000, JSON.readTree(r.body()).get("temperature").asInt(), "the other's PATCH, read back at once");
            }
            // a tenant made on one broker exists on the other, and so does a hosted @context
            assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/entities", room("urn:ngsi-ld:Room:t", 1), "NGSILD-Tenant",
                    "t-one").statusCode());
            assertEquals(200, b.get(1).send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:t", null, "NGSILD-Tenant", "t-one")
                    .statusCode());
            HttpResponse<String> c = b.get(1).send("POST", "/ngsi-ld/v1/jsonldContexts", "{\"@context\":{\"kept\":\"urn:x:kept\"}}");
            assertEquals(201, c.statusCode(), c.body());
            String path = c.headers().firstValue("Location").orElseThrow();
            path = path.substring(path.indexOf("/ngsi-ld/v1/jsonldContexts/"));
            String hostedPath = path;
            awaitStatus(b.get(0), hostedPath, 200);
            assertEquals(204, b.get(0).send("DELETE", hostedPath, null).statusCode());
            awaitStatus(b.get(1), hostedPath, 404);
            // a registration made on one is read on the other at once, and removed there for both
            String reg = "{\"id\":\"urn:ngsi-ld:ContextSourceRegistration:lamps\",\"type\":\"ContextSourceRegistration\","
                    + "\"information\":[{\"entities\":[{\"type\":\"Lamp\"}]}],\"endpoint\":\"http://127.0.0.1:9\"}";
            assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/csourceRegistrations", reg).statusCode());
            String regPath = "/ngsi-ld/v1/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:lamps";
            assertEquals(200, b.get(1).send("GET", regPath, null).statusCode());
            assertEquals(409, b.get(1).send("POST", "/ngsi-ld/v1/csourceRegistrations", reg).statusCode(),
                    "its id is taken on every broker");
            assertEquals(204, b.get(1).send("DELETE", regPath, null).statusCode());
            awaitStatus(b.get(0), regPath, 404);
        } finally {
            closeAll(b);
        }
    }

    /** A hosted context reaches the other brokers with its NOTIFY: a few milliseconds. */
    private static void awaitStatus(ServerProcess s, String path, int status) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int got;
        do {
            got = s.send("GET", path, null).statusCode();
        } while (got != status && System.nanoTime() < deadline);
        assertEquals(status, got, path + " on " + s.uri("/"));
    }

    @Test
    void aSubscriptionMadeOnOneBrokerNotifiesOncePerWriteWhicheverBrokerWrites() throws Exception {
        List<ServerProcess> b = brokers(3);
        try (Receiver rx = new Receiver()) {
            String sub = "{\"id\":\"urn:ngsi-ld:Subscription:each\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"Room\"}],"
                    + "\"notification\":{\"attributes\":[\"temperature\"],\"format\":\"keyValues\",\"endpoint\":{\"uri\":\""
                    + rx.url() + "\"}}}";
            assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/subscriptions", sub).statusCode());
            for (ServerProcess s : b) { // found at once on every broker (read again from the database on a miss)
                assertEquals(200, s.send("GET", "/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:each", null).statusCode());
            }
            int writes = 60;
            List<Thread> writers = new ArrayList<>();
            AtomicInteger failures = new AtomicInteger();
            for (int w = 0; w < 3; w++) {
                int writer = w;
                writers.add(Thread.ofPlatform().start(() -> {
                    try {
                        String id = "urn:ngsi-ld:Room:n" + writer;
                        ServerProcess s = b.get(writer);
                        if (s.send("POST", "/ngsi-ld/v1/entities", room(id, 0)).statusCode() != 201) {
                            failures.incrementAndGet();
                        }
                        for (int v = 1; v < writes / 3; v++) {
                            if (s.send("PATCH", "/ngsi-ld/v1/entities/" + id + "/attrs", temperature(v)).statusCode() != 204) {
                                failures.incrementAndGet();
                            }
                        }
                    } catch (Exception e) {
                        failures.incrementAndGet();
                    }
                }));
            }
            for (Thread t : writers) {
                t.join(TimeUnit.MINUTES.toMillis(2));
            }
            assertEquals(0, failures.get());
            rx.awaitEntities(writes);
            List<JsonNode> got = List.copyOf(rx.bodies);
            // every (entity, value) exactly once: no broker missed one, none sent another's
            Map<String, Integer> seen = new ConcurrentHashMap<>();
            for (JsonNode n : got) {
                for (JsonNode e : n.get("data")) {
                    seen.merge(e.get("id").asText() + "=" + e.get("temperature").asInt(), 1, Integer::sum);
                }
            }
            assertEquals(writes, seen.size(), "one notification per write: " + seen);
            assertTrue(seen.values().stream().allMatch(k -> k == 1), "none twice: " + seen);
            // nothing more comes: a broker that sent another's would have by now (the others' answers all came)
            ServerProcess last = b.get(2);
            assertEquals(204, last.send("PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:n2/attrs", temperature(999)).statusCode());
            rx.awaitEntities(writes + 1);
            assertEquals(writes + 1, rx.entities(), "the write after the others: one more, and only it");
        } finally {
            closeAll(b);
        }
    }

    @Test
    void eachBrokerHasItsOwnMetricsAndReportsTheDatabase() throws Exception {
        List<ServerProcess> b = brokers(2);
        try {
            for (int i = 0; i < 7; i++) {
                assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/entities", room("urn:ngsi-ld:Room:m" + i, i)).statusCode());
            }
            assertEquals(204, b.get(1).send("PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:m0/attrs", temperature(9)).statusCode());
            // /metrics is answered on the loop: the entity count is the one last read, read again behind the scrape
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            double entities;
            do {
                entities = b.get(0).metrics().valueOrZero("cor_ngsild_entities{tenant=\"\"}");
            } while (entities != 7 && System.nanoTime() < deadline);
            assertEquals(7, entities, "the entities in the database, as the gauge reads them");
            PromText first = b.get(0).metrics();
            PromText second = b.get(1).metrics();
            assertEquals(1, first.value("cor_db_ready"));
            assertEquals(1, second.value("cor_db_ready"));
            assertEquals(7, first.valueOrZero("cor_ngsild_requests_total{operation=\"createEntity\",status=\"201\"}"),
                    "each broker counts what it served");
            assertEquals(0, second.valueOrZero("cor_ngsild_requests_total{operation=\"createEntity\",status=\"201\"}"));
            assertTrue(first.value("cor_db_connections") >= 1);
        } finally {
            closeAll(b);
        }
    }

    @Test
    void aWriteRightAfterASubscriptionMadeOnAnotherBrokerIsNotified() throws Exception {
        List<ServerProcess> b = brokers(2);
        try (Receiver rx = new Receiver()) {
            int rounds = 30;
            for (int i = 0; i < rounds; i++) {
                // a type of its own per round: only that round's subscription matches that round's write
                String sub = "{\"id\":\"urn:ngsi-ld:Subscription:now" + i + "\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"Now"
                        + i + "\"}],\"notification\":{\"endpoint\":{\"uri\":\"" + rx.url() + "\"}}}";
                assertEquals(201, b.get(i % 2).send("POST", "/ngsi-ld/v1/subscriptions", sub).statusCode());
                // at once, on the other broker: no read of the subscription there first
                String e = "{\"id\":\"urn:ngsi-ld:Now:" + i + "\",\"type\":\"Now" + i + "\",\"v\":{\"type\":\"Property\",\"value\":" + i + "}}";
                assertEquals(201, b.get((i + 1) % 2).send("POST", "/ngsi-ld/v1/entities", e).statusCode());
            }
            rx.awaitEntities(rounds);
            Map<String, Integer> bySubscription = new ConcurrentHashMap<>();
            for (JsonNode n : rx.bodies) {
                bySubscription.merge(n.get("subscriptionId").asText(), n.get("data").size(), Integer::sum);
            }
            assertEquals(rounds, bySubscription.size(), "every round's write notified its subscription: " + bySubscription);
            assertTrue(bySubscription.values().stream().allMatch(k -> k == 1), "once each: " + bySubscription);
        } finally {
            closeAll(b);
        }
    }

    @Test
    void aPeriodicSubscriptionNotifiesOncePerPeriodForTheWholeGroup() throws Exception {
        List<ServerProcess> b = brokers(3);
        try (Receiver rx = new Receiver()) {
            assertEquals(201, b.get(1).send("POST", "/ngsi-ld/v1/entities", room("urn:ngsi-ld:Room:p", 5)).statusCode());
            String sub = "{\"id\":\"urn:ngsi-ld:Subscription:periodic\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"Room\"}],"
                    + "\"timeInterval\":1,\"notification\":{\"endpoint\":{\"uri\":\"" + rx.url() + "\"}}}";
            assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/subscriptions", sub).statusCode());
            for (ServerProcess s : b) {
                assertEquals(200, s.send("GET", "/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:periodic", null).statusCode());
            }
            int n = 6;
            rx.await(n);
            assertTrue(rx.arrivals.size() >= n, "periods notified: " + rx.arrivals.size());
            // three brokers tick it: without the lease three notifications a second, with it one, 0.9 s apart at least
            List<Long> at = new ArrayList<>(rx.arrivals);
            Collections.sort(at);
            for (int i = 1; i < at.size(); i++) {
                long gapMs = (at.get(i) - at.get(i - 1)) / 1_000_000;
                assertTrue(gapMs >= 700, "two notifications of one period, " + gapMs + " ms apart: " + gapMs);
            }
            // the broker that made it goes: another takes the periods over
            b.get(0).kill();
            int before = rx.bodies.size();
            rx.await(before + 3);
            assertTrue(rx.bodies.size() >= before + 3, "the periods go on without the broker that made the subscription");
        } finally {
            closeAll(b);
        }
    }

    @Test
    void theDatabaseRestartedUnder16WritersLosesNothingAcknowledgedAndTheBrokersRecover() throws Exception {
        List<ServerProcess> b = brokers(2, "--dbTimeout", "3000");
        try {
            int writers = 16;
            int[] acknowledged = new int[writers];
            int[] attempted = new int[writers];
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger unavailable = new AtomicInteger();
            AtomicInteger other = new AtomicInteger();
            List<String> slow = new CopyOnWriteArrayList<>();
            for (int w = 0; w < writers; w++) {
                assertEquals(201, b.get(w % 2).send("POST", "/ngsi-ld/v1/entities", room("urn:ngsi-ld:Room:w" + w, 0)).statusCode());
            }
            CountDownLatch going = new CountDownLatch(writers);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                threads.add(Thread.ofPlatform().start(() -> {
                    ServerProcess s = b.get(writer % 2);
                    going.countDown();
                    for (int v = 1; !stop.get(); v++) {
                        attempted[writer] = v;
                        long t0 = System.nanoTime();
                        int status;
                        try {
                            status = s.send("PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:w" + writer + "/attrs", temperature(v))
                                    .statusCode();
                        } catch (Exception e) {
                            status = -1;
                        }
                        long ms = (System.nanoTime() - t0) / 1_000_000;
                        if (ms > 3_000 + 2_000) {
                            slow.add(writer + ":" + v + " took " + ms + " ms (" + status + ")");
                        }
                        if (status == 204) {
                            acknowledged[writer] = v;
                        } else if (status == 503) {
                            unavailable.incrementAndGet();
                        } else {
                            other.incrementAndGet();
                        }
                    }
                }));
            }
            going.await();
            waitForAcknowledged(acknowledged, 20);
            cluster.stop();
            int stoppedAt = unavailable.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (unavailable.get() < stoppedAt + writers && System.nanoTime() < deadline) {
                Thread.sleep(20); // until the writers meet the stopped database
            }
            assertTrue(unavailable.get() >= stoppedAt + writers, "writes answer 503 while the database is down");
            assertEquals(503, b.get(0).send("GET", "/health/ready", null).statusCode(), "not ready without its database");
            cluster.start();
            int[] mark = acknowledged.clone();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!allPast(acknowledged, mark) && System.nanoTime() < deadline) {
                Thread.sleep(20); // every writer acknowledged again: the brokers recovered by themselves
            }
            assertTrue(allPast(acknowledged, mark), "every writer is acknowledged again after the restart");
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
            assertEquals(0, other.get(), "only 204 and 503");
            assertTrue(slow.isEmpty(), "every answer within its deadline: " + slow);
            for (ServerProcess s : b) {
                awaitStatus(s, "/health/ready", 200); // its follower connects again within a second or so
            }
            for (int w = 0; w < writers; w++) {
                for (ServerProcess s : b) {
                    HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:w" + w + "?options=keyValues", null);
                    int kept = JSON.readTree(r.body()).get("temperature").asInt();
                    // the last acknowledged value is kept; the one in flight at the end may or may not have committed
                    assertTrue(kept >= acknowledged[w] && kept <= attempted[w], "writer " + w + ": kept " + kept
                            + ", acknowledged " + acknowledged[w] + ", attempted " + attempted[w]);
                }
            }
        } finally {
            closeAll(b);
        }
    }

    private static void waitForAcknowledged(int[] acknowledged, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            boolean all = true;
            for (int a : acknowledged) {
                all &= a >= n;
            }
            if (all) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the writers did not get going");
    }

    private static boolean allPast(int[] now, int[] mark) {
        for (int i = 0; i < now.length; i++) {
            if (now[i] <= mark[i]) {
                return false;
            }
        }
        return true;
    }

    @Test
    void aBrokerKilledWithMinus9LosesNothingItAcknowledged() throws Exception {
        List<ServerProcess> b = brokers(2);
        try {
            ServerProcess victim = b.get(0);
            int n = 200;
            AtomicInteger last = new AtomicInteger();
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 1; i <= n; i++) {
                        String body = "[" + room("urn:ngsi-ld:Room:k" + i, i) + "]";
                        if (victim.send("POST", "/ngsi-ld/v1/entityOperations/upsert", body).statusCode() / 100 == 2) {
                            last.set(i);
                        }
                    }
                } catch (Exception e) {
                    // killed: the last acknowledged is what counts
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (last.get() < 50 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            victim.kill();
            writer.join(TimeUnit.SECONDS.toMillis(30));
            int acknowledged = last.get();
            assertTrue(acknowledged >= 50, "writes were acknowledged before the kill: " + acknowledged);
            for (int i = 1; i <= acknowledged; i++) {
                HttpResponse<String> r = b.get(1).send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:k" + i + "?options=keyValues", null);
                assertEquals(200, r.statusCode(), "acknowledged by the killed broker: Room:k" + i);
                assertEquals(i, JSON.readTree(r.body()).get("temperature").asInt());
            }
            // and a broker started after it finds them too
            ServerProcess again = ServerProcess.start("--store", "postgres", "--db", dbOf(b.get(1)), "--httpLoops", "1");
            b.add(again);
            assertEquals(200, again.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:k" + acknowledged, null).statusCode());
        } finally {
            closeAll(b);
        }
    }

    @Test
    void aStatementThatHangsIsCancelledAtItsDeadlineAndTheRequestAnswers503() throws Exception {
        List<ServerProcess> b = brokers(1, "--dbTimeout", "1000");
        String db = dbOf(b.get(0));
        try (java.sql.Connection holder = java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:" + cluster.port() + db.substring(db.lastIndexOf('/')) + "?user=postgres")) {
            assertEquals(201, b.get(0).send("POST", "/ngsi-ld/v1/entities", room("urn:ngsi-ld:Room:h", 1)).statusCode());
            holder.setAutoCommit(false);
            try (java.sql.Statement st = holder.createStatement()) {
                st.execute("LOCK TABLE cor_entities IN ACCESS EXCLUSIVE MODE"); // every statement on it now waits
            }
            long t0 = System.nanoTime();
            HttpResponse<String> r = b.get(0).send("PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:h/attrs", temperature(2));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(503, r.statusCode(), r.body());
            assertTrue(r.body().contains("ServiceUnavailable"), r.body());
            assertTrue(ms >= 900 && ms < 5_000, "cancelled at its 1 s deadline, not before, not much after: " + ms + " ms");
            assertEquals(200, b.get(0).send("GET", "/health/live", null).statusCode(), "the loop served on meanwhile");
            holder.rollback();
            HttpResponse<String> before = b.get(0).send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:h?options=keyValues", null);
            assertEquals(1, JSON.readTree(before.body()).get("temperature").asInt(), "the cancelled write left nothing");
            HttpResponse<String> after = b.get(0).send("PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:h/attrs", temperature(3));
            assertEquals(204, after.statusCode(), "the cancelled statement's connection serves the next request: " + after.body());
            HttpResponse<String> read = b.get(0).send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:h?options=keyValues", null);
            assertEquals(3, JSON.readTree(read.body()).get("temperature").asInt());
        } finally {
            closeAll(b);
        }
    }

    /** The {@code --db} a broker runs with, from its /version. */
    private static String dbOf(ServerProcess s) throws Exception {
        return JSON.readTree(s.send("GET", "/version", null).body()).path("flags").path("db").asText();
    }
}
