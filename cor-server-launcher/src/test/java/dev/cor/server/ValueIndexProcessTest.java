package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Value indexes through the jar (doc/broker.md, "Value indexes"): a selective q on an attribute
 * named by {@code --valueIndex} reads a hundred entities of its walk, then only the index's
 * candidates; one on an attribute without
 * an index reads every holder and says so - {@code cor_ngsild_query_scans_total} and a
 * {@code scan:N} at the end of its access line - and {@code --valueIndexAuto} gives an
 * attribute its index, built in the background, once a query needs it.
 */
@Tag("process")
class ValueIndexProcessTest {
    private static final int ENTITIES = 3_000;

    private static void load(ServerProcess s) throws Exception {
        for (int from = 0; from < ENTITIES; from += 500) {
            StringBuilder batch = new StringBuilder("[");
            for (int i = from; i < from + 500; i++) {
                batch.append(i == from ? "" : ",").append("{\"id\":\"urn:ngsi-ld:V:").append(i)
                        .append("\",\"type\":\"V\",\"speed\":{\"type\":\"Property\",\"value\":").append(i % 1000)
                        .append("},\"status\":{\"type\":\"Property\",\"value\":\"s").append(i % 1000).append("\"}}");
            }
            HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/entityOperations/create", batch.append(']').toString());
            assertEquals(201, r.statusCode(), r.body());
        }
    }

    private static HttpResponse<String> query(ServerProcess s, String q) throws Exception {
        HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/entities?type=V&limit=20&options=keyValues&q="
                + URLEncoder.encode(q, StandardCharsets.UTF_8), null);
        assertEquals(200, r.statusCode(), r.body());
        return r;
    }

    private static int ids(HttpResponse<String> r) {
        return r.body().split("\"id\"", -1).length - 1;
    }

    /**
     * The note at the end of the last access line of a query whose target holds {@code encodedQ}
     * ({@code -}: none), waited for; the access log writes a target's {@code %} as {@code %25}.
     */
    private static String note(ServerProcess s, String encodedQ) throws InterruptedException {
        Pattern line = Pattern.compile(".* GET (\\S*" + Pattern.quote(encodedQ.replace("%", "%25")) + "\\S*) 200 \\d+ \\d+(?: (\\S+))?");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            String last = null;
            for (String l : s.stdout().split("\n")) {
                Matcher m = line.matcher(l);
                if (m.matches()) {
                    last = m.group(2) == null ? "-" : m.group(2);
                }
            }
            if (last != null) {
                return last;
            }
            assertTrue(System.nanoTime() < deadline, "no access line for " + encodedQ + ": " + s);
            Thread.sleep(20);
        }
    }

    /**
     * A note of a query the index answered: it read the walk's first 4 x 21 + 16 entities (the
     * page does not fill there), then the index's candidates past them - never the 3 000.
     */
    private static void assertFromIndex(String note) {
        assertTrue(note.matches("index:\\d+") && Integer.parseInt(note.substring(6)) <= 4 * 21 + 16 + 3,
                "read the walk's first 100 and the index's candidates: " + note);
    }

    @Test
    void aDeclaredIndexAnswersItsQueryAndAQueryWithoutOneSaysItScanned() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--accessLog", "-",
                "--valueIndex", "speed", "--valueIndexAuto", "0")) {
            load(s);
            PromText before = s.metrics();
            assertTrue(before.value("cor_store_value_index_bytes") > 0, "the declared index holds the loaded values");

            assertEquals(3, ids(query(s, "speed==7")));
            PromText indexed = s.metrics();
            assertEquals(1, indexed.valueOrZero("cor_ngsild_query_value_index_total")
                    - before.valueOrZero("cor_ngsild_query_value_index_total"));
            assertEquals(0, indexed.valueOrZero("cor_ngsild_query_scans_total") - before.valueOrZero("cor_ngsild_query_scans_total"));
            assertFromIndex(note(s, "speed%3D%3D7"));

            assertEquals(3, ids(query(s, "status==\"s7\"")));
            PromText scanned = s.metrics();
            assertEquals(1, scanned.valueOrZero("cor_ngsild_query_scans_total") - before.valueOrZero("cor_ngsild_query_scans_total"));
            assertEquals("scan:" + ENTITIES, note(s, "status%3D%3D%22s7%22"), "read every entity of the type");
        }
    }

    @Test
    void anAttributeAQueryNeedsGetsItsIndexInTheBackground() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--accessLog", "-",
                "--valueIndexAuto", "1000")) {
            load(s);
            // the first query asks for the index and reads every holder meanwhile; a later one is answered from it
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int n = 0;
            while (s.metrics().valueOrZero("cor_ngsild_query_value_index_total") == 0) {
                assertEquals(3, ids(query(s, "status==\"s" + (n % 1000) + "\"")), "the answer is whole while the index is built");
                n++;
                assertTrue(System.nanoTime() < deadline, "no query was answered from an index: " + s);
                Thread.sleep(10);
            }
            PromText m = s.metrics();
            assertEquals(1, m.value("cor_store_value_index_built_total"));
            assertEquals(0, m.value("cor_store_value_index_dropped_total"));
            assertEquals(3, ids(query(s, "status==\"s999\"")));
            assertFromIndex(note(s, "status%3D%3D%22s999%22"));
        }
    }

    @Test
    void anIndexPastTheBoundIsDroppedAndItsQueriesStillAnswerWhole() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--accessLog", "-",
                "--valueIndex", "speed", "--valueIndexAuto", "0", "--valueIndexMaxBytes", "64k")) {
            load(s);
            PromText m = s.metrics();
            assertEquals(1, m.value("cor_store_value_index_dropped_total"), "3 000 values take more than 64 KiB");
            assertEquals(0, m.value("cor_store_value_index_bytes"));
            assertEquals(3, ids(query(s, "speed==7")));
            assertEquals("scan:" + ENTITIES, note(s, "speed%3D%3D7"));
            assertTrue(s.stderr().contains("value index"), "the drop is logged: " + s.stderr());
        }
    }
}
