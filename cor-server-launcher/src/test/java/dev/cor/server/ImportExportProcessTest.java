package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.store.postgres.PostgresCluster;

/**
 * An operator moves a broker's data from its data directory into PostgreSQL and back, with the
 * launcher's one-shot modes: a broker on a data directory takes writes and is stopped;
 * {@code --import} loads the directory into a fresh database and says what it copied; a broker
 * with {@code --store postgres} over it answers every read as the first one did; {@code --export}
 * writes the database into a new directory, and a broker on that one answers the same. A database
 * that holds something, a directory that is not there and an export into a directory that holds
 * something are refused, exit 1, with the reason.
 */
@Tag("process")
class ImportExportProcessTest {
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";

    @TempDir
    static Path dir;
    private static PostgresCluster cluster;

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

    private static HttpResponse<String> send(ServerProcess s, String method, String path, String body, String... headers)
            throws Exception {
        return s.send(method, "/ngsi-ld/v1" + path, body, headers);
    }

    private static void status(int expected, HttpResponse<String> r) {
        assertEquals(expected, r.statusCode(), r.body());
    }

    private static String ok(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    /** The writes; returns the Hosted context's id. */
    private static String write(ServerProcess s) throws Exception {
        status(201, send(s, "POST", "/entities", "{\"id\": \"urn:ngsi-ld:Room:1\", \"type\": \"Room\","
                + " \"temperature\": {\"type\": \"Property\", \"value\": 21, \"observedAt\": \"2024-05-01T10:00:00Z\"}}"));
        status(204, send(s, "PATCH", "/entities/urn:ngsi-ld:Room:1/attrs", "{\"temperature\": {\"type\": \"Property\","
                + " \"value\": 23, \"observedAt\": \"2024-05-01T11:00:00Z\"}}"));
        status(201, send(s, "POST", "/entities", "{\"id\": \"urn:ngsi-ld:Room:2\", \"type\": \"Room\"}", "NGSILD-Tenant", "t1"));
        status(204, send(s, "DELETE", "/entities/urn:ngsi-ld:Room:2", null, "NGSILD-Tenant", "t1"));
        HttpResponse<String> hosted = send(s, "POST", "/jsonldContexts", "{\"@context\": {\"warmth\": \"urn:x:warmth\"}}");
        status(201, hosted);
        String location = hosted.headers().firstValue("Location").orElseThrow();
        String hostedId = location.substring(location.lastIndexOf('/') + 1);
        // t2 holds a subscription alone (a tenant of the entity store it is not)
        status(201, send(s, "POST", "/subscriptions", "{\"id\": \"urn:ngsi-ld:Subscription:1\", \"type\": \"Subscription\","
                + " \"entities\": [{\"type\": \"Nowhere\"}], \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}",
                "NGSILD-Tenant", "t2"));
        status(201, send(s, "POST", "/csourceRegistrations", "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:1\","
                + " \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \"Kiln\"}]}],"
                + " \"endpoint\": \"http://127.0.0.1:9/source\"}"));
        return hostedId;
    }

    /** Every read of what {@link #write} made, a line each. */
    private static List<String> reads(ServerProcess s, String hostedId, boolean history) throws Exception {
        List<String> out = new ArrayList<>();
        out.add(ok(send(s, "GET", "/entities/urn:ngsi-ld:Room:1?options=sysAttrs", null)));
        out.add(ok(send(s, "GET", "/entities?type=Room", null, "NGSILD-Tenant", "t1"))); // the emptied tenant is one
        out.add(ok(send(s, "GET", "/jsonldContexts/" + hostedId, null)));
        out.add(ok(send(s, "GET", "/entities/urn:ngsi-ld:Room:1?options=keyValues", null, "Link",
                "<http://localhost/ngsi-ld/v1/jsonldContexts/" + hostedId + ">" + LINK)));
        out.add(ok(send(s, "GET", "/subscriptions/urn:ngsi-ld:Subscription:1?options=sysAttrs", null, "NGSILD-Tenant", "t2")));
        out.add(ok(send(s, "GET", "/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:1?options=sysAttrs", null)));
        if (history) {
            out.add(ok(send(s, "GET", "/temporal/entities/urn:ngsi-ld:Room:1?options=temporalValues", null)));
        }
        return out;
    }

    /** Stops a broker as an operator does (SIGTERM), within a deadline. */
    private static void stop(ServerProcess s) throws Exception {
        s.process.destroy();
        assertTrue(s.process.waitFor(30, TimeUnit.SECONDS), s.toString());
        s.close();
    }

    private static ServerProcess run(Path work, String... args) throws Exception {
        return ServerProcess.runToEnd(work, args);
    }

    @Test
    void importThenExportAnswersAsTheOriginal() throws Exception {
        String db = cluster.createDatabase("cor_import");
        boolean history = true; // the history goes with the rest, both ways
        String temporal = "on";
        Path work = Files.createDirectories(dir.resolve("work"));
        ServerProcess first = ServerProcess.start(work, "--temporal", temporal);
        String hostedId;
        List<String> before;
        try {
            hostedId = write(first);
            before = reads(first, hostedId, history);
        } finally {
            stop(first);
        }

        try (ServerProcess in = run(work, "--store", "postgres", "--db", db, "--import", "cor-data")) {
            assertEquals(0, in.process.exitValue(), in.toString());
            assertTrue(in.stdout().contains("cor-server: --import cor-data: copied 1 entities in 2 tenant(s) (1 empty), 1 hosted"
                    + " @context(s), 1 subscription(s), 0 subscription(s) to registrations, 1 registration(s)"), in.toString());
        }
        ServerProcess overDb = ServerProcess.start(work, "--store", "postgres", "--db", db, "--temporal", temporal);
        try {
            assertEquals(before, reads(overDb, hostedId, history), "over the database");
        } finally {
            stop(overDb);
        }

        try (ServerProcess out = run(work, "--store", "postgres", "--db", db, "--export", "exported")) {
            assertEquals(0, out.process.exitValue(), out.toString());
            assertTrue(out.stdout().contains("cor-server: --export exported: copied 1 entities"), out.toString());
        }
        ServerProcess overExport = ServerProcess.start(work, "--dataDir", "exported", "--temporal", temporal);
        try {
            assertEquals(before, reads(overExport, hostedId, history), "over the exported directory");
        } finally {
            stop(overExport);
        }

        // refused: each exits 1 and says why
        try (ServerProcess again = run(work, "--store", "postgres", "--db", db, "--import", "cor-data")) {
            assertEquals(1, again.process.exitValue(), again.toString());
            assertTrue(again.stderr().contains("cor-server: --import cor-data: refused: the target is not empty: it holds"
                    + " 1 entities in the default tenant, tenant 't1' (0 entities), 1 hosted"
                    + " @context(s), 1 subscription(s), 1 registration(s)"), again.toString());
        }
        try (ServerProcess missing = run(work, "--store", "postgres", "--db", db, "--import", "nowhere")) {
            assertEquals(1, missing.process.exitValue(), missing.toString());
            assertTrue(missing.stderr().contains("cor-server: --import nowhere: no such directory"), missing.toString());
        }
        try (ServerProcess over = run(work, "--store", "postgres", "--db", db, "--export", "exported")) {
            assertEquals(1, over.process.exitValue(), over.toString());
            assertTrue(over.stderr().contains("cor-server: --export exported: it exists and is not an empty directory"),
                    over.toString());
        }
    }
}
