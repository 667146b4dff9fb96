package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cor.ngsild.KeepAliveHttp;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar cor-server.jar} with its default store - durable, in {@code ./cor-data} -
 * killed with {@code kill -9} in the middle of 16 parallel writers doing creates, updates,
 * deletes and batch upserts, then started again: every write that was acknowledged is there,
 * and no entity shows half of a batch; tenants and hosted {@code @context}s written before are
 * there too. Repeated at random moments ({@code -Dcor.kill.seed=N}
 * repeats a run, {@code -Dcor.kill.rounds=N} makes it longer); then snapshots under the same
 * load and one more kill: the state after the restart is the state before. {@code --check-data}
 * of the jar agrees with the start on a torn tail and on a flipped bit.
 */
@Tag("process")
class DurableProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int WRITERS = 16;
    private static final int SINGLES = 6;
    private static final int BATCH = 4;

    private final KeepAliveHttp http = new KeepAliveHttp();

    private HttpResponse<String> send(ServerProcess s, String method, String path, String body) throws Exception {
        return send(s, method, path, body, null);
    }

    private HttpResponse<String> send(ServerProcess s, String method, String path, String body, String tenant)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(s.uri("/ngsi-ld/v1" + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (tenant != null) {
            b.header("NGSILD-Tenant", tenant);
        }
        return http.sendString(b.build());
    }

    /** What is written once, before the first kill, beside the writers' entities: tenants and hosted @contexts. */
    private record Kept(String contextPath, String contextBody, String removedContextPath) {
    }

    /**
     * A hosted {@code @context} (and one created and deleted), an entity in tenant {@code t-kept},
     * and tenant {@code t-emptied} whose one entity was deleted: all acknowledged.
     */
    private Kept keep(ServerProcess s) throws Exception {
        HttpResponse<String> c = send(s, "POST", "/jsonldContexts", "{\"@context\": {\"kept\": \"urn:x:kept\"}}");
        assertEquals(201, c.statusCode(), c.body());
        String path = c.headers().firstValue("Location").orElseThrow();
        path = path.substring(path.indexOf("/jsonldContexts/"));
        HttpResponse<String> body = send(s, "GET", path, null);
        assertEquals(200, body.statusCode(), body.body());
        HttpResponse<String> gone = send(s, "POST", "/jsonldContexts", "{\"@context\": {\"gone\": \"urn:x:gone\"}}");
        assertEquals(201, gone.statusCode(), gone.body());
        String gonePath = gone.headers().firstValue("Location").orElseThrow();
        gonePath = gonePath.substring(gonePath.indexOf("/jsonldContexts/"));
        assertEquals(204, send(s, "DELETE", gonePath, null).statusCode());
        assertEquals(201, send(s, "POST", "/entities", single("urn:ngsi-ld:K:tenant", 7), "t-kept").statusCode());
        assertEquals(201, send(s, "POST", "/entities", single("urn:ngsi-ld:K:emptied", 8), "t-emptied").statusCode());
        assertEquals(204, send(s, "DELETE", "/entities/urn:ngsi-ld:K:emptied", null, "t-emptied").statusCode());
        return new Kept(path, body.body(), gonePath);
    }

    private void checkKept(ServerProcess s, Kept kept) throws Exception {
        HttpResponse<String> c = send(s, "GET", kept.contextPath(), null);
        assertEquals(200, c.statusCode(), "the hosted @context survives: " + c.body());
        assertEquals(kept.contextBody(), c.body());
        assertEquals(404, send(s, "GET", kept.removedContextPath(), null).statusCode(), "a deleted @context stays deleted");
        HttpResponse<String> e = send(s, "GET", "/entities/urn:ngsi-ld:K:tenant?options=keyValues", null, "t-kept");
        assertEquals(200, e.statusCode(), "the tenant's entity survives: " + e.body());
        assertEquals(7, JSON.readTree(e.body()).get("v").asInt());
        HttpResponse<String> emptied = send(s, "GET", "/entities?type=K", null, "t-emptied");
        assertEquals(200, emptied.statusCode(), "an emptied tenant still exists: " + emptied.body());
        assertEquals("[]", emptied.body());
        assertEquals(404, send(s, "GET", "/entities?type=K", null, "t-never").statusCode(), "a tenant never written is not there");
    }

    // ---------------------------------------------------------------- what the writers know

    /**
     * One entity as the writers know it: {@code null} absent; else its {@code v} (a single entity)
     * or its {@code b} (a batch entity, whose two attributes b1 and b2 are written together).
     */
    private record Known(Integer value) {
        static final Known ABSENT = new Known(null);
    }

    /** A writer's entities: what was acknowledged last, and what its one request in flight would make of them. */
    private static final class Writer {
        final int w;
        final Map<String, Known> acked = new HashMap<>();
        final Map<String, Known> inFlight = new HashMap<>();
        int counter;
        long acks;

        Writer(int w) {
            this.w = w;
            for (String id : ids()) {
                acked.put(id, Known.ABSENT);
            }
        }

        List<String> ids() {
            List<String> l = new ArrayList<>();
            for (int j = 0; j < SINGLES; j++) {
                l.add("urn:ngsi-ld:K:" + w + "-s" + j);
            }
            for (int k = 0; k < BATCH; k++) {
                l.add("urn:ngsi-ld:K:" + w + "-b" + k);
            }
            return l;
        }
    }

    private static String single(String id, int v) {
        return "{\"id\": \"" + id + "\", \"type\": \"K\", \"v\": {\"type\": \"Property\", \"value\": " + v + "}}";
    }

    private static String batchItem(String id, int b) {
        return "{\"id\": \"" + id + "\", \"type\": \"K\", \"b1\": {\"type\": \"Property\", \"value\": " + b
                + "}, \"b2\": {\"type\": \"Property\", \"value\": " + b + "}}";
    }

    /**
     * Writes until told to stop or the server is gone: one request at a time, each recorded as in
     * flight before it is sent and as acknowledged when its answer says so.
     */
    private void write(ServerProcess s, Writer x, Random rnd, AtomicBoolean stop, Set<String> surprises) {
        while (!stop.get()) {
            int v = ++x.counter;
            x.inFlight.clear();
            String method;
            String path;
            String body;
            int expected;
            int op = rnd.nextInt(10);
            if (op < 3) { // a batch upsert of the writer's batch entities: each gets b1 = b2 = v
                StringBuilder sb = new StringBuilder("[");
                for (int k = 0; k < BATCH; k++) {
                    String id = "urn:ngsi-ld:K:" + x.w + "-b" + k;
                    sb.append(k == 0 ? "" : ",").append(batchItem(id, v));
                    x.inFlight.put(id, new Known(v));
                }
                method = "POST";
                path = "/entityOperations/upsert";
                body = sb + "]";
                expected = -1; // 201 or 204
            } else {
                String id = "urn:ngsi-ld:K:" + x.w + "-s" + rnd.nextInt(SINGLES);
                boolean exists = x.acked.get(id).value() != null;
                if (!exists) {
                    method = "POST";
                    path = "/entities";
                    body = single(id, v);
                    expected = 201;
                    x.inFlight.put(id, new Known(v));
                } else if (op < 9) {
                    method = "PATCH";
                    path = "/entities/" + id + "/attrs";
                    body = "{\"v\": {\"type\": \"Property\", \"value\": " + v + "}}";
                    expected = 204;
                    x.inFlight.put(id, new Known(v));
                } else {
                    method = "DELETE";
                    path = "/entities/" + id;
                    body = null;
                    expected = 204;
                    x.inFlight.put(id, Known.ABSENT);
                }
            }
            HttpResponse<String> r;
            try {
                r = send(s, method, path, body);
            } catch (Exception gone) {
                return; // killed: this one stays in flight
            }
            if (r.statusCode() == expected || (expected == -1 && (r.statusCode() == 201 || r.statusCode() == 204))) {
                x.acked.putAll(x.inFlight);
                x.inFlight.clear();
                x.acks++;
            } else {
                surprises.add(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
                x.inFlight.clear();
                return;
            }
        }
    }

    /** Every K entity the broker holds now: id to what it shows. Checks that no entity shows half a batch. */
    private Map<String, Known> holds(ServerProcess s) throws Exception {
        HttpResponse<String> r = send(s, "GET", "/entities?type=K&options=keyValues&limit=1000", null);
        assertEquals(200, r.statusCode(), r.body());
        Map<String, Known> out = new HashMap<>();
        for (JsonNode e : JSON.readTree(r.body())) {
            String id = e.get("id").asText();
            if (e.has("b1") || e.has("b2")) {
                assertTrue(e.has("b1") && e.has("b2") && e.get("b1").asInt() == e.get("b2").asInt(),
                        "an entity shows half of a batch: " + e);
                out.put(id, new Known(e.get("b1").asInt()));
            } else {
                out.put(id, new Known(e.get("v").asInt()));
            }
        }
        return out;
    }

    /** Every acknowledged write is there: each entity shows what was acknowledged, or its request in flight. */
    private void checkRecovered(ServerProcess s, List<Writer> writers, long seed, int round) throws Exception {
        Map<String, Known> now = holds(s);
        for (Writer x : writers) {
            for (String id : x.ids()) {
                Known found = now.getOrDefault(id, Known.ABSENT);
                Known acked = x.acked.get(id);
                Known inFlight = x.inFlight.get(id);
                assertTrue(found.equals(acked) || found.equals(inFlight), "seed " + seed + ", after kill " + round + ": "
                        + id + " shows " + found + "; acknowledged " + acked + ", in flight " + inFlight);
                x.acked.put(id, found); // what the next round starts from
            }
            x.inFlight.clear();
        }
    }

    private void runWriters(ServerProcess s, List<Writer> writers, Random rnd, AtomicBoolean stop, Set<String> surprises,
            List<Thread> threads) {
        for (Writer x : writers) {
            Random own = new Random(rnd.nextLong());
            threads.add(Thread.ofPlatform().name("writer-" + x.w).start(() -> write(s, x, own, stop, surprises)));
        }
    }

    @Test
    void killedUnderSixteenWritersItLosesNoAcknowledgedWriteAndNoEntityShowsHalfABatch(@TempDir Path work) throws Exception {
        long seed = Long.getLong("cor.kill.seed", System.nanoTime());
        int rounds = Integer.getInteger("cor.kill.rounds", 4);
        System.out.println("DurableProcessTest: kill -9 at random moments, seed " + seed + ", " + rounds
                + " rounds (-Dcor.kill.seed=" + seed + " repeats it)");
        Random rnd = new Random(seed);
        List<Writer> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            writers.add(new Writer(w));
        }
        Set<String> surprises = ConcurrentHashMap.newKeySet();
        long acks = 0;
        Kept kept = null;
        for (int round = 1; round <= rounds; round++) {
            // the default store: durable, in ./cor-data of the working directory; snapshots now and
            // then; now and then --fsync interval=5, whose answer waits for the write to the OS
            // (not the fsync): a kill -9 must not lose what it acknowledged either
            List<String> flags = new ArrayList<>(List.of("--httpLoops", "2"));
            if (rnd.nextBoolean()) {
                flags.addAll(List.of("--snapshotEvery", "64k"));
            }
            if (rnd.nextInt(3) == 0) {
                flags.addAll(List.of("--fsync", "interval=5"));
            }
            try (ServerProcess s = ServerProcess.start(work, flags.toArray(String[]::new))) {
                if (round > 1) {
                    checkRecovered(s, writers, seed, round - 1);
                    checkKept(s, kept);
                } else {
                    kept = keep(s);
                }
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> threads = new ArrayList<>();
                runWriters(s, writers, rnd, stop, surprises, threads);
                long killAfter = 300 + rnd.nextInt(1_500);
                Thread.sleep(killAfter);
                s.process.destroyForcibly(); // SIGKILL
                assertTrue(s.process.waitFor(10, TimeUnit.SECONDS));
                for (Thread t : threads) {
                    t.join(30_000);
                    assertFalse(t.isAlive());
                }
                assertEquals(Set.of(), surprises, "seed " + seed);
                long total = writers.stream().mapToLong(x -> x.acks).sum();
                System.out.println("DurableProcessTest: round " + round + " " + flags + ": killed after " + killAfter
                        + " ms, " + (total - acks) + " acknowledged writes");
                acks = total;
            }
        }
        assertTrue(Files.isDirectory(work.resolve("cor-data")), "the default data directory is ./cor-data");
        try (ServerProcess s = ServerProcess.start(work)) {
            checkRecovered(s, writers, seed, rounds);
            checkKept(s, kept);
        }
        assertTrue(acks > 100, "the writers wrote: " + acks);
        ServerProcess check = ServerProcess.runToEnd(work, "--check-data", "cor-data");
        assertEquals(0, check.process.exitValue(), check.toString());
        assertTrue(check.stdout().contains("OK: "), check.toString());
        check.close();
    }

    @Test
    void theStateAfterSnapshotsUnderLoadAndAKillIsTheStateBefore(@TempDir Path work) throws Exception {
        long seed = Long.getLong("cor.kill.seed", System.nanoTime());
        Random rnd = new Random(seed);
        List<Writer> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            writers.add(new Writer(w));
        }
        Set<String> surprises = ConcurrentHashMap.newKeySet();
        Path data = work.resolve("data");
        String before;
        try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString(), "--snapshotEvery", "64k")) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            runWriters(s, writers, rnd, stop, surprises, threads);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (metric(s, "cor_store_snapshots_total") < 3) {
                assertTrue(System.nanoTime() < deadline, "three snapshots under the load within 60 s");
                Thread.sleep(50);
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
            }
            assertEquals(Set.of(), surprises, "seed " + seed);
            before = everything(s);
            s.process.destroyForcibly();
            assertTrue(s.process.waitFor(10, TimeUnit.SECONDS));
        }
        try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString())) {
            assertEquals(before, everything(s), "seed " + seed);
            assertTrue(metric(s, "cor_store_snapshot_seq") > 0, "recovered from a snapshot");
            for (int i = 0; i < 10; i++) { // records after the snapshot, for the damage below
                assertEquals(201, send(s, "POST", "/entities", single("urn:ngsi-ld:K:after-" + i, i)).statusCode());
            }
        } // closed with kill -9
        damagedDataIsRefusedAndCheckDataAgrees(work, data);
    }

    /** All K entities with their system times, in id order. */
    private String everything(ServerProcess s) throws Exception {
        HttpResponse<String> r = send(s, "GET", "/entities?type=K&options=sysAttrs&limit=1000", null);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().length() > 1_000, r.body());
        return r.body();
    }

    private long metric(ServerProcess s, String name) throws Exception {
        HttpResponse<String> r = http.sendString(HttpRequest.newBuilder(s.uri("/metrics")).timeout(Duration.ofSeconds(10)).build());
        return (long) PromText.parse(r.body()).value(name);
    }

    /**
     * On copies of a killed directory: the journal's last record cut in two starts (and
     * {@code --check-data} says it truncates it); a bit flipped in a record before it refuses to
     * start, naming the file and the offset, and {@code --check-data} says the same and exits 1.
     */
    private void damagedDataIsRefusedAndCheckDataAgrees(Path work, Path data) throws Exception {
        Path seg;
        try (Stream<Path> files = Files.list(data)) {
            seg = files.filter(p -> p.getFileName().toString().startsWith("journal-")).sorted()
                    .reduce((a, b) -> b).orElseThrow();
        }
        List<Long> offsets = recordOffsets(seg);
        assertTrue(offsets.size() > 3, "records in " + seg + ": " + offsets);

        Path torn = copy(data, work.resolve("torn"));
        long last = offsets.get(offsets.size() - 2);
        truncate(torn.resolve(seg.getFileName()), last + (offsets.get(offsets.size() - 1) - last) / 2);
        try (ServerProcess check = ServerProcess.runToEnd(work, "--check-data", torn.toString())) {
            assertEquals(0, check.process.exitValue(), check.toString());
            assertTrue(check.stdout().contains("a torn record at offset " + last), check.toString());
        }
        try (ServerProcess s = ServerProcess.start(work, "--dataDir", torn.toString())) {
            assertEquals(200, send(s, "GET", "/entities?type=K&limit=1", null).statusCode());
        }

        Path flipped = copy(data, work.resolve("flipped"));
        long victim = offsets.get(offsets.size() / 2);
        Path victimFile = flipped.resolve(seg.getFileName());
        byte[] b = Files.readAllBytes(victimFile);
        b[(int) victim + 20] ^= 0x10;
        Files.write(victimFile, b);
        String where = victimFile + ": damaged at offset " + victim + ": ";
        try (ServerProcess start = ServerProcess.runToEnd(work, "--host", "127.0.0.1", "--port", "0", "--dataDir",
                flipped.toString())) {
            assertEquals(1, start.process.exitValue(), start.toString());
            assertTrue(start.stderr().startsWith("cor-server: " + where), start.toString());
        }
        try (ServerProcess check = ServerProcess.runToEnd(work, "--check-data", flipped.toString())) {
            assertEquals(1, check.process.exitValue(), check.toString());
            assertTrue(check.stderr().startsWith("DAMAGED: " + where), check.toString());
        }
    }

    /** Where each record of a segment begins (after the 32-byte header: u32 length, u32 CRC, body), and its end. */
    private static List<Long> recordOffsets(Path file) throws IOException {
        byte[] b = Files.readAllBytes(file);
        List<Long> out = new ArrayList<>();
        int at = 32;
        while (at + 8 <= b.length) {
            out.add((long) at);
            at += 8 + ByteBuffer.wrap(b, at, 4).getInt();
        }
        out.add((long) at);
        return out;
    }

    private static Path copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                if (!p.getFileName().toString().endsWith(".lock")) {
                    Files.copy(p, to.resolve(p.getFileName()));
                }
            }
        }
        return to;
    }

    private static void truncate(Path file, long size) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }

    /**
     * A subscription (and a periodic one) created and acknowledged, then {@code kill -9}: after
     * the restart it is there as it was retrieved before, a write reaches the receiver in the
     * same notification as before the kill, and the periodic one ticks again.
     */
    @Test
    void aSubscriptionSurvivesKillDashNine(@TempDir Path work) throws Exception {
        java.util.concurrent.LinkedBlockingQueue<String[]> received = new java.util.concurrent.LinkedBlockingQueue<>();
        com.sun.net.httpserver.HttpServer receiver = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 16);
        receiver.createContext("/", ex -> {
            received.add(new String[] {ex.getRequestURI().getPath(), new String(ex.getRequestBody().readAllBytes(),
                    java.nio.charset.StandardCharsets.UTF_8)});
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        receiver.start();
        String endpoint = "http://127.0.0.1:" + receiver.getAddress().getPort();
        Path data = work.resolve("data");
        String sub = "urn:ngsi-ld:Subscription:kept";
        try {
            String definition;
            String notified;
            try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString())) {
                assertEquals(201, send(s, "POST", "/subscriptions", "{\"id\": \"" + sub + "\", \"type\": \"Subscription\","
                        + " \"entities\": [{\"type\": \"Room\"}], \"notification\": {\"format\": \"keyValues\","
                        + " \"attributes\": [\"temperature\"], \"endpoint\": {\"uri\": \"" + endpoint + "/kept\"}}}").statusCode());
                assertEquals(201, send(s, "POST", "/subscriptions", "{\"type\": \"Subscription\", \"timeInterval\": 0.5,"
                        + " \"entities\": [{\"type\": \"Room\"}], \"notification\": {\"endpoint\": {\"uri\": \""
                        + endpoint + "/tick\"}}}").statusCode());
                assertEquals(201, send(s, "POST", "/entities", room(21)).statusCode());
                notified = next(received, "/kept");
                definition = definition(s, sub);
                s.process.destroyForcibly();
                assertTrue(s.process.waitFor(10, TimeUnit.SECONDS));
            }
            received.clear();
            try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString())) {
                next(received, "/tick"); // before any request to the broker: it ticks on the server's loops
                assertEquals(definition, definition(s, sub));
                assertEquals(204, send(s, "DELETE", "/entities/urn:ngsi-ld:Room:1", null).statusCode());
                assertEquals(201, send(s, "POST", "/entities", room(21)).statusCode());
                assertEquals(notified, next(received, "/kept"));
            }
        } finally {
            receiver.stop(0);
        }
    }

    private static String room(int t) {
        return "{\"id\": \"urn:ngsi-ld:Room:1\", \"type\": \"Room\", \"temperature\": {\"type\": \"Property\", \"value\": "
                + t + "}, \"pressure\": {\"type\": \"Property\", \"value\": 1}}";
    }

    /** The body of the next notification to {@code path} (others are skipped), without its id and time. */
    private static String next(java.util.concurrent.BlockingQueue<String[]> q, String path) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            String[] n = q.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertTrue(n != null, "a notification to " + path + " within 20 s");
            if (n[0].equals(path)) {
                com.fasterxml.jackson.databind.node.ObjectNode body = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(n[1]);
                body.remove("id");
                body.remove("notifiedAt");
                return body.toString();
            }
        }
    }

    /** The subscription as retrieved, without its notification counters (a crash keeps them as of its last change). */
    private String definition(ServerProcess s, String id) throws Exception {
        HttpResponse<String> r = send(s, "GET", "/subscriptions/" + id, null);
        assertEquals(200, r.statusCode(), r.body());
        com.fasterxml.jackson.databind.node.ObjectNode sub = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(r.body());
        ((com.fasterxml.jackson.databind.node.ObjectNode) sub.get("notification")).remove(
                List.of("timesSent", "timesFailed", "lastNotification", "lastSuccess", "lastFailure"));
        return sub.toString();
    }
}
